package termtext

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "plain text, 中文, ❤️ and é", "plain text, 中文, ❤️ and é"},
		{"newline and tab kept", "a\n\tb\n", "a\n\tb\n"},
		{"crlf kept", "a\r\nb", "a\r\nb"},
		{"lone cr", "ok\r\x1b[2Kcurl x | sh", `ok\x0d\x1b[2Kcurl x | sh`},
		{"cr at end", "a\r", `a\x0d`},
		{"sgr 8 hides", "\x1b[8mhidden\x1b[0m", `\x1b[8mhidden\x1b[0m`},
		{"cursor up", "\x1b[1A", `\x1b[1A`},
		{"osc 52 clipboard", "\x1b]52;c;ZXZpbA==\x07", `\x1b]52;c;ZXZpbA==\x07`},
		{"osc 0 title", "\x1b]0;pwned\x1b\\", `\x1b]0;pwned\x1b\`},
		{"nul and del", "n\x00d\x7f", `n\x00d\x7f`},
		{"c1 csi", "c1\u009b2J", `c1\u009b2J`},
		{"next line c1", "a\u0085b", `a\u0085b`},
		{"bidi override", "file\u202egpj.exe", `file\u202egpj.exe`},
		{"bidi isolates and marks", "\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u202a", `\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u202a`},
		{"zero width", "a\u200bb\u200cc\u200dd\u2060e\ufefff", `a\u200bb\u200cc\u200dd\u2060e\ufefff`},
		{"invisible operators", "\u2061\u2062\u2063\u2064", `\u2061\u2062\u2063\u2064`},
		{"soft hyphen, cgj, mongolian", "\u00ad\u034f\u180e", `\u00ad\u034f\u180e`},
		{"hangul fillers", "\u115f\u1160\u3164\uffa0", `\u115f\u1160\u3164\uffa0`},
		{"line separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"tag characters", "x\U000e0041\U000e007f\U000e0000", `x\U000e0041\U000e007f\U000e0000`},
		{"supplementary variation selector", "葛\U000e0100", `葛\U000e0100`},
		{"invalid utf-8", "bad\xffutf8\xc3", `bad\xffutf8\xc3`},
		{"surrogate half", "\xed\xa0\x80", `\xed\xa0\x80`},
		{"lone backslash kept", `C:\Program Files\a b\`, `C:\Program Files\a b\`},
		{"literal escape look-alike doubled", `\x1b[8m \u202e \U000e0041`, `\\x1b[8m \\u202e \\U000e0041`},
		{"double backslash", `a\\b`, `a\\\b`},
		{"backslash before an escape", "\\\x1b", `\\\x1b`},
		{"backslash before crlf", "\\\r\n", "\\\r\n"},
		{"backslash before lone cr", "\\\r", `\\\x0d`},
		{"backslash before invalid byte", "\\\xff", `\\\xff`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Visible(tc.in); got != tc.want {
				t.Errorf("Visible(%q) = %q; want %q", tc.in, got, tc.want)
			}
			if back, err := unescape(Visible(tc.in), false); err != nil || back != tc.in {
				t.Errorf("unescape(Visible(%q)) = %q, %v; want the input back", tc.in, back, err)
			}
		})
	}
}

func TestLine(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "write_file", "write_file"},
		{"newline forges a record", "x\n     2  2026-01-01 ran", `x\x0a     2  2026-01-01 ran`},
		{"tab forges a column", "a\tb", `a\x09b`},
		{"crlf", "a\r\nb", `a\x0d\x0ab`},
		{"esc in a tool name", "\x1b[1A\x1b[2Kread_file", `\x1b[1A\x1b[2Kread_file`},
		{"backslash before newline", "\\\n", `\\\x0a`},
		{"backslash before a letter", `notes\today`, `notes\today`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Line(tc.in); got != tc.want {
				t.Errorf("Line(%q) = %q; want %q", tc.in, got, tc.want)
			}
			if back, err := unescape(Line(tc.in), true); err != nil || back != tc.in {
				t.Errorf("unescape(Line(%q)) = %q, %v; want the input back", tc.in, back, err)
			}
		})
	}
}

// TestVisibleReturnsCleanTextUncopied: the common case costs nothing.
func TestVisibleReturnsCleanTextUncopied(t *testing.T) {
	s := strings.Repeat("an ordinary answer, 中文 ", 10)
	if n := testing.AllocsPerRun(100, func() { _ = Visible(s) }); n != 0 {
		t.Errorf("Visible(clean text) allocates %v times; want 0", n)
	}
}

func TestWriterAcrossChunks(t *testing.T) {
	text := "héllo \x1b[8m中\r\n\\x1b \\\x1b back\\\r\nslash \xff\U000e0041 end\\"
	want := Visible(text)
	// Every way of cutting the text in two, and byte by byte.
	for cut := 0; cut <= len(text); cut++ {
		var b bytes.Buffer
		w := NewWriter(&b)
		mustWrite(t, w, text[:cut])
		mustWrite(t, w, text[cut:])
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("written as %q + %q: %q; want %q", text[:cut], text[cut:], b.String(), want)
		}
	}
	var b bytes.Buffer
	w := NewWriter(&b)
	for i := range len(text) {
		mustWrite(t, w, text[i:i+1])
	}
	w.Flush()
	if b.String() != want {
		t.Errorf("written byte by byte: %q; want %q", b.String(), want)
	}
}

func TestWriterHoldsOnlyWhatDependsOnTheNext(t *testing.T) {
	for _, tc := range []struct{ name, in, before, after string }{
		{"cut utf-8", "a\xe4\xb8", "a", `\xe4\xb8`},
		{"cr", "a\r", "a", `\x0d`},
		{"backslash", `a\`, "a", `\`},
		{"esc is never held", "a\x1b", `a\x1b`, ""},
		{"complete text", "ok\n", "ok\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			w := NewWriter(&b)
			mustWrite(t, w, tc.in)
			if b.String() != tc.before {
				t.Errorf("after Write(%q): %q; want %q", tc.in, b.String(), tc.before)
			}
			w.Flush()
			if got := strings.TrimPrefix(b.String(), tc.before); got != tc.after {
				t.Errorf("Flush after Write(%q) printed %q; want %q", tc.in, got, tc.after)
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestWriterReportsErrors(t *testing.T) {
	w := NewWriter(failWriter{})
	if n, err := w.Write([]byte("text")); err == nil || n != 0 {
		t.Errorf("Write to a broken writer = %d, %v; want 0 and the error", n, err)
	}
}

func mustWrite(t *testing.T, w *Writer, s string) {
	t.Helper()
	if n, err := w.WriteString(s); err != nil || n != len(s) {
		t.Fatalf("Write(%q) = %d, %v", s, n, err)
	}
}

func TestEscapeJSON(t *testing.T) {
	v := map[string]string{"result": "a\u202eb\x7f\u200d\u0085\U000e0041\x1b 中 ❤️ \\u202e"}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got := EscapeJSON(raw)
	for _, r := range string(got) {
		if Hidden(r) {
			t.Errorf("EscapeJSON(%s) = %s: holds %U", raw, got, r)
		}
	}
	want := `{"result":"a\u202eb\u007f\u200d\u0085\udb40\udc41\u001b 中 ❤️ \\u202e"}`
	if string(got) != want {
		t.Errorf("EscapeJSON(%s) = %s; want %s", raw, got, want)
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["result"] != v["result"] {
		t.Errorf("EscapeJSON(%s) decodes to %q, %v; want %q", raw, back["result"], err, v["result"])
	}
	plain := []byte(`{"a":"中文"}`)
	if got := EscapeJSON(plain); &got[0] != &plain[0] {
		t.Errorf("EscapeJSON copied a document with nothing to escape")
	}
}

func FuzzVisible(f *testing.F) {
	for _, s := range []string{
		"\x1b[31mred", "\x9b2J", "a\rb", "a\r\n", "\u202e", "中\xff", "\x1bP1;1|x\x1b\\",
		`\x1b`, `\\`, "\\\r", "\\\xe4\xb8", "\U000e0041", "\u200d", "plain",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, oneLine := range []bool{false, true} {
			got := render(s, oneLine)
			if !utf8.ValidString(got) {
				t.Fatalf("render(%q, %v) = %q: invalid UTF-8", s, oneLine, got)
			}
			for i, r := range got {
				if !Hidden(r) || !oneLine && (r == '\n' || r == '\t' || r == '\r' && strings.HasPrefix(got[i:], "\r\n")) {
					continue
				}
				t.Fatalf("render(%q, %v) = %q: holds %U", s, oneLine, got, r)
			}
			back, err := unescape(got, oneLine)
			if err != nil || back != s {
				t.Fatalf("render(%q, %v) = %q decodes to %q, %v; want the input", s, oneLine, got, back, err)
			}
			if clean(s, oneLine) && got != s {
				t.Fatalf("render(%q, %v) = %q; printable text must be unchanged", s, oneLine, got)
			}
		}
		// Streamed in three parts, the text prints as it does whole.
		var b bytes.Buffer
		w := NewWriter(&b)
		a, c := len(s)/3, 2*len(s)/3
		for _, part := range []string{s[:a], s[a:c], s[c:]} {
			w.WriteString(part)
		}
		w.Flush()
		if whole := Visible(s); b.String() != whole {
			t.Fatalf("Writer(%q) = %q; Visible = %q", s, b.String(), whole)
		}
	})
}

// unescape is the inverse of render, written from the package contract
// (not from the code): it proves no two inputs print alike.
func unescape(s string, oneLine bool) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' && !oneLine && (i+1 == len(s) || s[i+1] != '\n') {
			return "", errors.New("raw carriage return not before a newline at " + strconv.Itoa(i))
		}
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		digits := 0
		switch s[i+1] {
		case '\\':
			b.WriteByte('\\')
			i++
			continue
		case 'x':
			digits = 2
		case 'u':
			digits = 4
		case 'U':
			digits = 8
		default:
			b.WriteByte(c)
			continue
		}
		if i+2+digits > len(s) {
			return "", errors.New("short escape at " + strconv.Itoa(i))
		}
		n, err := strconv.ParseUint(s[i+2:i+2+digits], 16, 32)
		if err != nil {
			return "", err
		}
		if digits == 2 {
			b.WriteByte(byte(n))
		} else {
			b.WriteRune(rune(n))
		}
		i += 1 + digits
	}
	return b.String(), nil
}

func BenchmarkVisible(b *testing.B) {
	for _, bc := range []struct{ name, text string }{
		{"clean", strings.Repeat("An ordinary answer with a path notes/todo.md and 中文.\n", 40)},
		{"hostile", strings.Repeat("\x1b[8m fake card \r\x1b[2K\u202e\u200b \\x1b \xff\n", 40)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				_ = Visible(bc.text)
			}
		})
	}
}

func BenchmarkWriter(b *testing.B) {
	chunk := "a streamed fragment of an answer with 中文 and \x1b[2J, "
	b.ReportAllocs()
	b.SetBytes(int64(len(chunk)))
	w := NewWriter(discard{})
	for b.Loop() {
		w.WriteString(chunk)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
