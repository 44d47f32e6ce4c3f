package agent_test

import (
	"context"
	"slices"
	"testing"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

// TestForwardRewritesProxyCalls: a proxy call that Forward rewrites is
// proposed, shown and audited as the real tool (same call id), one it
// refuses is audited under the proxy with the refusal's rule and not
// proposed, and a call it passes through is untouched (the twin). The
// stored assistant message keeps the call the model made.
func TestForwardRewritesProxyCalls(t *testing.T) {
	f := newFixture(t, policy.ModeYolo)
	f.write(t, "a.txt", "a\n")
	m := llmtest.NewScripted(
		call("p1", "proxy", `{"to":"read_file"}`),
		call("p2", "proxy", `{"to":"forbidden"}`),
		call("c3", "list_dir", `{}`),
		llmtest.Answer("done"),
	)
	forward := func(c llm.ToolCall) (llm.ToolCall, *tool.Refusal) {
		switch {
		case c.Name != "proxy":
			return c, nil
		case string(c.Args) == `{"to":"read_file"}`:
			return llm.ToolCall{ID: c.ID, Name: "read_file", Args: []byte(`{"path":"a.txt"}`)}, nil
		}
		return c, &tool.Refusal{Rule: policy.RuleLookupProxy, Reason: "not that one"}
	}
	a := agent.New(agent.Options{Model: m, ModelName: "m", Decider: f.arb, Tools: f.specs, Forward: forward,
		Caller: arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"}})
	var seen []string
	res, err := a.Turn(context.Background(), nil, "go", func(e agent.Event) {
		if e.Kind == agent.EventToolCall {
			seen = append(seen, e.Call.ID+" "+e.Call.Name)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"read_file ran mode.yolo.read", "proxy denied lookup.proxy", "list_dir ran mode.yolo.read"}
	if got := f.audited(t); !slices.Equal(got, want) {
		t.Errorf("audit = %q; want %q", got, want)
	}
	if !slices.Equal(seen, []string{"p1 read_file", "c3 list_dir"}) {
		t.Errorf("tool-call events = %q; want the rewritten call with the model's id, then list_dir", seen)
	}
	if res.Calls != 3 {
		t.Errorf("%d calls counted; want 3 (a refused proxy call counts)", res.Calls)
	}
	if c := res.Messages[1].ToolCalls[0]; c.Name != "proxy" || res.Messages[2].ToolCallID != "p1" {
		t.Errorf("stored call %+v answered by %q; want the model's proxy call, answered under its id", c, res.Messages[2].ToolCallID)
	}
}
