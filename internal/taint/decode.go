package taint

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"slices"
	"strings"
)

// A model told to smuggle text out encodes it the ways it knows; the
// ledger looks through the usual ones. Each decoding below is applied to
// the whole value and, for base64 and hex, to every long enough run of
// their alphabet inside it (a query parameter, a path segment), at every
// alignment, so that a run that starts mid-value still decodes.

// decoded is one reading of an outbound value.
type decoded struct {
	text     string
	encoding string
}

// minEncoded is the shortest base64 or hex run worth decoding: what
// encodes Window bytes.
const (
	minBase64 = (Window + 2) / 3 * 4
	minBase32 = (Window + 4) / 5 * 8
	minHex    = 2 * Window
)

// maxDecodings bounds the readings of one value, so that a value made of
// many short runs cannot make a check slow.
const maxDecodings = 256

// decodings returns v as given and as it decodes: URL escapes (twice, for
// a value escaped twice), then base32, base64 and hex runs in each of
// those, then each reading reversed and ROT13-rotated.
func decodings(v string) []decoded {
	out := []decoded{{v, ""}}
	seen := map[string]bool{v: true}
	add := func(text, enc string) {
		if len(out) < maxDecodings && !seen[text] && text != "" {
			seen[text] = true
			out = append(out, decoded{text, enc})
		}
	}
	u := v
	for range 2 {
		next, err := url.QueryUnescape(u)
		if err != nil {
			next, err = url.PathUnescape(u)
		}
		if err != nil || next == u {
			break
		}
		add(next, "url")
		u = next
	}
	for _, base := range out {
		for _, r := range runs(base.text, isBase32, minBase32) {
			for off := 0; off < 8 && len(r)-off >= minBase32; off++ {
				if b, ok := unbase32(r[off:]); ok {
					add(b, "base32")
				}
			}
		}
		for _, r := range runs(base.text, isBase64, minBase64) {
			for off := 0; off < 4 && len(r)-off >= minBase64; off++ {
				if b, ok := unbase64(r[off:]); ok {
					add(b, "base64")
				}
			}
		}
		for _, r := range runs(base.text, isHex, minHex) {
			for off := range 2 {
				s := r[off:]
				s = s[:len(s)/2*2]
				if b, err := hex.DecodeString(s); err == nil {
					add(string(b), "hex")
				}
			}
		}
	}
	for _, d := range out[:len(out):len(out)] {
		add(reverse(d.text), join(d.encoding, "reversed"))
		add(rot13(d.text), join(d.encoding, "ROT13"))
	}
	return out
}

// join names an encoding applied over another.
func join(inner, outer string) string {
	if inner == "" {
		return outer
	}
	return inner + ", " + outer
}

// reverse returns s backwards, byte by byte: a reversed ASCII text reads
// back, and a reversed multi-byte character is simply not matched.
func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// rot13 rotates the ASCII letters of s by 13.
func rot13(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z':
			b[i] = 'a' + (c-'a'+13)%26
		case 'A' <= c && c <= 'Z':
			b[i] = 'A' + (c-'A'+13)%26
		}
	}
	return string(b)
}

// runs returns the maximal runs of s whose bytes satisfy in, at least min
// long.
func runs(s string, in func(byte) bool, min int) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && in(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= min {
			out = append(out, s[start:i])
		}
		start = -1
	}
	return out
}

func isBase64(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '+' || c == '/' || c == '-' || c == '_'
}

func isBase32(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '2' <= c && c <= '7'
}

func isHex(c byte) bool {
	return 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' || '0' <= c && c <= '9'
}

// unbase64 decodes s, a run without padding, in the standard or the URL
// alphabet, dropping a last character that does not make a whole byte.
func unbase64(s string) (string, bool) {
	if len(s)%4 == 1 {
		s = s[:len(s)-1]
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return string(b), true
		}
	}
	return "", false
}

// unbase32 decodes s, a run without padding, in the standard alphabet in
// either case, dropping a last part that does not make a whole byte.
func unbase32(s string) (string, bool) {
	s = strings.ToUpper(s)
	for len(s) > 0 {
		if b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(s); err == nil {
			return string(b), true
		}
		s = s[:len(s)-1] // lengths 1, 3 and 6 mod 8 decode to no whole byte
		if len(s)%8 == 0 {
			break
		}
	}
	return "", false
}
