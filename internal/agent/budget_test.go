package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/policy"
)

// usedCall is a model answer with some text, one tool call and the usage
// the provider reported for it.
func usedCall(id, name, args string, in, out int) []llm.Event {
	return []llm.Event{llmtest.Text("Looking. "), llmtest.Call(id, name, args), llmtest.Usage(in, out, 0), llmtest.Done(llm.StopToolUse)}
}

// TestTokenBudgetEndsTheTurn: once the turn's model tokens (input +
// output, added up over its model calls) reach Budget.MaxTokens, the turn
// ends after that model call with the text so far, its tool calls are not
// run but audited as budget.tokens, and no further model call is made.
// The twins: under the budget, and with no budget, the turn goes on.
func TestTokenBudgetEndsTheTurn(t *testing.T) {
	write := `{"path":"b.txt","content":"b"}`
	for _, tc := range []struct {
		name      string
		budget    agent.Budget
		script    [][]llm.Event
		calls     int // model calls made
		stopped   string
		text      string
		audit     []string
		wroteFile bool
	}{
		{
			name:   "one call past the budget",
			budget: agent.Budget{MaxTokens: 100, TokensSetting: "agent.guest_max_tokens"},
			script: [][]llm.Event{usedCall("w", "write_file", write, 90, 30), llmtest.Answer("never asked")},
			calls:  1, stopped: "(120 of 100 model tokens; agent.guest_max_tokens)", text: "Looking. ",
			audit: []string{"write_file denied budget.tokens"},
		},
		{
			name:   "exactly the budget, the setting named by default",
			budget: agent.Budget{MaxTokens: 120},
			script: [][]llm.Event{usedCall("w", "write_file", write, 90, 30), llmtest.Answer("never asked")},
			calls:  1, stopped: "(120 of 120 model tokens; agent.max_tokens)", text: "Looking. ",
			audit: []string{"write_file denied budget.tokens"},
		},
		{
			name:   "added up over the model calls",
			budget: agent.Budget{MaxTokens: 100},
			script: [][]llm.Event{usedCall("r", "read_file", `{"path":"a.txt"}`, 40, 10), usedCall("w", "write_file", write, 40, 10), llmtest.Answer("never asked")},
			calls:  2, stopped: "(100 of 100 model tokens", text: "Looking. ",
			audit: []string{"read_file ran mode.yolo.read", "write_file denied budget.tokens"},
		},
		{
			name:   "twin: under the budget the turn goes on",
			budget: agent.Budget{MaxTokens: 1000},
			script: [][]llm.Event{usedCall("w", "write_file", write, 90, 30), llmtest.Answer("Wrote b.txt.")},
			calls:  2, text: "Wrote b.txt.",
			audit: []string{"write_file ran mode.yolo"}, wroteFile: true,
		},
		{
			name:   "twin: no budget, no limit",
			budget: agent.Budget{},
			script: [][]llm.Event{usedCall("w", "write_file", write, 900000, 300000), llmtest.Answer("Wrote b.txt.")},
			calls:  2, text: "Wrote b.txt.",
			audit: []string{"write_file ran mode.yolo"}, wroteFile: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, policy.ModeYolo)
			f.write(t, "a.txt", "a\n")
			m := llmtest.NewScripted(tc.script...)
			var events []agent.Event
			res, err := f.agent(m, tc.budget).Turn(context.Background(), nil, "write b", func(e agent.Event) {
				if e.Kind == agent.EventStopped {
					events = append(events, e)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(m.Requests()); n != tc.calls {
				t.Errorf("%d model calls; want %d", n, tc.calls)
			}
			if tc.stopped == "" {
				if res.Stopped != "" || len(events) != 0 {
					t.Errorf("Stopped = %q (%d stop events); want the turn not stopped", res.Stopped, len(events))
				}
			} else {
				if !strings.HasPrefix(res.Stopped, "the token budget of this turn is spent") || !strings.Contains(res.Stopped, tc.stopped) {
					t.Errorf("Stopped = %q; want the token budget named with %q", res.Stopped, tc.stopped)
				}
				if len(events) != 1 || events[0].Text != res.Stopped {
					t.Errorf("stop events %+v; want one carrying %q", events, res.Stopped)
				}
			}
			if res.Text != tc.text {
				t.Errorf("Text = %q; want %q", res.Text, tc.text)
			}
			if got := f.audited(t); !slices.Equal(got, tc.audit) {
				t.Errorf("audit = %q; want %q", got, tc.audit)
			}
			_, err = os.Stat(filepath.Join(f.root, "b.txt"))
			if wrote := err == nil; wrote != tc.wroteFile {
				t.Errorf("b.txt written = %v; want %v", wrote, tc.wroteFile)
			}
			// Every tool call the turn kept has its tool message.
			ids := map[string]bool{}
			for _, msg := range res.Messages {
				for _, c := range msg.ToolCalls {
					ids[c.ID] = true
				}
				if msg.Role == llm.RoleTool {
					delete(ids, msg.ToolCallID)
				}
			}
			if len(ids) != 0 {
				t.Errorf("tool calls without a tool message: %v", ids)
			}
		})
	}
}
