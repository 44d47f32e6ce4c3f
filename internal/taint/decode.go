package taint

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
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
	minHex    = 2 * Window
)

// maxDecodings bounds the readings of one value, so that a value made of
// many short runs cannot make a check slow.
const maxDecodings = 256

// decodings returns v as given and as it decodes: URL escapes (twice, for
// a value escaped twice), then base64 and hex runs in each of those.
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
	return out
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
