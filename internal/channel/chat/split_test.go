package chat

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestUTF16Len(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello", 5},
		{"héllo", 5},
		{"你好", 2},
		{"😀", 2},
		{"👍🏽", 4},
		{"🇫🇷", 4},
		{"a\xffb", 3},
	}
	for _, c := range cases {
		if got := UTF16Len(c.in); got != c.want {
			t.Errorf("UTF16Len(%q) = %d; want %d", c.in, got, c.want)
		}
	}
}

func TestSplit(t *testing.T) {
	cases := []struct {
		name string
		text string
		max  int
		want []string
	}{
		{"empty", "", 10, nil},
		{"fits", "hello world", 11, []string{"hello world"}},
		{"fits with breaks kept", "a\n\nb", 4, []string{"a\n\nb"}},
		{"paragraph first", "one two\nthree\n\nfour five", 16, []string{"one two\nthree", "four five"}},
		{"line when no paragraph fits", "one two\nthree four", 12, []string{"one two", "three four"}},
		{"space when no line fits", "one two three", 9, []string{"one two", "three"}},
		{"space right after the window", "abcd efgh", 4, []string{"abcd", "efgh"}},
		{"runes when no space", "abcdefgh", 3, []string{"abc", "def", "gh"}},
		{"CJK cut at runes", "你好世界和平", 4, []string{"你好世界", "和平"}},
		{"CJK paragraph", "你好。\n\n世界和平。", 6, []string{"你好。", "世界和平。"}},
		{"emoji pair not split", "ab😀cd", 3, []string{"ab", "😀c", "d"}},
		{"emoji with skin tone kept", "a👍🏽b", 4, []string{"a", "👍🏽", "b"}},
		{"combining mark kept", "abe\u0301f", 3, []string{"ab", "e\u0301f"}},
		{"flags kept in pairs", "🇫🇷🇩🇪🇮🇹", 6, []string{"🇫🇷", "🇩🇪", "🇮🇹"}},
		{"zwj family kept", "x👩\u200d👧", 5, []string{"x", "👩\u200d👧"}},
		{"cluster longer than a part cut at runes", "👩\u200d👩\u200d👧\u200d👦", 4, []string{"👩\u200d", "👩\u200d", "👧\u200d", "👦"}},
		{"leading breaks of next part dropped", "aaaa\n\n\n\nbbbb", 6, []string{"aaaa", "bbbb"}},
		{"indentation kept", "func f() {\n    return\n}", 12, []string{"func f() {", "    return\n}"}},
		{"max below two", "😀😀", 1, []string{"😀", "😀"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Split(c.text, c.max)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Split(%q, %d) = %q; want %q", c.text, c.max, got, c.want)
			}
		})
	}
}

// TestSplitInvariants checks every part of longer texts: within the limit,
// valid UTF-8 when the input was, not empty, and nothing but breaks lost.
func TestSplitInvariants(t *testing.T) {
	para := "Le café est prêt. 咖啡准备好了。☕️ Kaffee ist fertig 👍🏽.\n"
	texts := []string{
		strings.Repeat(para, 300),
		strings.Repeat("🇯🇵", 3000),
		strings.Repeat("字", 9000),
		strings.Repeat(para+"\n", 200),
		strings.Repeat("word ", 2000),
	}
	for _, max := range []int{2, 3, 7, 100, 2000, 4096} {
		for i, text := range texts {
			parts := Split(text, max)
			var kept strings.Builder
			for j, p := range parts {
				if n := UTF16Len(p); n > max || n == 0 {
					t.Fatalf("text %d, max %d: part %d has %d units", i, max, j, n)
				}
				if !utf8.ValidString(p) {
					t.Fatalf("text %d, max %d: part %d is not valid UTF-8: %q", i, max, j, p)
				}
				kept.WriteString(p)
			}
			strip := func(s string) string { return strings.NewReplacer("\n", "", " ", "").Replace(s) }
			if strip(kept.String()) != strip(text) {
				t.Errorf("text %d, max %d: parts lost more than breaks", i, max)
			}
		}
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("hello\n\nworld 你好 😀👍🏽🇫🇷", 5)
	f.Add("a\u0301\u0301\u0301b", 2)
	f.Fuzz(func(t *testing.T, text string, max int) {
		if max > 10000 || max < -10 {
			return
		}
		parts := Split(text, max)
		limit := max
		if limit < 2 {
			limit = 2
		}
		total := 0
		for _, p := range parts {
			if n := UTF16Len(p); n > limit || p == "" {
				t.Fatalf("Split(%q, %d): part %q has %d units", text, max, p, n)
			}
			total += len(p)
		}
		if total > len(text) {
			t.Fatalf("Split(%q, %d) = %q: parts longer than the text", text, max, parts)
		}
		if utf8.ValidString(text) {
			for _, p := range parts {
				if !utf8.ValidString(p) {
					t.Fatalf("Split(%q, %d): part %q is not valid UTF-8", text, max, p)
				}
			}
		}
	})
}
