package chat

import (
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		text string
		max  int
		want []string
	}{
		{"fits", "hello", 10, []string{"hello"}},
		{"no limit", "hello", 0, []string{"hello"}},
		{"paragraph first", "aaa bbb\n\nccc", 9, []string{"aaa bbb", "ccc"}},
		{"then line", "aaa\nbbb ccc", 9, []string{"aaa", "bbb ccc"}},
		{"then space", "aaa bbb ccc", 8, []string{"aaa bbb", "ccc"}},
		{"hard cut", "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"runes not bytes", "ééééé", 2, []string{"éé", "éé", "é"}},
		{"astral counts two", "😀😀😀", 4, []string{"😀😀", "😀"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Split(tt.text, tt.max)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("Split(%q, %d) = %q; want %q", tt.text, tt.max, got, tt.want)
			}
			for _, p := range got {
				if tt.max > 0 && units(p) > tt.max {
					t.Errorf("Split(%q, %d): part %q has %d units", tt.text, tt.max, p, units(p))
				}
			}
		})
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("aaa bbb\n\nccc", 5)
	f.Add("😀é a\n", 2)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 2 || max > 1000 { // one unit cannot hold an astral rune
			return
		}
		parts := Split(s, max)
		total := 0
		for _, p := range parts {
			if units(p) > max {
				t.Fatalf("part %q over %d", p, max)
			}
			total += len(p)
		}
		if total > len(s) {
			t.Fatalf("parts hold more than the text")
		}
	})
}
