package agent_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/policy"
)

// TestEndToolEndsTheTurn: a call of the end tool that the decider ran
// ends the turn at once: a later call of the same answer is refused, not
// run, and no further model call is made. Its twin: a call of the end
// tool the decider did not run (here an unknown tool, an error) does not
// end the turn.
func TestEndToolEndsTheTurn(t *testing.T) {
	f := newFixture(t, policy.ModeYolo)
	f.write(t, "a.txt", "a\n")
	// read_file is the end tool here: any tool the decider runs will do.
	m := llmtest.NewScripted(
		call("c1", "nope", `{}`),
		[]llm.Event{llmtest.Call("c2", "read_file", `{"path":"a.txt"}`), llmtest.Call("c3", "list_dir", `{}`), llmtest.Done(llm.StopToolUse)},
		llmtest.Answer("never asked for"),
	)
	a := agent.New(agent.Options{Model: m, ModelName: "m", Decider: f.arb, Tools: f.specs, EndTool: "read_file",
		Caller: arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"}})
	res, err := a.Turn(context.Background(), nil, "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Ended || res.Stopped != "" || len(m.Requests()) != 2 || m.Remaining() != 1 {
		t.Fatalf("ended %v stopped %q after %d model calls (%d left); want ended after 2", res.Ended, res.Stopped, len(m.Requests()), m.Remaining())
	}
	want := []string{"nope error lookup.unknown", "read_file ran mode.yolo.read", "list_dir denied loop.stopped"}
	if got := f.audited(t); !slices.Equal(got, want) {
		t.Errorf("audit = %q; want %q", got, want)
	}
}

// TestMaxStepsEndsWithoutAnotherModelCall: the calls of the last allowed
// model answer run, then the turn stops without a final-answer call; a
// turn within its step budget is not touched (the twin).
func TestMaxStepsEndsWithoutAnotherModelCall(t *testing.T) {
	for _, c := range []struct {
		steps     int
		wantCalls int
		stopped   bool
	}{{2, 2, true}, {3, 3, false}, {0, 3, false}} {
		f := newFixture(t, policy.ModeYolo)
		f.write(t, "a.txt", "a\n")
		m := llmtest.NewScripted(
			call("c1", "read_file", `{"path":"a.txt"}`),
			call("c2", "list_dir", `{}`),
			llmtest.Answer("done"),
		)
		res, err := f.agent(m, agent.Budget{MaxSteps: c.steps, StepsSetting: "automation.max_turns"}).Turn(context.Background(), nil, "go", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Requests()) != c.wantCalls || (res.Stopped != "") != c.stopped || res.Calls != 2 {
			t.Errorf("MaxSteps %d: %d model calls, stopped %q, %d tool calls; want %d model calls, stopped %v, both tool calls run",
				c.steps, len(m.Requests()), res.Stopped, res.Calls, c.wantCalls, c.stopped)
		}
		if c.stopped && !strings.Contains(res.Stopped, "automation.max_turns") {
			t.Errorf("stop reason %q does not name the setting", res.Stopped)
		}
	}
}
