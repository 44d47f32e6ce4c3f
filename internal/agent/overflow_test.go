package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/policy"
)

// windowModel is a model with a context window of limit bytes of message
// text: a longer request is refused as the providers do (HTTP 400,
// llm.ErrContextLength); any other is answered "done" (or a short summary).
func windowModel(limit int) *llmtest.Func {
	return llmtest.NewFunc(func(call int, req llm.Request) []llm.Event {
		n := len(req.System)
		for _, m := range req.Messages {
			n += len(m.Content)
		}
		if n > limit {
			return []llm.Event{llmtest.Fail(&llm.APIError{Provider: "openai", Status: 400, Kind: llm.ErrContextLength,
				Message: fmt.Sprintf("This model's maximum context length is %d. However, your messages resulted in %d.", limit, n)})}
		}
		if isSummaryCall(req) {
			return llmtest.Answer("The owner planned the allotment.")
		}
		return llmtest.Answer("done")
	})
}

// TestContextLengthFoldsAndRetriesOnce: a request refused as too long is
// folded to fit a smaller budget and sent once more; a second refusal ends
// the turn with ErrContextTooLong and a message saying what to do; the
// twin, a conversation that fits, is sent once and never folded.
func TestContextLengthFoldsAndRetriesOnce(t *testing.T) {
	// Six earlier turns of about 8 KB each: about 12000 estimated tokens,
	// within the agent's 24000 budget, so the agent sends them all.
	var history []llm.Message
	for i := range 6 {
		history = append(history,
			llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("Turn %d. ", i) + strings.Repeat("Beans in the north bed. ", 340)},
			llm.Message{Role: llm.RoleAssistant, Content: "Noted."})
	}
	tests := []struct {
		name      string
		limit     int  // the model's window, in bytes of message text
		wantErr   bool // the turn ends with ErrContextTooLong
		wantMain  int  // requests other than summary calls
		wantFold  bool // earlier turns were folded
		wantEvent bool // an EventCompacted tells of the refusal
	}{
		{"refused once, then fits", 30000, false, 2, true, true},
		{"refused even after folding", 500, true, 2, true, true},
		{"twin: fits the window", 1 << 20, false, 1, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, policy.ModeSmart)
			m := windowModel(tt.limit)
			a := agent.New(agent.Options{
				Model: m, ModelName: "tiny-model", Decider: f.arb, Tools: f.specs, System: "You are homard.",
				Caller: arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"},
			})
			var told []string
			res, err := a.Continue(context.Background(), agent.Conversation{History: history}, "What goes where?", func(e agent.Event) {
				if e.Kind == agent.EventCompacted && strings.Contains(e.Text, "context window") {
					told = append(told, e.Text)
				}
			})
			main := 0
			for _, req := range m.Requests() {
				if !isSummaryCall(req) {
					main++
				}
			}
			if main != tt.wantMain {
				t.Errorf("model got %d requests besides summaries; want %d (one retry at most)", main, tt.wantMain)
			}
			if (len(told) > 0) != tt.wantEvent {
				t.Errorf("refusal events %q; want some: %v", told, tt.wantEvent)
			}
			if tt.wantErr {
				if !errors.Is(err, agent.ErrContextTooLong) || !errors.Is(err, llm.ErrContextLength) {
					t.Fatalf("Continue = %v; want ErrContextTooLong wrapping llm.ErrContextLength", err)
				}
				for _, want := range []string{"tiny-model", "start a new session", "model.context_tokens"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				return
			}
			if err != nil || res.Text != "done" {
				t.Fatalf("Continue = %q, %v; want the answer", res.Text, err)
			}
			if folded := res.SummarizedThrough > 0 && res.Summary != ""; folded != tt.wantFold {
				t.Errorf("folded %d messages (summary %q); want folding: %v", res.SummarizedThrough, res.Summary, tt.wantFold)
			}
		})
	}
}
