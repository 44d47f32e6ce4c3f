package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/policy"
)

// TestOnModelCall: every model call of a turn is reported once it ended,
// with its step, its own usage and its error; the final answer after a
// spent budget is marked Final.
func TestOnModelCall(t *testing.T) {
	f := newFixture(t, policy.ModeSmart)
	f.write(t, "a.txt", "a\n")
	m := llmtest.NewScripted(call("c1", "read_file", `{"path":"a.txt"}`), call("c2", "read_file", `{"path":"a.txt"}`),
		[]llm.Event{llmtest.Text("done"), llmtest.Usage(7, 3, 2), llmtest.Done(llm.StopEnd)})
	var got []agent.ModelCall
	a := agent.New(agent.Options{
		Model: m, ModelName: "test-model", Decider: f.arb, Tools: f.specs, System: "You are homard.",
		Caller: arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"}, Budget: agent.Budget{MaxCalls: 2},
		OnModelCall: func(mc agent.ModelCall) { got = append(got, mc) },
	})
	if _, err := a.Turn(context.Background(), nil, "read a twice", nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d model calls reported; want 3: %+v", len(got), got)
	}
	for i, mc := range got {
		wantUsage := llm.Usage{Input: 10, Output: 5}
		if i == 2 {
			wantUsage = llm.Usage{Input: 7, Output: 3, Cached: 2}
		}
		if mc.Step != i+1 || mc.Model != "test-model" || mc.Final != (i == 2) || mc.Summary || mc.Err != nil ||
			mc.Usage != wantUsage || mc.Start.IsZero() || mc.Took < 0 {
			t.Errorf("call %d = %+v; want step %d, final %v, usage %+v, no error", i, mc, i+1, i == 2, wantUsage)
		}
	}

	boom := errors.New("provider down")
	got = nil
	a = agent.New(agent.Options{
		Model: llmtest.NewScripted([]llm.Event{llmtest.Fail(boom)}), ModelName: "test-model", Decider: f.arb, System: "s",
		Caller:      arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"},
		OnModelCall: func(mc agent.ModelCall) { got = append(got, mc) },
	})
	if _, err := a.Turn(context.Background(), nil, "hi", nil); !errors.Is(err, boom) {
		t.Fatalf("Turn with a failing model = %v; want %v", err, boom)
	}
	if len(got) != 1 || !errors.Is(got[0].Err, boom) {
		t.Errorf("reported %+v; want one call with the model's error", got)
	}
}
