package anthropic

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
)

// wholeRequest is how the request was encoded before the messages' blocks
// were remembered (issue 22): consecutive messages of one role merged
// into one wire message, then one json.Marshal of the whole request. It
// is the oracle the remembered encoding must equal byte for byte.
func wholeRequest(t *testing.T, req llm.Request) []byte {
	t.Helper()
	w := encodeRequest(req)
	w.Messages = []wireMessage{}
	for _, m := range req.Messages {
		role := "user"
		var bs []wireBlock
		switch m.Role {
		case llm.RoleTool:
			bs = []wireBlock{{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content}}
		case llm.RoleAssistant:
			role = "assistant"
			if m.Content != "" {
				bs = append(bs, wireBlock{Type: "text", Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				input := tc.Args
				if !isObject(input) {
					input = json.RawMessage(`{}`)
				}
				bs = append(bs, wireBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: input})
			}
		default:
			bs = []wireBlock{{Type: "text", Text: m.Content}}
		}
		if n := len(w.Messages); n > 0 && w.Messages[n-1].Role == role {
			w.Messages[n-1].Content = append(w.Messages[n-1].Content, bs...)
			continue
		}
		w.Messages = append(w.Messages, wireMessage{Role: role, Content: bs})
	}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEncodeEqualsWholeMarshal: the body built from remembered blocks is
// byte-identical to marshalling the whole request — runs of one role
// merged, an assistant message with nothing to say among them — on the
// first request of a session, on each longer one after it, and after a
// message of the history changed.
func TestEncodeEqualsWholeMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 22))
	for s := range 40 {
		c := New(Options{})
		req := llmtest.RandomRequest(rng, 0)
		for turn := range 6 {
			more := llmtest.RandomRequest(rng, 1+rng.IntN(4)).Messages
			if turn == 2 { // an assistant message with neither text nor calls, twice
				more = append(more, llm.Message{Role: llm.RoleAssistant}, llm.Message{Role: llm.RoleAssistant})
			}
			req.Messages = append(req.Messages, more...)
			if turn == 4 {
				i := rng.IntN(len(req.Messages))
				req.Messages[i].Content += " (edited)"
			}
			got, err := c.encode(req)
			if err != nil {
				t.Fatal(err)
			}
			if want := wholeRequest(t, req); !bytes.Equal(got, want) {
				t.Fatalf("session %d turn %d:\n got %s\nwant %s", s, turn, got, want)
			}
		}
	}
	// Only empty assistant messages: their one wire message has a null
	// content, as json.Marshal writes a nil slice.
	req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleAssistant}}}
	got, err := New(Options{}).encode(req)
	if err != nil {
		t.Fatal(err)
	}
	if want := wholeRequest(t, req); !bytes.Equal(got, want) || !bytes.Contains(got, []byte(`"content":null`)) {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}
