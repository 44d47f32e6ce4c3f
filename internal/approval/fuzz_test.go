package approval

import (
	"slices"
	"strings"
	"testing"
)

// FuzzPatterns checks the two promises of Patterns + Covers for any pair
// of targets: a grant covers the target it was made from (unless that
// target climbs with ".."), and it covers another target only if that one
// is the same, or lies strictly inside the first target's folder.
func FuzzPatterns(f *testing.F) {
	for _, s := range [][2]string{
		{"notes/a.md", "notes/b.md"}, {"notes/a.md", "notes"}, {"a.md", "b.md"}, {"*.md", "a.md"},
		{"name:notes/a.md", "name:notes/x/y"}, {"n[1]/a", "n1/a"}, {"a/**/b", "a/x/y"}, {"\\/a", "x/a"},
		{"https://example.com/a", "https://example.com/b"}, {"a//b", "a/c"}, {"notes/a", "notes/../x"},
		{"\xff/a", "\xef\xbf\xbd/a"}, {".", "a"}, {"a/./b", "a/c"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, made, other string) {
		g := Grant{Patterns: Patterns([]string{made})}
		climbs := slices.Contains(strings.Split(made, "/"), "..")
		if !climbs && !g.Covers([]string{made}) {
			t.Errorf("grant %q made from %q does not cover it", g.Patterns, made)
		}
		if !g.Covers([]string{other}) || other == made {
			return
		}
		i := strings.LastIndexByte(made, '/')
		if i <= 0 || !strings.HasPrefix(other, made[:i+1]) || len(other) == i+1 {
			t.Errorf("grant %q made from %q covers %q, which is not inside %q's folder", g.Patterns, made, other, made)
		}
		if slices.Contains(strings.Split(other, "/"), "..") {
			t.Errorf("grant %q covers %q, which climbs with ..", g.Patterns, other)
		}
	})
}
