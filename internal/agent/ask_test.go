package agent_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/policy"
)

// askingAgent is f.agent with an Asker.
func (f *fixture) askingAgent(m llm.Model, ask agent.Asker) *agent.Agent {
	return agent.New(agent.Options{
		Model: m, ModelName: "test-model", Decider: f.arb, Tools: f.specs, System: "You are homard.",
		Caller: arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"}, Ask: ask,
	})
}

// TestAskApprovedRunsTheCallInTheSameTurn: the owner approves the card
// while the turn waits; the same call is proposed again, the arbiter
// consumes the approval and the file is written once.
func TestAskApprovedRunsTheCallInTheSameTurn(t *testing.T) {
	f := newFixture(t, policy.ModeSmart)
	m := llmtest.NewScripted(call("w1", "write_file", `{"path":"out.txt","content":"hi"}`), llmtest.Answer("Written."))
	var asked []arbiter.Outcome
	ask := func(ctx context.Context, c llm.ToolCall, out arbiter.Outcome) (agent.Answer, error) {
		asked = append(asked, out)
		if _, err := f.appr.Approve(ctx, out.ApprovalID, "me", approval.ScopeOnce); err != nil {
			return agent.Left, err
		}
		return agent.Approved, nil
	}
	res, err := f.askingAgent(m, ask).Turn(context.Background(), nil, "write hi to out.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0].Decision != arbiter.Pending || asked[0].PlanHash == "" || !strings.Contains(asked[0].Plan, "out.txt") {
		t.Fatalf("asked %+v; want one pending card showing the plan and its hash", asked)
	}
	if got, err := os.ReadFile(filepath.Join(f.root, "out.txt")); err != nil || string(got) != "hi" {
		t.Fatalf("out.txt = %q, %v; want hi", got, err)
	}
	if len(res.Pending) != 0 || res.Calls != 1 {
		t.Fatalf("Pending %v, Calls %d; want none pending and one call counted", res.Pending, res.Calls)
	}
	content := toolMessages(m.Requests()[1])[0].Content
	if !strings.HasPrefix(content, "decision: ran") {
		t.Fatalf("tool message %q; want the model told the call ran", content)
	}
	a, err := f.appr.Get(context.Background(), asked[0].ApprovalID)
	if err != nil || a.Status != approval.Consumed {
		t.Fatalf("approval %+v, %v; want consumed", a, err)
	}
}

// TestAskDeniedWritesNothing: the owner says no; nothing is written and the
// model is told the owner denied it.
func TestAskDeniedWritesNothing(t *testing.T) {
	f := newFixture(t, policy.ModeSmart)
	m := llmtest.NewScripted(call("w1", "write_file", `{"path":"out.txt","content":"hi"}`), llmtest.Answer("Not written."))
	ask := func(ctx context.Context, c llm.ToolCall, out arbiter.Outcome) (agent.Answer, error) {
		if _, err := f.appr.Deny(ctx, out.ApprovalID, "me"); err != nil {
			return agent.Left, err
		}
		return agent.Denied, nil
	}
	res, err := f.askingAgent(m, ask).Turn(context.Background(), nil, "write hi to out.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.root, "out.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("out.txt exists after a denial (stat: %v)", err)
	}
	content := toolMessages(m.Requests()[1])[0].Content
	if !strings.HasPrefix(content, "decision: denied") || !strings.Contains(content, "the owner denied this call") || len(res.Pending) != 0 {
		t.Fatalf("tool message %q, pending %v; want a denial by the owner and nothing pending", content, res.Pending)
	}
}

// TestAskApprovedButNotRecorded: an Asker that claims approval without
// recording one gets nothing run — the arbiter, not the agent, decides.
func TestAskApprovedButNotRecorded(t *testing.T) {
	f := newFixture(t, policy.ModeSmart)
	m := llmtest.NewScripted(call("w1", "write_file", `{"path":"out.txt","content":"hi"}`), llmtest.Answer("Waiting."))
	ask := func(context.Context, llm.ToolCall, arbiter.Outcome) (agent.Answer, error) { return agent.Approved, nil }
	res, err := f.askingAgent(m, ask).Turn(context.Background(), nil, "write hi to out.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.root, "out.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("out.txt written without a recorded approval (stat: %v)", err)
	}
	if len(res.Pending) != 1 {
		t.Fatalf("Pending = %v; want the call still pending", res.Pending)
	}
}

// TestAskUnansweredAndFailing: an unanswered card leaves the call pending;
// an Asker error ends the turn.
func TestAskUnansweredAndFailing(t *testing.T) {
	f := newFixture(t, policy.ModeSmart)
	m := llmtest.NewScripted(call("w1", "write_file", `{"path":"out.txt","content":"hi"}`), llmtest.Answer("Waiting."))
	unanswered := func(context.Context, llm.ToolCall, arbiter.Outcome) (agent.Answer, error) {
		return agent.Left, nil
	}
	res, err := f.askingAgent(m, unanswered).Turn(context.Background(), nil, "write", nil)
	if err != nil || len(res.Pending) != 1 {
		t.Fatalf("Turn = %v, pending %v; want one pending call", err, res.Pending)
	}

	m = llmtest.NewScripted(call("w1", "write_file", `{"path":"out.txt","content":"hi"}`), llmtest.Answer("never"))
	boom := errors.New("terminal closed")
	failing := func(context.Context, llm.ToolCall, arbiter.Outcome) (agent.Answer, error) {
		return agent.Left, boom
	}
	if _, err := f.askingAgent(m, failing).Turn(context.Background(), nil, "write", nil); !errors.Is(err, boom) {
		t.Fatalf("Turn error = %v; want the Asker's error", err)
	}
}

// TestAskEveryChoice: each answer an Asker may return leads to what the
// Asker contract says. The Asker here records only the denial, so an
// approving answer re-proposes the call (one more result event) but the
// arbiter finds no approval and the call stays pending: the agent never
// approves anything itself.
func TestAskEveryChoice(t *testing.T) {
	for _, tc := range []struct {
		choice  agent.Answer
		results int    // EventToolResult events of the call
		prefix  string // the tool message the model reads starts so
		holds   string // and holds this
		pending int
	}{
		{agent.Approved, 2, "decision: pending", "", 1},
		{agent.Denied, 2, "decision: denied", "the owner denied this call", 0},
		{agent.Lapsed, 2, "decision: pending", "not approved while the turn waited", 1},
		{agent.Left, 1, "decision: pending", "", 1},
		{agent.Answer(99), 1, "decision: pending", "", 1},
	} {
		t.Run(fmt.Sprint(tc.choice), func(t *testing.T) {
			f := newFixture(t, policy.ModeSmart)
			m := llmtest.NewScripted(call("w1", "write_file", `{"path":"out.txt","content":"hi"}`), llmtest.Answer("ok"))
			ask := func(ctx context.Context, c llm.ToolCall, out arbiter.Outcome) (agent.Answer, error) {
				if tc.choice == agent.Denied {
					if _, err := f.appr.Deny(ctx, out.ApprovalID, "me"); err != nil {
						return agent.Left, err
					}
				}
				return tc.choice, nil
			}
			results := 0
			res, err := f.askingAgent(m, ask).Turn(context.Background(), nil, "write hi to out.txt", func(ev agent.Event) {
				if ev.Kind == agent.EventToolResult {
					results++
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(f.root, "out.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("answer %d: out.txt written with no approval recorded (stat: %v)", tc.choice, err)
			}
			content := toolMessages(m.Requests()[1])[0].Content
			if !strings.HasPrefix(content, tc.prefix) || !strings.Contains(content, tc.holds) {
				t.Errorf("answer %d: tool message %q; want it to start %q and hold %q", tc.choice, content, tc.prefix, tc.holds)
			}
			if results != tc.results || len(res.Pending) != tc.pending {
				t.Errorf("answer %d: %d result events, pending %v; want %d events and %d pending", tc.choice, results, res.Pending, tc.results, tc.pending)
			}
		})
	}
}
