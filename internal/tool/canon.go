package tool

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// canonicalize rewrites raw, the output of json.Marshal, in its RFC 8785
// (JCS) form: object members sorted by the UTF-16 code units of their
// names, strings with only the escapes RFC 8785 allows, and numbers as
// ECMAScript prints the float64 they denote. A number whose float64 is
// not exactly what was written (an integer beyond 2^53, -0, an overflow)
// is refused: two different values would share one hash.
//
// This is hand-rolled although github.com/gowebpki/jcs does the job (the
// tests keep jcs as the oracle: FuzzCanonicalMatchesJCS): jcs parses into
// generic values and re-encodes through UTF-16, which was half of NewPlan's
// time on the arbiter's hot path. This version only has to accept what
// json.Marshal writes, and copies every string without an escape as is.
func canonicalize(raw []byte) ([]byte, error) {
	c := canon{in: raw, out: make([]byte, 0, len(raw))}
	c.ws()
	if err := c.value(0); err != nil {
		return nil, fmt.Errorf("canonicalize: %w", err)
	}
	if c.ws(); c.i != len(c.in) {
		return nil, errors.New("canonicalize: data after the value")
	}
	return c.out, nil
}

// maxCanonDepth bounds nesting; json.Marshal output of a Plan body is a
// few levels deep.
const maxCanonDepth = 64

type canon struct {
	in  []byte
	i   int
	out []byte
}

var errCanonSyntax = errors.New("malformed JSON")

func (c *canon) ws() {
	for c.i < len(c.in) {
		switch c.in[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *canon) value(depth int) error {
	if c.i >= len(c.in) {
		return errCanonSyntax
	}
	if depth > maxCanonDepth {
		return errors.New("nested too deeply")
	}
	switch ch := c.in[c.i]; {
	case ch == '{':
		return c.object(depth)
	case ch == '[':
		return c.array(depth)
	case ch == '"':
		_, err := c.str(false)
		return err
	case ch == 't':
		return c.literal("true")
	case ch == 'f':
		return c.literal("false")
	case ch == 'n':
		return c.literal("null")
	case ch == '-' || ch >= '0' && ch <= '9':
		return c.number()
	}
	return errCanonSyntax
}

func (c *canon) literal(lit string) error {
	if !bytes.HasPrefix(c.in[c.i:], []byte(lit)) {
		return errCanonSyntax
	}
	c.i += len(lit)
	c.out = append(c.out, lit...)
	return nil
}

func (c *canon) array(depth int) error {
	c.i++ // '['
	c.out = append(c.out, '[')
	c.ws()
	if c.i < len(c.in) && c.in[c.i] == ']' {
		c.i++
		c.out = append(c.out, ']')
		return nil
	}
	for {
		c.ws()
		if err := c.value(depth + 1); err != nil {
			return err
		}
		c.ws()
		if c.i >= len(c.in) {
			return errCanonSyntax
		}
		switch c.in[c.i] {
		case ',':
			c.i++
			c.out = append(c.out, ',')
		case ']':
			c.i++
			c.out = append(c.out, ']')
			return nil
		default:
			return errCanonSyntax
		}
	}
}

// member is one object member already written to out[from:to] as
// "name":value, without separators.
type member struct {
	name     string
	from, to int
}

func (c *canon) object(depth int) error {
	c.i++ // '{'
	start := len(c.out)
	var buf [8]member
	ms := buf[:0]
	c.ws()
	if c.i < len(c.in) && c.in[c.i] == '}' {
		c.i++
		c.out = append(c.out, "{}"...)
		return nil
	}
	for {
		c.ws()
		if c.i >= len(c.in) || c.in[c.i] != '"' {
			return errCanonSyntax
		}
		from := len(c.out)
		name, err := c.str(true)
		if err != nil {
			return err
		}
		c.ws()
		if c.i >= len(c.in) || c.in[c.i] != ':' {
			return errCanonSyntax
		}
		c.i++
		c.out = append(c.out, ':')
		c.ws()
		if err := c.value(depth + 1); err != nil {
			return err
		}
		ms = append(ms, member{name, from, len(c.out)})
		c.ws()
		if c.i >= len(c.in) {
			return errCanonSyntax
		}
		if c.in[c.i] == ',' {
			c.i++
			continue
		}
		if c.in[c.i] != '}' {
			return errCanonSyntax
		}
		c.i++
		break
	}
	sorted := true
	for k := 1; k < len(ms); k++ {
		switch cmp := compareUTF16(ms[k-1].name, ms[k].name); {
		case cmp == 0:
			return fmt.Errorf("duplicate member %q", ms[k].name)
		case cmp > 0:
			sorted = false
		}
	}
	if !sorted {
		slices.SortFunc(ms, func(a, b member) int { return compareUTF16(a.name, b.name) })
		for k := 1; k < len(ms); k++ {
			if ms[k-1].name == ms[k].name {
				return fmt.Errorf("duplicate member %q", ms[k].name)
			}
		}
	}
	// Members were written back to back from start; write them again in
	// order, with separators.
	body := slices.Clone(c.out[start:])
	c.out = append(c.out[:start], '{')
	for k, m := range ms {
		if k > 0 {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, body[m.from-start:m.to-start]...)
	}
	c.out = append(c.out, '}')
	return nil
}

// compareUTF16 orders a and b by their UTF-16 code units, as RFC 8785
// sorts member names. It equals byte order except between a code point
// above U+FFFF (a surrogate pair, 0xD800…) and one in U+E000–U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return cmpUnits(ra, rb)
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

func cmpUnits(a, b rune) int {
	ua, ub := firstUnit(a), firstUnit(b)
	if ua != ub {
		return int(ua) - int(ub)
	}
	// Same high surrogate: the low surrogates order like the code points.
	return int(a) - int(b)
}

func firstUnit(r rune) uint16 {
	if r > 0xFFFF {
		hi, _ := utf16.EncodeRune(r)
		return uint16(hi)
	}
	return uint16(r)
}

// str copies the string at c.i to out in RFC 8785 form and, when name is
// set, also returns its decoded value (for sorting).
func (c *canon) str(name bool) (string, error) {
	c.i++ // opening quote
	begin := c.i
	escaped := false
	for ; c.i < len(c.in); c.i++ {
		ch := c.in[c.i]
		if ch == '"' {
			break
		}
		if ch < 0x20 {
			return "", errCanonSyntax
		}
		if ch == '\\' {
			escaped = true
			c.i++
		}
	}
	if c.i >= len(c.in) {
		return "", errCanonSyntax
	}
	lit := c.in[begin:c.i]
	c.i++ // closing quote
	if !escaped {
		// No escape: RFC 8785 writes the same bytes, provided they are
		// valid UTF-8 (json.Marshal guarantees it; check anyway).
		if !utf8.Valid(lit) {
			return "", errors.New("string is not valid UTF-8")
		}
		c.out = append(c.out, '"')
		c.out = append(c.out, lit...)
		c.out = append(c.out, '"')
		if name {
			return string(lit), nil
		}
		return "", nil
	}
	dec, err := unescape(lit)
	if err != nil {
		return "", err
	}
	c.out = appendJCSString(c.out, dec)
	if name {
		return string(dec), nil
	}
	return "", nil
}

// unescape decodes the body of a JSON string literal.
func unescape(lit []byte) ([]byte, error) {
	out := make([]byte, 0, len(lit))
	for i := 0; i < len(lit); i++ {
		ch := lit[i]
		if ch != '\\' {
			out = append(out, ch)
			continue
		}
		i++
		if i >= len(lit) {
			return nil, errCanonSyntax
		}
		switch lit[i] {
		case '"', '\\', '/':
			out = append(out, lit[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(lit[i+1:])
			if !ok {
				return nil, errCanonSyntax
			}
			i += 4
			if utf16.IsSurrogate(r) {
				// Only a high surrogate followed by an escaped low one
				// makes a character; a lone half has no UTF-8 form.
				var r2 rune
				if r < 0xDC00 && i+6 < len(lit) && lit[i+1] == '\\' && lit[i+2] == 'u' {
					r2, ok = hex4(lit[i+3:])
				}
				full := utf16.DecodeRune(r, r2)
				if !ok || full == utf8.RuneError {
					return nil, errors.New("string holds a lone UTF-16 surrogate")
				}
				r = full
				i += 6
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, errCanonSyntax
		}
	}
	if !utf8.Valid(out) {
		return nil, errors.New("string is not valid UTF-8")
	}
	return out, nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, ch := range b[:4] {
		r <<= 4
		switch {
		case ch >= '0' && ch <= '9':
			r |= rune(ch - '0')
		case ch >= 'a' && ch <= 'f':
			r |= rune(ch - 'a' + 10)
		case ch >= 'A' && ch <= 'F':
			r |= rune(ch - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// appendJCSString writes s (valid UTF-8) as RFC 8785 §3.2.2.2 does: only
// the quote, the backslash and control characters are escaped, with the
// short forms where JSON has one and \u00xx (lowercase) otherwise.
func appendJCSString(out []byte, s []byte) []byte {
	const hexDigits = "0123456789abcdef"
	out = append(out, '"')
	for _, ch := range s {
		switch {
		case ch == '"' || ch == '\\':
			out = append(out, '\\', ch)
		case ch >= 0x20:
			out = append(out, ch)
		case ch == '\b':
			out = append(out, '\\', 'b')
		case ch == '\t':
			out = append(out, '\\', 't')
		case ch == '\n':
			out = append(out, '\\', 'n')
		case ch == '\f':
			out = append(out, '\\', 'f')
		case ch == '\r':
			out = append(out, '\\', 'r')
		default:
			out = append(out, '\\', 'u', '0', '0', hexDigits[ch>>4], hexDigits[ch&0xF])
		}
	}
	return append(out, '"')
}

// appendJCSText is appendJCSString for a Go string, which may hold bytes
// that are not UTF-8: each is written as U+FFFD, as json.Marshal does.
func appendJCSText(out []byte, s string) []byte {
	if utf8.ValidString(s) {
		return appendJCSString(out, []byte(s))
	}
	valid := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		valid = utf8.AppendRune(valid, r) // RuneError for a bad byte
		i += n
	}
	return appendJCSString(out, valid)
}

// number writes the number at c.i as ECMAScript prints its float64, and
// refuses one that float64 does not hold exactly.
func (c *canon) number() error {
	begin := c.i
	for c.i < len(c.in) {
		ch := c.in[c.i]
		if ch >= '0' && ch <= '9' || ch == '-' || ch == '+' || ch == '.' || ch == 'e' || ch == 'E' {
			c.i++
			continue
		}
		break
	}
	n := c.in[begin:c.i]
	// Fast path: a plain integer of at most 15 digits is below 2^53, so
	// its float64 is exact and ECMAScript prints the same digits.
	digits := n
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) > 0 && len(digits) <= 15 && allDigits(digits) && (digits[0] != '0' || len(digits) == 1) {
		if len(n) == 2 && n[0] == '-' && n[1] == '0' { // "-0"
			return fmt.Errorf("number %s has no exact RFC 8785 form; encode it as a string", n)
		}
		c.out = append(c.out, n...)
		return nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || !validJSONNumber(n) || f == 0 && math.Signbit(f) {
		return fmt.Errorf("number %s has no exact RFC 8785 form; encode it as a string", n)
	}
	start := len(c.out)
	c.out = appendES6(c.out, f)
	// An integer must be written as the float64's shortest form:
	// 2^53+1 parses to 2^53 and would hash like it.
	if !bytes.ContainsAny(n, ".eE") && !bytes.Equal(c.out[start:], n) {
		return fmt.Errorf("number %s has no exact RFC 8785 form; encode it as a string", n)
	}
	return nil
}

func allDigits(b []byte) bool {
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return false
		}
	}
	return true
}

// validJSONNumber checks the JSON number grammar (ParseFloat accepts more,
// e.g. "0x1p3", "Inf" or "1_000").
func validJSONNumber(n []byte) bool {
	i := 0
	if i < len(n) && n[i] == '-' {
		i++
	}
	switch {
	case i < len(n) && n[i] == '0':
		i++
	case i < len(n) && n[i] >= '1' && n[i] <= '9':
		i = skipDigits(n, i)
	default:
		return false
	}
	if i < len(n) && n[i] == '.' {
		i++
		d := i
		if i = skipDigits(n, i); i == d {
			return false
		}
	}
	if i < len(n) && (n[i] == 'e' || n[i] == 'E') {
		i++
		if i < len(n) && (n[i] == '+' || n[i] == '-') {
			i++
		}
		d := i
		if i = skipDigits(n, i); i == d {
			return false
		}
	}
	return i == len(n)
}

// skipDigits returns the index of the first byte of n at or after i that
// is not an ASCII digit (len(n) when there is none).
func skipDigits(n []byte, i int) int {
	for i < len(n) && n[i] >= '0' && n[i] <= '9' {
		i++
	}
	return i
}

// appendES6 writes f (finite) as ECMAScript's Number.prototype.toString
// does: the shortest digits that read back as f, in plain notation for
// 1e-6 ≤ |f| < 1e21 and exponent notation (e+21, e-7) outside.
func appendES6(out []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	out = strconv.AppendFloat(out, f, format, -1, 64)
	if format == 'e' {
		// strconv writes a two-digit exponent (1e-07); ECMAScript does not.
		if n := len(out); n >= 4 && out[n-4] == 'e' && out[n-2] == '0' {
			out[n-2] = out[n-1]
			out = out[:n-1]
		}
	}
	return out
}
