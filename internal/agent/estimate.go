package agent

import (
	"unicode/utf8"

	"github.com/homard/homard/internal/llm"
)

// The token counts in this package are estimates, not a tokenizer's
// counts: about 4 bytes of ASCII (or other non-CJK UTF-8) per token, and 1
// token per CJK rune, plus a few tokens of framing per message and per
// tool. They are cheap, deterministic and somewhat pessimistic for English
// prose, which is what a budget check needs; leave headroom under the
// model's real context window all the same.

// framing is what one message, tool call or tool definition is assumed to
// cost on top of its text (role, separators, ids).
const framing = 4

// EstimateTokens estimates how many tokens s costs.
func EstimateTokens(s string) int {
	bytes, wide := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			bytes++
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if isWide(r) {
			wide++
		} else {
			bytes += n
		}
		i += n
	}
	return (bytes+3)/4 + wide
}

// isWide reports whether r is a CJK rune (ideographs, kana, hangul, CJK
// punctuation and full-width forms), which tokenizers spend about one
// token on.
func isWide(r rune) bool {
	switch {
	case r >= 0x2E80 && r <= 0x9FFF, // radicals, punctuation, kana, ideographs
		r >= 0xAC00 && r <= 0xD7AF,   // hangul syllables
		r >= 0xF900 && r <= 0xFAFF,   // compatibility ideographs
		r >= 0xFF00 && r <= 0xFFEF,   // full-width forms
		r >= 0x20000 && r <= 0x3FFFF: // ideograph extensions
		return true
	}
	return false
}

// estimates remembers the estimates of long messages: a session's
// history is estimated again for every request of every turn, and counting
// a long message costs more than looking it up.
var estimates llm.Memo[int]

// memoFrom is the size, in bytes of text, from which a message's estimate
// is remembered rather than counted again.
const memoFrom = 512

// messageTokens estimates one message.
func messageTokens(m llm.Message) int {
	size := len(m.Content)
	for _, c := range m.ToolCalls {
		size += len(c.Args)
	}
	if size >= memoFrom {
		return estimates.Get(m, countMessage)
	}
	return countMessage(m)
}

// countMessage counts one message's estimate.
func countMessage(m llm.Message) int {
	n := framing + EstimateTokens(m.Content) + EstimateTokens(m.ToolCallID)
	for _, c := range m.ToolCalls {
		n += framing + EstimateTokens(c.ID) + EstimateTokens(c.Name) + EstimateTokens(string(c.Args))
	}
	return n
}

// messagesTokens estimates a list of messages.
func messagesTokens(ms []llm.Message) int {
	n := 0
	for _, m := range ms {
		n += messageTokens(m)
	}
	return n
}

// prefixTokens estimates the stable prefix: system prompt and tools.
func prefixTokens(system string, tools []llm.ToolSpec) int {
	n := EstimateTokens(system)
	for _, t := range tools {
		n += framing + EstimateTokens(t.Name) + EstimateTokens(t.Description) + EstimateTokens(string(t.Schema))
	}
	return n
}

// EstimateRequest estimates the size of a request: system prompt, tools
// and messages. It is the number the context budget is checked against.
func EstimateRequest(req llm.Request) int {
	return prefixTokens(req.System, req.Tools) + messagesTokens(req.Messages)
}
