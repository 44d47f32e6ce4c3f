package secrets

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The skeleton of a text is its letters and digits, case-folded, in order,
// with everything else left out: spaces, punctuation, zero-width and other
// format characters, line breaks. "S k-P_r.o\u200bJ" and "skproj" have the
// same skeleton. Transformed known values (transform.go) are searched for
// in skeletons, so that a separator put between a value's characters, or
// a change of case, does not hide it.
//
// Text is read in units: one character, or one escape that stands for a
// character — a JSON escape (\n, \", \u00e9, a surrogate pair) or a URL
// percent escape (%20, %C3%A9) — or one replacement marker
// ("[REDACTED:token]"). Escapes are read because tool arguments are JSON
// and URLs, where a separator the model chose arrives escaped ("a\nb",
// "a%20b"), and reading "\n" as the letter n would hide the value. But an
// escape can hide letters too: a backslash put between the characters of
// plain text ("s\n\e") would eat the n, "%e9" would eat the e and the 9,
// and a value with '%' in it can spell an escape when reversed. So a text
// has four readings, with or without JSON escapes and with or without URL
// escapes, and a value found in any is found. The readings part only at
// an escape that covers a letter or digit, which most text has few of or
// none; each family of escapes is read one way throughout a reading, so a
// text that needs a "\n" read as an escape and another as a backslash and
// an n is not read right. A marker is skipped like a separator in every
// reading, so that it neither hides a value the model wrapped around one
// nor, once Redact has put it in, matches a value.
//
// A known value's own skeleton is read plainly (coreOf): no escapes, no
// markers. The value is what a model transforms; escaping (JSON, URL) is
// applied to the transform afterwards, and a reading with escapes undoes
// it.

// A reading says which escapes are read as escapes; the others are
// separators followed by characters.
type reading uint8

const (
	readJSON reading = 1 << iota // JSON escapes: \n, \u00e9
	readURL                      // URL escapes: %20
	readBoth = readJSON | readURL
	readings = 4 // every reading is below this
)

// Codes of asciiFold below '0': what an ASCII byte is in a skeleton.
const (
	foldSkip      = 0 // not a letter or digit: left out
	foldBackslash = 1 // may start a JSON escape
	foldPercent   = 2 // may start a URL escape
	foldBracket   = 3 // may start a replacement marker
)

// asciiFold maps an ASCII byte to its folded letter or digit, or to one of
// the codes above.
var asciiFold = func() (t [utf8.RuneSelf]byte) {
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c
	}
	for c := byte('a'); c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = c, c
	}
	t['\\'], t['%'], t['['] = foldBackslash, foldPercent, foldBracket
	return t
}()

// foldByte is asciiFold for every byte, with foldSlow for the bytes that
// need unitAt: a non-ASCII byte, or one that may start an escape or a
// marker. It lets asciiRun read plain ASCII without a branch per byte.
var foldByte = func() (t [256]byte) {
	for c := range t {
		switch {
		case c >= utf8.RuneSelf || asciiFold[c] > foldSkip && asciiFold[c] < '0':
			t[c] = foldSlow
		default:
			t[c] = asciiFold[c]
		}
	}
	return t
}()

const foldSlow = 0xFF

// foldRune writes the folded form of r to u and returns its length, or
// returns 0 if r is not a letter or digit. Fullwidth ASCII ("ｓｋ") folds to
// ASCII; other look-alikes (Cyrillic "а") do not.
func foldRune(r rune, u *[4]byte) int {
	if r >= 0xFF01 && r <= 0xFF5E {
		r -= 0xFF01 - '!'
	}
	if r < utf8.RuneSelf {
		if f := asciiFold[r]; f >= '0' {
			u[0] = f
			return 1
		}
		return 0
	}
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		return 0
	}
	return utf8.EncodeRune(u[:], unicode.ToLower(unicode.ToUpper(r)))
}

// unitAt reads the unit of text that starts at s[i] in the reading rd. It
// returns the folded bytes of its letter or digit (n is 0 when it holds
// none) and where the next unit starts.
func unitAt(s string, i int, rd reading) (u [4]byte, n, next int) {
	c := s[i]
	if c >= utf8.RuneSelf {
		r, size := utf8.DecodeRuneInString(s[i:])
		return u, foldRune(r, &u), i + size
	}
	switch f := asciiFold[c]; f {
	case foldSkip:
		return u, 0, i + 1
	case foldBackslash:
		if rd&readJSON == 0 {
			return u, 0, i + 1
		}
		return jsonUnit(s, i)
	case foldPercent:
		if rd&readURL == 0 {
			return u, 0, i + 1
		}
		return percentUnit(s, i)
	case foldBracket:
		if end := markerEnd(s, i); end > 0 {
			return u, 0, end
		}
		return u, 0, i + 1
	default:
		u[0] = f
		return u, 1, i + 1
	}
}

// jsonUnit reads a JSON escape at s[i] == '\\'. A short escape (\n, \")
// is a separator; \uXXXX (or a surrogate pair) is its character. A
// backslash that starts no escape is a separator of its own.
func jsonUnit(s string, i int) (u [4]byte, n, next int) {
	if i+1 >= len(s) {
		return u, 0, i + 1
	}
	switch s[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return u, 0, i + 2
	case 'u':
		r, ok := hexRune(s, i+2, 4)
		if !ok {
			return u, 0, i + 1
		}
		next = i + 6
		if utf16.IsSurrogate(r) {
			if r2, ok := hexRune(s, next+2, 4); ok && r < 0xDC00 && strings.HasPrefix(s[next:], `\u`) {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					return u, foldRune(d, &u), next + 6
				}
			}
			return u, 0, next
		}
		return u, foldRune(r, &u), next
	}
	return u, 0, i + 1
}

// percentUnit reads a URL escape at s[i] == '%'. A run of escapes that
// spells one UTF-8 character (%C3%A9) is that character.
func percentUnit(s string, i int) (u [4]byte, n, next int) {
	v, ok := hexRune(s, i+1, 2)
	if !ok {
		return u, 0, i + 1
	}
	if v < utf8.RuneSelf {
		return u, foldRune(v, &u), i + 3
	}
	var buf [utf8.UTFMax]byte
	k := 0
	for j := i; k < len(buf) && j < len(s) && s[j] == '%'; j += 3 {
		b, ok := hexRune(s, j+1, 2)
		if !ok || b < utf8.RuneSelf {
			break
		}
		buf[k] = byte(b)
		k++
	}
	r, size := utf8.DecodeRune(buf[:k])
	if r == utf8.RuneError {
		return u, 0, i + 3
	}
	return u, foldRune(r, &u), i + 3*size
}

// hexRune parses the n hex digits at s[i:].
func hexRune(s string, i, n int) (rune, bool) {
	if i < 0 || i+n > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+n]) {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

// otherwise returns the family of the escape s[i:next] (readJSON or
// readURL) if a reading without that family reads it otherwise: it covers
// a letter or digit. It returns 0 for any other unit.
func otherwise(s string, i, next int) reading {
	if next-i < 2 {
		return 0
	}
	var fam reading
	switch s[i] {
	case '\\':
		fam = readJSON
	case '%':
		fam = readURL
	default:
		return 0
	}
	for _, c := range []byte(s[i+1 : next]) {
		if c < utf8.RuneSelf && asciiFold[c] >= '0' {
			return fam
		}
	}
	return 0
}

// markerEnd returns the end of the replacement marker at s[i], or 0.
func markerEnd(s string, i int) int {
	if !strings.HasPrefix(s[i:], markerPrefix) {
		return 0
	}
	start := i + len(markerPrefix)
	for j := start; j < len(s) && j-start <= maxMarkerKindBytes; j++ {
		switch c := s[j]; {
		case c == ']':
			if j == start {
				return 0
			}
			return j + 1
		case !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'):
			return 0
		}
	}
	return 0
}

// maxSkeletonText is the longest text whose skeleton is built: offsets are
// int32. A longer text that holds a piece is taken as a piece from end to
// end (transforms.spans, transforms.whole): failing closed.
const maxSkeletonText = math.MaxInt32

// skeleton is a text's skeleton in one reading with, for each of its
// bytes, where the unit of the text it comes from starts.
type skeleton struct {
	t     string
	start []int32 // t[j] comes from the unit at s[start[j]] (see maxSkeletonText)
	rd    reading
}

// unitEnd returns where the unit of t[j] ends in s.
func (sk *skeleton) unitEnd(s string, j int) int {
	_, _, next := unitAt(s, int(sk.start[j]), sk.rd)
	return next
}

// skeletonOf returns the skeleton of s in the reading rd, and the families
// of escapes that other readings read otherwise.
func skeletonOf(s string, rd reading) (sk skeleton, parts reading) {
	sk.rd = rd
	var b strings.Builder
	b.Grow(len(s))
	sk.start = make([]int32, 0, len(s))
	for i := 0; i < len(s); {
		u, n, next := unitAt(s, i, rd)
		parts |= otherwise(s, i, next)
		for j := range n {
			b.WriteByte(u[j])
			sk.start = append(sk.start, int32(i))
		}
		i = next
	}
	sk.t = b.String()
	return sk, parts
}

// hasSkeletonPrefix reports whether want is a prefix of pending followed
// by the skeleton of s from s[i].
func hasSkeletonPrefix(pending []byte, s string, i int, rd reading, want string) bool {
	for _, b := range pending {
		if want == "" {
			return true
		}
		if want[0] != b {
			return false
		}
		want = want[1:]
	}
	for want != "" && i < len(s) {
		u, n, next := unitAt(s, i, rd)
		for j := 0; j < n && want != ""; j++ {
			if want[0] != u[j] {
				return false
			}
			want = want[1:]
		}
		i = next
	}
	return want == ""
}
