package chat

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// UTF16Len is the length of s in UTF-16 code units: how Telegram counts a
// message's characters (and its entity offsets). A rune above U+FFFF
// counts two; an invalid byte counts one (it is sent as U+FFFD).
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n += runeUnits(r)
	}
	return n
}

func runeUnits(r rune) int {
	if r >= 0x10000 && r <= utf8.MaxRune {
		return 2
	}
	return 1
}

// Split cuts text into parts of at most max UTF-16 code units each, for a
// platform whose messages hold at most max characters. UTF-16 units are
// never fewer than code points, so a part fits a limit counted either way
// (Telegram counts units, Discord code points).
//
// It cuts at the last paragraph break ("\n\n") that fits, else the last
// line break, else the last space, else between two runes that do not
// belong to one grapheme (it keeps a combining mark, a variation
// selector, an emoji modifier, a zero-width joiner's sequence and a flag's
// pair with what they modify, as long as the cluster fits in one part).
// It never splits a rune, so never a surrogate pair. The breaks it cuts at
// are dropped (line breaks at the end of a part and at the start of the
// next, the space it cut at); other text is kept byte for byte.
//
// Empty text gives no parts; text that fits gives itself. Parts made only
// of line breaks are dropped. max below 2 counts as 2 (one rune always fits).
func Split(text string, max int) []string {
	if max < 2 {
		max = 2
	}
	var parts []string
	left := UTF16Len(text) // units in text, kept as text shrinks
	for text != "" {
		if left <= max {
			parts = append(parts, text)
			break
		}
		head, rest := cut(text, max)
		if head != "" {
			parts = append(parts, head)
		}
		rest = strings.TrimLeft(rest, "\n")
		left -= UTF16Len(text[:len(text)-len(rest)])
		text = rest
	}
	return parts
}

// cut returns the first part of text (at most max units, not empty unless
// text starts with breaks) and the rest, without the break between them.
func cut(text string, max int) (head, rest string) {
	// fit is the byte length of the longest prefix within max units.
	fit, units := 0, 0
	for i, r := range text {
		u := runeUnits(r)
		if units+u > max {
			fit = i
			break
		}
		units += u
	}
	window := text[:fit]
	if i := strings.LastIndex(window, "\n\n"); i > 0 {
		return strings.TrimRight(window[:i], "\n"), text[i:]
	}
	if i := strings.LastIndexByte(window, '\n'); i > 0 {
		return strings.TrimRight(window[:i], "\n"), text[i:]
	}
	// A space is a break only if the text after it starts the next part:
	// cutting at the window's end when the next rune is a space is fine too.
	if next, _ := utf8.DecodeRuneInString(text[fit:]); next == ' ' {
		return window, text[fit+1:]
	}
	if i := strings.LastIndexByte(window, ' '); i > 0 {
		return window[:i], text[i+1:]
	}
	if at := graphemeCut(text, fit); at > 0 {
		return text[:at], text[at:]
	}
	if fit == 0 { // the first rune alone is longer than max: cannot happen for max >= 2
		_, size := utf8.DecodeRuneInString(text)
		fit = size
	}
	return text[:fit], text[fit:]
}

// graphemeCut moves a cut at byte offset at back to a point that does not
// split a grapheme cluster (by a cheap approximation of UAX #29), and
// returns 0 when the cluster starts at the beginning (it is longer than a
// part: the caller cuts it at a rune).
func graphemeCut(text string, at int) int {
	for at > 0 {
		prev, psize := utf8.DecodeLastRuneInString(text[:at])
		next, _ := utf8.DecodeRuneInString(text[at:])
		if !joined(text[:at-psize], prev, next) {
			return at
		}
		at -= psize
	}
	return 0
}

// joined reports whether prev and next belong to one grapheme cluster;
// before is the text before prev (for pairs of regional indicators).
func joined(before string, prev, next rune) bool {
	switch {
	case prev == '\r' && next == '\n':
		return true
	case extends(next):
		return true
	case prev == 0x200D: // zero-width joiner: the next rune joins the sequence
		return true
	case isRegional(prev) && isRegional(next):
		// A flag is a pair of regional indicators: next joins prev when
		// an odd number of them come before next.
		n := 1
		for before != "" {
			r, size := utf8.DecodeLastRuneInString(before)
			if !isRegional(r) {
				break
			}
			n++
			before = before[:len(before)-size]
		}
		return n%2 == 1
	}
	return false
}

// extends reports runes that never start a cluster: they modify the one
// before them.
func extends(r rune) bool {
	switch {
	case r == 0x200D, r == 0x200C: // zero-width joiner and non-joiner
		return true
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF: // variation selectors
		return true
	case r >= 0x1F3FB && r <= 0x1F3FF: // emoji skin-tone modifiers
		return true
	case r >= 0xE0020 && r <= 0xE007F: // tags (subdivision flags)
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc)
}

func isRegional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }
