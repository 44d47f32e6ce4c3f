package termtext

import (
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// Writer prints a stream of untrusted text (a model's answer arriving in
// fragments) to w as Visible would print the whole: a UTF-8 sequence, a
// CRLF or a backslash and what follows it split between two writes render
// as if written at once. It holds back at most a few bytes whose rendering
// depends on what comes next; Flush prints them when the text ends (or
// before something else is printed on the same terminal). A Writer is not
// safe for concurrent use.
type Writer struct {
	w    io.Writer
	held []byte // the unrendered tail of the text so far (at most 4 bytes)
	buf  []byte // reused output buffer
}

// NewWriter returns a Writer that prints to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write renders p after what was held back and prints what can be decided.
// It reports len(p) unless printing failed.
func (t *Writer) Write(p []byte) (int, error) {
	if err := t.emit(p, false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteString is Write for a string.
func (t *Writer) WriteString(s string) (int, error) { return t.Write([]byte(s)) }

// Flush prints what was held back, as the end of the text: a cut UTF-8
// sequence as \xNN escapes, a lone carriage return as \x0d.
func (t *Writer) Flush() error { return t.emit(nil, true) }

func (t *Writer) emit(p []byte, final bool) error {
	t.held = append(t.held, p...)
	if len(t.held) == 0 {
		return nil
	}
	out, n := appendVisible(t.buf[:0], string(t.held), false, final)
	t.buf = out
	t.held = t.held[:copy(t.held, t.held[n:])]
	if len(out) == 0 {
		return nil
	}
	_, err := t.w.Write(out)
	return err
}

// EscapeJSON returns the encoded JSON document b with every hidden
// character inside its strings (see Hidden) written as a JSON \u escape,
// so printing the document on a terminal shows them; the value it decodes
// to is unchanged. b must be valid JSON as encoding/json writes it (which
// already escapes the C0 controls and replaces invalid UTF-8); its syntax
// outside strings is ASCII, so only string contents change.
func EscapeJSON(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				out = append(append(out, b[last:i]...), `\u007f`...)
				last = i + 1
			}
			i++
			continue
		}
		r, w := utf8.DecodeRune(b[i:])
		if Hidden(r) {
			out = append(out, b[last:i]...)
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				out = appendJSONUnit(appendJSONUnit(out, r1), r2)
			} else {
				out = appendJSONUnit(out, r)
			}
			last = i + w
		}
		i += w
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

func appendJSONUnit(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
