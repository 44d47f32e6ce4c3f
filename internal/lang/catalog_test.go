package lang

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/lang/langscan"
)

// catalogued are the packages (relative to the module) whose every
// user-facing string goes through the catalog.
var catalogued = []string{"cmd/homard", "internal/setup", "internal/memreview", "internal/chats", "internal/channel/tui", "internal/channel/web"}

// scripts are the web UI's scripts whose t("…") keys are catalog keys.
var scripts = []string{
	"internal/channel/web/ui/static/lang.js",
	"internal/channel/web/ui/static/app.js",
	"internal/channel/web/ui/static/tasks.js",
	"internal/channel/web/ui/static/browser.js",
	"internal/channel/web/ui/static/markdown.js",
}

// TestCatalogComplete fails when a catalogued package uses a key with no
// Chinese entry or one whose verbs differ, leaves a user-facing literal
// outside the catalog, or when the catalog holds a key no one uses or
// holds one key twice.
func TestCatalogComplete(t *testing.T) {
	root := filepath.Join("..", "..")
	used := map[string]string{}
	for _, pkg := range catalogued {
		found, err := langscan.Scan(filepath.Join(root, pkg))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range found.Loose {
			t.Errorf("%s: a user-facing literal outside the catalog (wrap it in a Printer call or lang.N, or mark an English-on-purpose line // lang:en): %s", pkg, l)
		}
		for k, at := range found.Keys {
			used[k] = pkg + "/" + at
		}
	}
	for _, js := range scripts {
		src, err := os.ReadFile(filepath.Join(root, js))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range langscan.ScanJS(string(src)) {
			used[k] = js
		}
	}
	seen := map[string]bool{}
	for _, set := range zhSets {
		for k, v := range set {
			if seen[k] {
				t.Errorf("key %q is in two parts of the catalog", k)
			}
			seen[k] = true
			if strings.TrimSpace(v) == "" {
				t.Errorf("key %q has an empty translation", k)
			}
			if !slices.Equal(langscan.Verbs(k), langscan.Verbs(v)) {
				t.Errorf("key %q: translation %q takes other arguments (%v, want %v)", k, v, langscan.Verbs(v), langscan.Verbs(k))
			}
			if _, ok := used[k]; !ok {
				t.Errorf("key %q is in the catalog but no catalogued package or script uses it", k)
			}
		}
	}
	for k, at := range used {
		if !seen[k] {
			t.Errorf("%s: key %q has no Chinese entry", at, k)
		}
	}
	t.Logf("%d keys used, %d in the catalog", len(used), len(seen))
}
