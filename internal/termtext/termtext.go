// Package termtext is the one printer for untrusted text on a terminal:
// text that came from the model, a tool, a web page, memory, a path, a
// file name or the audit log. It shows every character that could make the
// screen differ from the text as a visible escape, so such text can neither
// drive the terminal (move the cursor, erase a line, hide what follows,
// set the title, write the clipboard) nor reorder or hide characters.
//
// Contract. Visible (multi-line text), Line (one field: newline and tab are
// escaped too) and Writer (a stream, the same output as Visible over the
// concatenated writes) never emit a character for which Hidden reports true,
// nor an invalid UTF-8 sequence. The escapes are:
//
//	\xNN        an ASCII control (C0 but newline and tab, and DEL), or a byte
//	            that is not part of valid UTF-8 (NN ≥ 80)
//	\uNNNN      a hidden character in the Basic Multilingual Plane
//	\UNNNNNNNN  a hidden character above it (tag characters)
//	\\          a literal backslash, written doubled only when the next
//	            character printed is a backslash, x, u or U
//
// Hex digits are lowercase. A carriage return right before a newline (a
// CRLF line end) is left as it is: it cannot erase anything; any other one
// is \x0d. The output decodes back to the input byte for byte, so no input
// can print like another: a literal `\x1b` in the text shows as `\\x1b`,
// never as the escape of a real ESC. Text without hidden characters and
// without a backslash is returned unchanged, without copying.
//
// Hidden characters are: C0 and C1 controls, DEL and ESC (Unicode Cc);
// every format character (Cf: bidirectional embeddings, overrides,
// isolates and marks, zero-width space and joiners, word joiner and the
// invisible operators, BOM, soft hyphen, Mongolian vowel separator, tag
// characters U+E0001 and U+E0020–U+E007F, interlinear annotation marks);
// the line and paragraph separators U+2028 and U+2029; and invisible
// characters of other classes: U+034F combining grapheme joiner, the
// Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, the whole tag block
// U+E0000–U+E007F and the supplementary variation selectors
// U+E0100–U+E01EF. The variation selectors U+FE00–U+FE0F are left: they
// only choose how the character before them is drawn (the emoji form of
// ❤ is ❤ followed by U+FE0F) and cannot reorder or hide text. A zero-width
// joiner inside an emoji sequence is escaped like any other: the family
// emoji shows as its members.
package termtext

import (
	"unicode"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// Hidden reports whether r is a character the printer shows as an escape
// rather than as itself: a control, a format character or another
// invisible character (see the package documentation). Newline and tab are
// hidden too; Visible lets them through, Line does not.
func Hidden(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r < 0x80:
		return false
	case r < 0xa0: // C1
		return true
	}
	switch r {
	case 0x034f, 0x115f, 0x1160, 0x3164, 0xffa0, 0x2028, 0x2029:
		return true
	}
	if r >= 0xe0000 && r <= 0xe007f || r >= 0xe0100 && r <= 0xe01ef {
		return true
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Cc, r)
}

// Visible returns s with every hidden character but newline and tab (and
// the CR of a CRLF) shown as an escape: the form for text of many lines,
// such as an answer, a plan or a file's content.
func Visible(s string) string { return render(s, false) }

// Line returns s as one line: like Visible, but newline, tab and every
// carriage return are escaped too. It is the form for one field of a
// table or a record (a tool name, a path, an id, a reason), where a
// newline could forge a row or a tab a column.
func Line(s string) string { return render(s, true) }

func render(s string, oneLine bool) string {
	if clean(s, oneLine) {
		return s
	}
	out, _ := appendVisible(make([]byte, 0, len(s)+16), s, oneLine, true)
	return string(out)
}

// clean reports whether s prints as itself: ASCII without controls or a
// backslash, and any non-ASCII characters not hidden.
func clean(s string, oneLine bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == '\\' || c == 0x7f || c < 0x20 && (oneLine || c != '\n' && c != '\t') {
				return false
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 || Hidden(r) {
			return false
		}
		i += w
	}
	return true
}

// appendVisible appends the rendering of s to dst. With final false, s may
// be followed by more text: it stops before the first character whose
// rendering depends on what comes next (a cut UTF-8 sequence, a backslash
// or a carriage return at the end) and reports how many bytes it used;
// the caller keeps the rest for the next call. With final true it uses
// all of s.
func appendVisible(dst []byte, s string, oneLine, final bool) ([]byte, int) {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= utf8.RuneSelf {
			if !final && !utf8.FullRuneInString(s[i:]) {
				return dst, i
			}
			r, w := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && w == 1:
				dst = appendByte(dst, c)
			case Hidden(r):
				dst = appendRune(dst, r)
			default:
				dst = append(dst, s[i:i+w]...)
			}
			i += w
			continue
		}
		switch {
		case c == '\\':
			esc, known := escapedNext(s[i+1:], oneLine, final)
			if !known {
				return dst, i
			}
			dst = append(dst, '\\')
			if esc {
				dst = append(dst, '\\')
			}
		case c == '\r' && !oneLine:
			if i+1 == len(s) && !final {
				return dst, i
			}
			if i+1 < len(s) && s[i+1] == '\n' {
				dst = append(dst, '\r')
			} else {
				dst = appendByte(dst, c)
			}
		case c == '\n' && !oneLine, c == '\t' && !oneLine:
			dst = append(dst, c)
		case c < 0x20 || c == 0x7f:
			dst = appendByte(dst, c)
		default:
			dst = append(dst, c)
		}
		i++
	}
	return dst, i
}

// escapedNext reports whether a backslash followed by s must be doubled:
// when what is printed next starts with a backslash, x, u or U. known is
// false when that depends on text not yet given (final false).
func escapedNext(s string, oneLine, final bool) (esc, known bool) {
	if s == "" {
		return false, final
	}
	c := s[0]
	if c >= utf8.RuneSelf {
		if !utf8.FullRuneInString(s) {
			if !final {
				return false, false
			}
			return true, true // a cut sequence at the end prints as \xNN
		}
		r, w := utf8.DecodeRuneInString(s)
		return r == utf8.RuneError && w == 1 || Hidden(r), true
	}
	switch c {
	case '\\', 'x', 'u', 'U':
		return true, true
	case '\n', '\t':
		return oneLine, true
	case '\r':
		if oneLine {
			return true, true
		}
		if len(s) == 1 {
			return true, final // a CR at the very end prints as \x0d
		}
		return s[1] != '\n', true
	}
	return c < 0x20 || c == 0x7f, true
}

func appendByte(dst []byte, c byte) []byte {
	return append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
}

func appendRune(dst []byte, r rune) []byte {
	if r < 0x80 {
		return appendByte(dst, byte(r))
	}
	n := 4
	dst = append(dst, '\\', 'u')
	if r > 0xffff {
		n = 8
		dst[len(dst)-1] = 'U'
	}
	for shift := 4 * (n - 1); shift >= 0; shift -= 4 {
		dst = append(dst, hexDigits[(r>>shift)&0xf])
	}
	return dst
}
