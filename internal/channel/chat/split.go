package chat

import (
	"strings"
	"unicode/utf8"
)

// Split cuts text into parts of at most max characters each, counted in
// UTF-16 code units (Telegram's measure; never fewer than Discord's
// characters), preferring a paragraph break, then a line break, then a
// space, and cutting inside a word only when a part has none. The break
// itself is dropped; no part is empty. max <= 0 means no limit.
func Split(text string, max int) []string {
	if max <= 0 || units(text) <= max {
		return []string{text}
	}
	var parts []string
	rest := text
	for units(rest) > max {
		cut := prefixBytes(rest, max)
		head := rest[:cut]
		at, skip := -1, 0
		for _, sep := range []string{"\n\n", "\n", " "} {
			if i := strings.LastIndex(head, sep); i > 0 {
				at, skip = i, len(sep)
				break
			}
		}
		if at < 0 {
			at, skip = cut, 0
		}
		parts = append(parts, rest[:at])
		rest = rest[at+skip:]
	}
	if rest != "" {
		parts = append(parts, rest)
	}
	return parts
}

// units counts s in UTF-16 code units.
func units(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// prefixBytes returns the byte length of the longest prefix of s with at
// most max UTF-16 units, never cutting a rune (at least one rune).
func prefixBytes(s string, max int) int {
	n, i := 0, 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if n+w > max && i > 0 {
			break
		}
		n += w
		i += size
	}
	return i
}
