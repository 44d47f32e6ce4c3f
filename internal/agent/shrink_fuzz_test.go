package agent

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/homard/homard/internal/llm"
)

// FuzzFit checks the request copy: within room when it can be, every
// message kept in place with its role and call id, valid UTF-8 kept valid,
// and the input untouched.
func FuzzFit(f *testing.F) {
	f.Add("short", 100, 3)
	f.Add(strings.Repeat("東京 and beans ", 900), 500, 4)
	f.Add(strings.Repeat("é", 5000)+"\xff", 300, 2)
	f.Fuzz(func(t *testing.T, text string, room, copies int) {
		copies = 1 + abs(copies)%6
		room = abs(room) % 20000
		var msgs []llm.Message
		for i := range copies {
			id := string(rune('a' + i))
			msgs = append(msgs,
				llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Name: "read_file", Args: []byte(`{}`)}}},
				llm.Message{Role: llm.RoleTool, ToolCallID: id, Content: strings.Repeat(text, i+1)})
		}
		before := messagesTokens(msgs)
		orig := make([]string, len(msgs))
		for i, m := range msgs {
			orig[i] = m.Content
		}
		got := fit(msgs, room)
		if len(got) != len(msgs) {
			t.Fatalf("fit: %d messages; want %d", len(got), len(msgs))
		}
		minimum := 0
		for i, m := range got {
			if m.Role != msgs[i].Role || m.ToolCallID != msgs[i].ToolCallID || len(m.ToolCalls) != len(msgs[i].ToolCalls) {
				t.Fatalf("fit: message %d changed role or call id", i)
			}
			if utf8.ValidString(msgs[i].Content) && !utf8.ValidString(m.Content) {
				t.Fatalf("fit: message %d is no longer valid UTF-8", i)
			}
			if msgs[i].Content != orig[i] {
				t.Fatalf("fit modified its input")
			}
			minimum += framing + min(EstimateTokens(msgs[i].Content), keepTokens+40) + messageTokens(llm.Message{ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID})
		}
		after := messagesTokens(got)
		if after > before {
			t.Fatalf("fit grew the messages: %d → %d tokens", before, after)
		}
		if after > room && after > minimum {
			t.Fatalf("fit: %d tokens, room %d, floor %d", after, room, minimum)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// FuzzMessageCut checks MessageCut against fit, its twin: for one user
// message, the count it reports is the one fit's marker names, and 0
// exactly when fit sends the message whole.
func FuzzMessageCut(f *testing.F) {
	f.Add("short", 100, 1)
	f.Add("a", 24000, 120000)
	f.Add("東京 and beans ", 3000, 4000)
	f.Add("é", 300, 5000)
	f.Add("x", 200, 1100)
	f.Fuzz(func(t *testing.T, piece string, room, copies int) {
		room = abs(room) % 40000
		msg := strings.Repeat(piece, 1+abs(copies)%200000/max(1, len(piece)))
		cut := MessageCut(msg, room)
		got := fit([]llm.Message{{Role: llm.RoleUser, Content: msg}}, room)[0].Content
		if cut == 0 {
			if got != msg {
				t.Fatalf("MessageCut = 0 but fit cut the message (%d → %d bytes)", len(msg), len(got))
			}
			return
		}
		if !strings.Contains(got, omittedMarker(cut)) {
			t.Fatalf("MessageCut = %d; fit's copy does not say so: %q", cut, got[:min(len(got), 200)])
		}
	})
}
