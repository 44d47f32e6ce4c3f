package app

import (
	"context"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm/llmtest"
)

// TestGuestCallToolLearnsNothing: a guest's model that calls call_tool
// with the name of one of the owner's extension tools, or of one that
// does not exist, reads the same answer, which names only the guest's
// tools: call_tool is not forwarded for a guest. Twin: the owner's
// call_tool of the same two names is forwarded and told the truth.
func TestGuestCallToolLearnsNothing(t *testing.T) {
	h := newMCPHome(t, "smart", "")
	writeSpec(t, h.spec, manyTools())
	h.trust(t, h.open(t))
	r := h.open(t)
	const (
		owners  = `{"name":"mcp__fake__write","arguments":{"path":"notes/a.txt"}}`
		missing = `{"name":"mcp__other__write","arguments":{"path":"notes/a.txt"}}`
	)
	srv := runServer(t, r,
		openAI(toolCall("g1", "call_tool", owners)),
		openAI(llmtest.Turn{Text: []string{"guest done"}}),
		openAI(toolCall("g2", "call_tool", missing)),
		openAI(llmtest.Turn{Text: []string{"guest done"}}),
		openAI(toolCall("o1", "call_tool", owners)),
		openAI(toolCall("o2", "call_tool", missing)),
		openAI(llmtest.Turn{Text: []string{"owner done"}}),
	)
	ctx := context.Background()
	// Each guest call is the first of its own turn, so that nothing else
	// (the half-budget note) tells them apart.
	for _, session := range []string{"g1", "g2"} {
		if _, err := r.Run(ctx, channel.TurnRequest{Text: "hello", As: "guest", Session: session}); err != nil {
			t.Fatalf("guest turn: %v", err)
		}
	}
	if _, err := r.Run(ctx, channel.TurnRequest{Text: "hello", Session: "o", Ask: func(context.Context, channel.Card) (channel.Choice, error) {
		return channel.Leave, nil
	}}); err != nil {
		t.Fatalf("owner turn: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 7 {
		t.Fatalf("%d model requests; want 7", len(reqs))
	}
	// toolMessages are the tool messages the model read before request i.
	toolMessages := func(i int) []string {
		var out []string
		for _, m := range requestMessages(t, reqs[i]) {
			if m.Role == "tool" {
				s, _ := m.Content.(string)
				out = append(out, s)
			}
		}
		return out
	}
	guest := append(toolMessages(1), toolMessages(3)...)
	if len(guest) != 2 {
		t.Fatalf("the guest's model read %d tool messages; want 2", len(guest))
	}
	if guest[0] != guest[1] {
		t.Errorf("the guest learns whether an extension tool exists:\nthe owner's tool: %q\nno such tool:     %q", guest[0], guest[1])
	}
	for _, name := range []string{"mcp__fake", "write_file", "tool_search", "extension"} {
		if strings.Contains(guest[0], name) {
			t.Errorf("the guest's refusal %q names %q", guest[0], name)
		}
	}
	if !strings.Contains(guest[0], "decision: denied") || !strings.Contains(guest[0], "current_time") {
		t.Errorf("the guest's refusal %q; want denied, naming the guest's tool current_time", guest[0])
	}

	// Twin: the owner's call_tool reaches the tool, or says there is none.
	owner := toolMessages(6)
	if len(owner) != 2 || !strings.Contains(owner[0], "decision: pending") || !strings.Contains(owner[1], "no extension tool is named mcp__other__write") {
		t.Errorf("the owner's model read %q; want pending for mcp__fake__write, and no extension tool named mcp__other__write", owner)
	}
}
