package memory

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokens(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"I prefer Oolong-Tea!", []string{"i", "prefer", "oolong", "tea"}},
		{"乌龙茶", []string{"乌龙", "龙茶"}},
		{"茶", []string{"茶"}},
		{"开会。茶", []string{"开会", "茶"}},
		{"iPhone手机2台", []string{"iphone", "手机", "2", "台"}},
		{"会議は金曜日", []string{"会議", "議は", "は金", "金曜", "曜日"}},
		{"녹차를", []string{"녹차", "차를"}},
		{"café naïve", []string{"café", "naïve"}},
		{"a\xffb", []string{"a", "b"}},
		{"コーヒー", []string{"コー", "ーヒ", "ヒー"}},
	}
	for _, c := range cases {
		if got := Tokens(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Tokens(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// FuzzTokens: any input tokenizes without panicking, into tokens without
// separators, and every pair of adjacent CJK characters of the (lowercased)
// input is one of the tokens.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"乌龙茶 oolong", "开会", "a\xff乌\x80龙", "ＡＢＣ全角", "𠀀𠀁", "ǅ乌", "İ乌龙"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := Tokens(s)
		set := map[string]bool{}
		for _, tok := range toks {
			if tok == "" || strings.ContainsAny(tok, " \t\n\"") || !utf8.ValidString(tok) {
				t.Fatalf("Tokens(%q) has token %q", s, tok)
			}
			set[tok] = true
		}
		runes := []rune(strings.ToLower(s))
		for i := 0; i+1 < len(runes); i++ {
			if IsCJK(runes[i]) && IsCJK(runes[i+1]) && runes[i] != utf8.RuneError {
				if bi := string(runes[i : i+2]); !set[bi] {
					t.Fatalf("Tokens(%q) = %q; missing bigram %q", s, toks, bi)
				}
			}
		}
	})
}
