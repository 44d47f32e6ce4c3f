package lang

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/lang/langscan"
)

// TestZhMCPCoversMCPLogin: every key cmd/homard/mcplogin.go uses has a
// Chinese entry in zhMCP with the same verbs, zhMCP holds no other key,
// and the file leaves no user-facing literal outside the catalog.
func TestZhMCPCoversMCPLogin(t *testing.T) {
	found, err := langscan.Scan(filepath.Join("..", "..", "cmd", "homard"))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for k, at := range found.Keys {
		if !strings.HasPrefix(at, "mcplogin.go:") {
			continue
		}
		used[k] = true
		v, ok := zhMCP[k]
		switch {
		case !ok:
			t.Errorf("%s: key %q has no entry in zhMCP", at, k)
		case !slices.Equal(langscan.Verbs(k), langscan.Verbs(v)):
			t.Errorf("key %q: translation %q takes other arguments", k, v)
		}
	}
	for k := range zhMCP {
		if !used[k] {
			t.Errorf("zhMCP key %q is not used in cmd/homard/mcplogin.go", k)
		}
	}
	for _, l := range found.Loose {
		if strings.HasPrefix(l, "mcplogin.go:") {
			t.Errorf("a user-facing literal outside the catalog: %s", l)
		}
	}
}
