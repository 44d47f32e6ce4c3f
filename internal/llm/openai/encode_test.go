package openai

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
)

// wholeRequest is how the request was encoded before the messages' JSON
// was remembered (issue 22): one json.Marshal of the whole wire request.
// It is the oracle the remembered encoding must equal byte for byte.
func wholeRequest(t *testing.T, req llm.Request) []byte {
	t.Helper()
	w := encodeRequest(req)
	w.Messages = []wireMessage{}
	if req.System != "" {
		s := req.System
		w.Messages = append(w.Messages, wireMessage{Role: "system", Content: &s})
	}
	for _, m := range req.Messages {
		content := m.Content
		wm := wireMessage{Role: string(m.Role), Content: &content, ToolCallID: m.ToolCallID}
		if m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0 {
			if content == "" {
				wm.Content = nil
			}
			for _, tc := range m.ToolCalls {
				wm.ToolCalls = append(wm.ToolCalls, wireToolCall{ID: tc.ID, Type: "function",
					Function: wireFunction{Name: tc.Name, Arguments: string(tc.Args)}})
			}
		}
		w.Messages = append(w.Messages, wm)
	}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEncodeEqualsWholeMarshal: the body built from remembered messages is
// byte-identical to marshalling the whole request, on the first request
// of a session, on each longer one after it (remembered messages reused)
// and after a message of the history changed (its new text is sent, not
// the remembered one).
func TestEncodeEqualsWholeMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 22))
	for s := range 40 {
		c := New(Options{})
		req := llmtest.RandomRequest(rng, 0)
		for turn := range 6 {
			req.Messages = append(req.Messages, llmtest.RandomRequest(rng, 1+rng.IntN(4)).Messages...)
			if turn == 4 && len(req.Messages) > 0 {
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
	if got, want := New(Options{}).wire.Len(), 0; got != want {
		t.Fatalf("a new client remembers %d messages", got)
	}
}
