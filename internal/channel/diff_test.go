package channel

import "testing"

func TestDiffLineOf(t *testing.T) {
	for _, c := range []struct {
		line string
		want DiffLine
	}{
		{"--- a/x.go", DiffHeader},
		{"+++ b/x.go", DiffHeader},
		{"@@ -1,2 +1,3 @@", DiffHunk},
		{"+added", DiffAdded},
		{"+", DiffAdded},
		{"-removed", DiffRemoved},
		{"---", DiffRemoved}, // a removed line "--", not a header
		{" context", DiffContext},
		{"", DiffContext},
	} {
		if got := DiffLineOf(c.line); got != c.want {
			t.Errorf("DiffLineOf(%q) = %v; want %v", c.line, got, c.want)
		}
	}
}
