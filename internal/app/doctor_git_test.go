package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitSafetyCheck: doctor recommends safe.bareRepository = explicit when
// the owner's git config lacks it, and is satisfied when it is set.
func TestGitSafetyCheck(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
	home := t.TempDir()
	env := []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH")}
	c := gitSafetyCheck(context.Background(), env)
	if c.OK || !c.Info || !strings.Contains(c.Detail, "git config --global safe.bareRepository explicit") {
		t.Errorf("without the setting: %+v; want an informational recommendation", c)
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[safe]\n\tbareRepository = explicit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := gitSafetyCheck(context.Background(), env); !c.OK {
		t.Errorf("with the setting: %+v; want ok", c)
	}
}
