package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/config"
)

// TestEveryPlatformHasAnAdapter: the platform table (config.Platforms) and
// the adapters built into homard (chatAdapters) name the same platforms,
// so a platform added to one is added to the other: config would accept
// a [channels.NAME] no adapter serves, or an adapter would be unreachable.
func TestEveryPlatformHasAnAdapter(t *testing.T) {
	var built []string
	for name := range chatAdapters {
		built = append(built, name)
	}
	slices.Sort(built)
	table := config.PlatformNames()
	slices.Sort(table)
	if !slices.Equal(built, table) {
		t.Errorf("adapters built in: %v; platform table: %v — add the missing constructor (app/chats.go) or table row (config.Platforms)", built, table)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "CHANNELS.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range config.Platforms {
		if !strings.Contains(string(doc), "[channels."+p.Name+"]") {
			t.Errorf("docs/CHANNELS.md has no [channels.%s] setup: document the platform", p.Name)
		}
		if p.Callback && p.CallbackPath == "" {
			t.Errorf("platform %s calls back but names no callback path", p.Name)
		}
		if p.DefaultBase == "" || p.Title == "" {
			t.Errorf("platform %s: title %q, default base %q; want both", p.Name, p.Title, p.DefaultBase)
		}
	}
}
