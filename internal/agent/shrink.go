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
	for i, m := range msgs {
		sizes[i] = messageTokens(m)
	}
	out, _ := fitSized(msgs, sizes, room)
	return out
}

// fitSized is fit given each message's estimate (sizes[i] is
// messageTokens(msgs[i]); it may change sizes), and returns the estimate
// of what it returns as well.
func fitSized(msgs []llm.Message, sizes []int, room int) ([]llm.Message, int) {
	total := sum(sizes)
	if total <= room {
		return msgs, total
	}
	out := slices.Clone(msgs)
	done := make([]bool, len(out)) // each message is cut at most once
	for _, toolsOnly := range []bool{true, false} {
		for total > room {
			i := longest(out, done, toolsOnly)
			if i < 0 {
				break
			}
			cut := cutTokens(total, room, EstimateTokens(out[i].Content))
			out[i].Content = cutMiddle(out[i].Content, cut*4, "")
			done[i] = true
			n := messageTokens(out[i])
			total += n - sizes[i]
			sizes[i] = n
		}
	}
	return out, total
}

// cutTokens is how many tokens fit cuts from a message of text tokens
// when the request is total tokens for room.
func cutTokens(total, room, text int) int {
	return min(total-room+EstimateTokens(omittedMarker(0))+1, text-keepTokens)
}

// MessageCut reports how many runes fit cuts from the middle of msg when
// it is the only message of a request with room tokens left after the
// stable prefix: what the model will not see of an owner's message that
// long. 0 means it is sent whole. A front end warns the owner with it;
// earlier turns are folded before a message is cut, so it is what a turn
// cuts at least.
func MessageCut(msg string, room int) int {
	m := llm.Message{Role: llm.RoleUser, Content: msg}
	total, text := messageTokens(m), EstimateTokens(msg)
	if total <= room || text <= keepTokens+8 {
		return 0
	}
	from, to := middle(msg, cutTokens(total, room, text)*4)
	return utf8.RuneCountInString(msg[from:to])
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
	from, to := middle(s, n)
	if marker == "" {
		marker = omittedMarker(utf8.RuneCountInString(s[from:to]))
	}
	return s[:from] + marker + s[to:]
}

// middle returns the span of about n bytes (n > 0) in the middle of s, on
// rune boundaries, that cutMiddle removes.
func middle(s string, n int) (from, to int) {
	n = min(n, len(s))
	from = (len(s) - n) / 2
	to = from + n
	for from > 0 && !utf8.RuneStart(s[from]) {
		from--
	}
	for to < len(s) && !utf8.RuneStart(s[to]) {
		to++
	}
	return from, to
}
