package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProgramDirs: a program in a folder named in Spec.ProgramDirs runs in
// both backends and both views, and cannot change that folder; without
// the folder listed it does not exist inside the sandbox (the twin).
func TestProgramDirs(t *testing.T) {
	for _, b := range confining(t) {
		for _, mode := range []Mode{ModeReadOnly, ModeOverlay} {
			t.Run(b.Name()+"/"+mode.String(), func(t *testing.T) {
				root, bin := workspace(t), workspace(t)
				tool := filepath.Join(bin, "hello-tool")
				writeFile(t, tool, "#!/bin/sh\necho hello from $0\necho planted > \"$(dirname \"$0\")/planted\" 2>/dev/null || echo cannot-plant\n")
				if err := os.Chmod(tool, 0o755); err != nil {
					t.Fatal(err)
				}
				spec := Spec{Path: tool, Dir: root, Root: root, Mode: mode, ProgramDirs: []string{bin},
					Env: []string{"PATH=/usr/bin:/bin:" + bin}}
				res := run(t, b, spec)
				if out := string(res.Output); res.ExitCode != 0 || !strings.Contains(out, "hello from "+tool) || !strings.Contains(out, "cannot-plant") {
					t.Errorf("the program in a listed folder: exit %d, output %q; want it to run and fail to write its folder", res.ExitCode, out)
				}
				if res.Changes != nil {
					res.Changes.Close()
				}
				if _, err := os.Stat(filepath.Join(bin, "planted")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the program wrote into its read-only folder (%v)", err)
				}

				// Not listed: bwrap fails to exec it (exit 1), the landlock
				// helper reports a setup error.
				spec.ProgramDirs = nil
				res, err := b.Run(context.Background(), spec)
				if res.Changes != nil {
					res.Changes.Close()
				}
				if err == nil && res.ExitCode == 0 || strings.Contains(string(res.Output), "hello from") {
					t.Errorf("without the folder listed: exit %d, output %q, error %v; want the program not found", res.ExitCode, res.Output, err)
				}
			})
		}
	}
}

// TestProgramDirsRefused: a program folder that is relative, the file
// system's root, or overlaps the workspace root is an invalid spec.
func TestProgramDirsRefused(t *testing.T) {
	root := workspace(t)
	for _, d := range []string{"bin", "/", root, filepath.Join(root, "bin"), filepath.Dir(root), root + "/../x"} {
		_, err := normalize(Spec{Path: "/bin/true", Dir: root, Root: root, ProgramDirs: []string{d}})
		if !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("normalize(ProgramDirs %q) = %v; want ErrInvalidSpec", d, err)
		}
	}
	if _, err := normalize(Spec{Path: "/bin/true", Dir: root, Root: root, ProgramDirs: []string{workspace(t)}}); err != nil {
		t.Errorf("normalize(a folder outside the root) = %v; want it accepted", err)
	}
}
