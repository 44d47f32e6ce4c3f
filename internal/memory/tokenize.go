package memory

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens splits text into the search terms the projection indexes and
// queries use. It lowercases, then splits the text into runs of letters,
// digits and combining marks; everything else separates. A run of Chinese,
// Japanese or Korean characters (Han, Hiragana, Katakana, Hangul) becomes
// its overlapping bigrams ("乌龙茶" → "乌龙", "龙茶"), or the character
// itself when the run is one character long; any other run is one word.
// A change of script inside a run ("iphone手机") ends the run.
//
// Tokens never panics; invalid UTF-8 bytes separate like punctuation.
func Tokens(text string) []string {
	var out []string
	Scan(text, func(tok string) { out = append(out, tok) })
	return out
}

// Scan calls emit with each token of text, in order (see Tokens).
func Scan(text string, emit func(tok string)) {
	text = strings.ToLower(text)
	start, prevCJK := -1, false
	flush := func(end int) {
		if start < 0 {
			return
		}
		run := text[start:end]
		start = -1
		if !prevCJK {
			emit(run)
			return
		}
		_, first := utf8.DecodeRuneInString(run)
		if first == len(run) {
			emit(run) // a lone CJK character: its unigram
			return
		}
		for i := 0; i < len(run); {
			_, a := utf8.DecodeRuneInString(run[i:])
			if i+a >= len(run) {
				break
			}
			_, b := utf8.DecodeRuneInString(run[i+a:])
			emit(run[i : i+a+b])
			i += a
		}
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size <= 1 {
			flush(i)
			i += max(size, 1)
			continue
		}
		if !isWordRune(r) {
			flush(i)
			i += size
			continue
		}
		cjk := IsCJK(r)
		if start >= 0 && cjk != prevCJK {
			flush(i)
		}
		if start < 0 {
			start, prevCJK = i, cjk
		}
		i += size
	}
	flush(len(text))
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.No, r)
}

// IsCJK reports whether r is indexed as bigrams: a Han, Hiragana, Katakana
// or Hangul character, or the Katakana prolonged sound mark.
func IsCJK(r rune) bool {
	if r < 0x2E80 {
		return false
	}
	return r == 'ー' || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}
