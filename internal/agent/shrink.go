package agent

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/homard/homard/internal/llm"
)

// keepTokens is what shrinking leaves of a message at least: its
// beginning and end, with the untrusted markers around tool output.
const keepTokens = 256

// fit returns msgs if their estimate is at most room, and otherwise a
// copy in which the longest contents are cut in the middle, tool results
// first, then other messages, none below keepTokens. No message is
// dropped, so no tool call loses its result; msgs is not modified. When
// even that is not enough, the copy is as small as it can get.
func fit(msgs []llm.Message, room int) []llm.Message {
	sizes := make([]int, len(msgs))
	total := 0
	for i, m := range msgs {
		sizes[i] = messageTokens(m)
		total += sizes[i]
	}
	if total <= room {
		return msgs
	}
	out := slices.Clone(msgs)
	done := make([]bool, len(out)) // each message is cut at most once
	for _, toolsOnly := range []bool{true, false} {
		for total > room {
			i := longest(out, done, toolsOnly)
			if i < 0 {
				break
			}
			text := EstimateTokens(out[i].Content)
			cut := min(total-room+EstimateTokens(omittedMarker(0))+1, text-keepTokens)
			out[i].Content = cutMiddle(out[i].Content, cut*4, "")
			done[i] = true
			n := messageTokens(out[i])
			total += n - sizes[i]
			sizes[i] = n
		}
	}
	return out
}

// longest returns the index of the message with the longest content above
// keepTokens not cut yet (tool messages only, if toolsOnly), or -1.
func longest(ms []llm.Message, done []bool, toolsOnly bool) int {
	best, bestSize := -1, 0
	for i, m := range ms {
		if done[i] || (toolsOnly && m.Role != llm.RoleTool) {
			continue
		}
		if n := EstimateTokens(m.Content); n > keepTokens+8 && n > bestSize {
			best, bestSize = i, n
		}
	}
	return best
}

func omittedMarker(n int) string {
	return fmt.Sprintf("\n[… %d characters omitted from this copy …]\n", n)
}

// cutMiddle removes about n bytes from the middle of s, on rune
// boundaries, and puts marker in their place; an empty marker means
// omittedMarker with the number of runes removed.
func cutMiddle(s string, n int, marker string) string {
	if n <= 0 {
		return s
	}
	if n >= len(s) {
		n = len(s)
	}
	from := (len(s) - n) / 2
	to := from + n
	for from > 0 && !utf8.RuneStart(s[from]) {
		from--
	}
	for to < len(s) && !utf8.RuneStart(s[to]) {
		to++
	}
	if marker == "" {
		marker = omittedMarker(utf8.RuneCountInString(s[from:to]))
	}
	return s[:from] + marker + s[to:]
}
