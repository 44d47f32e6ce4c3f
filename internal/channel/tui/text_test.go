package tui

import (
	"strings"
	"testing"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/homard/homard/internal/termtext"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"a\r\nb", "a\nb"},
		{"\x1b[2J", `\x1b[2J`},
		{"\x1b]52;c;aGk=\x07", `\x1b]52;c;aGk=\x07`},
		{"\x1b]8;;https://evil\x1b\\link\x1b]8;;\x1b\\", `\x1b]8;;https://evil\x1b\link\x1b]8;;\x1b\`},
		{"tab\there", "tab    here"},
		{"del\x7f", `del\x7f`},
		{"c1\u009b2J", `c1\u009b2J`},
		{"rtl\u202eevil\u2066x", `rtl\u202eevil\u2066x`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"nul\x00", `nul\x00`},
		{"lone\rcr", `lone\x0dcr`},
		{"中文 ok", "中文 ok"},
	} {
		if got := clean(tc.in); got != tc.want {
			t.Errorf("clean(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"\x1b[31mred", "\x9b2J", "a\rb", "\u202e", "中\xff", "\x1bP1;1|x\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := clean(s)
		if !utf8.ValidString(got) {
			t.Fatalf("clean(%q) = %q: invalid UTF-8", s, got)
		}
		for _, r := range got {
			if r != '\n' && termtext.Hidden(r) {
				t.Fatalf("clean(%q) = %q: holds control %U", s, got, r)
			}
		}
		// Streamed in two parts, the answer renders as it does whole.
		whole := markdown(s, 40)
		var st mdStream
		st.render(s[:len(s)/2], 40)
		if got := st.render(s, 40); strings.Join(got, "\n") != strings.Join(whole, "\n") {
			t.Fatalf("markdown(%q) streamed = %q; whole = %q", s, got, whole)
		}
		// Nothing the model wrote can end up wider than the line.
		for _, l := range whole {
			if w := ansi.StringWidth(l); w > 40 {
				t.Fatalf("markdown(%q, 40) has a line %d cells wide: %q", s, w, l)
			}
		}
	})
}

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"# Title", []string{"Title"}},
		{"#nospace", []string{"#nospace"}},
		{"a **b** `c` d", []string{"a b c d"}},
		{"unclosed **bold and `code", []string{"unclosed **bold and `code"}},
		{"- one\n* two\n  - nested", []string{"• one", "• two", "  • nested"}},
		{"1. first\n10) tenth", []string{"1. first", "10) tenth"}},
		{"> quoted", []string{"│ quoted"}},
		{"```go\nx := 1\n```\nafter", []string{"  go", "  x := 1", "after"}},
		{"```\n**not bold**\n```", []string{"  **not bold**"}},
		{"- " + strings.Repeat("word ", 10), []string{"• word word word word word word", "  word word word word"}},
	} {
		got := markdown(tc.in, 32)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("markdown(%q) =\n%q\nwant\n%q", tc.in, got, tc.want)
		}
	}
}

func TestWrapByDisplayWidth(t *testing.T) {
	got := wrap("你好世界你好世界", 9) // 16 cells; a wide rune never straddles the edge
	want := []string{"你好世界", "你好世界"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("wrap = %q; want %q", got, want)
	}
	for _, l := range hang("you› ", "混合 mixed 文字 text "+strings.Repeat("字", 30), 20) {
		if w := ansi.StringWidth(l); w > 20 {
			t.Errorf("hang line %q is %d cells; want at most 20", l, w)
		}
	}
}

// BenchmarkStreamedAnswer is the cost of streaming a 2,000-fragment answer
// (about 12 KB of Markdown) into a chat: each fragment renders the answer
// again and lays out the transcript.
func BenchmarkStreamedAnswer(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		m := New(b.Context(), &fakeRuntime{}, "bench", nil)
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		for i := range 2000 {
			frag := "word "
			if i%50 == 0 {
				frag = "\n- **item** `code` 中文\n"
			}
			m.Update(textMsg(frag))
		}
		m.Close()
	}
}
