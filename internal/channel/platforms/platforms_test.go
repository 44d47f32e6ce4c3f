package platforms

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel/chat"
)

// TestEveryPlatformIsComplete: every row of the one platform table names
// itself, its public API and (when it calls back) its callback route,
// builds an adapter that answers to its name, and has its setup in
// docs/CHANNELS.md: a platform added here is usable and documented, and
// one missing here cannot be configured.
func TestEveryPlatformIsComplete(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "CHANNELS.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range All() {
		if p.Name == "" || seen[p.Name] {
			t.Errorf("platform %q: empty or listed twice", p.Name)
		}
		seen[p.Name] = true
		if p.DefaultBase == "" || p.Title == "" {
			t.Errorf("platform %s: title %q, default base %q; want both", p.Name, p.Title, p.DefaultBase)
		}
		if p.Callback != (p.CallbackPath != "") || (p.Callback && !strings.HasPrefix(p.CallbackPath, "/callbacks/")) {
			t.Errorf("platform %s: callback %v at %q; a platform that calls back names a /callbacks/ path, and only it", p.Name, p.Callback, p.CallbackPath)
		}
		if !strings.Contains(string(doc), "[channels."+p.Name+"]") {
			t.Errorf("docs/CHANNELS.md has no [channels.%s] setup: document the platform", p.Name)
		}
		if p.New == nil {
			t.Errorf("platform %s builds no adapter", p.Name)
			continue
		}
		a, err := p.New(chat.Settings{APIBase: p.DefaultBase, AppID: "cli_test", Token: "123:token"})
		if err != nil {
			t.Errorf("platform %s: %v", p.Name, err)
			continue
		}
		if a.Platform() != p.Name {
			t.Errorf("platform %s builds an adapter for %q", p.Name, a.Platform())
		}
	}
}
