package agent

import (
	"context"
	"fmt"

	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/policy"
)

// Budget limits the tool calls and model tokens of one turn.
type Budget struct {
	// MaxCalls caps the tool calls of a turn. Zero means DefaultMaxCalls.
	MaxCalls int
	// MaxUnits caps the weighted units of a turn. Zero means 48.
	MaxUnits int
	// Reserve is the last part of MaxUnits that only read-only tools may
	// spend. Zero means 8; a negative value means no reserve.
	Reserve int
	// Weights gives a tool's units by tool name, overriding the weight of
	// its action (read 1, fetch and write 2, exec and send 3; any other 2).
	Weights map[string]int
	// MaxTokens caps the model tokens of a turn: input plus output of
	// every model call, summaries included. After a model call that
	// reached it the turn ends with the text so far; the tool calls of
	// that answer are not run. Zero means no limit.
	MaxTokens int
	// MaxSteps caps the model calls of a turn (summaries not counted):
	// after that many, the calls of the last answer still run, and the
	// turn ends without another model call. Zero means no limit.
	MaxSteps int
	// StepsSetting names the setting MaxSteps came from, for the stop
	// reason.
	StepsSetting string
	// TokensSetting names the setting MaxTokens came from, such as
	// "agent.guest_max_tokens", so the stop reason says what to raise.
	// Empty means "agent.max_tokens".
	TokensSetting string
}

// DefaultMaxCalls is Budget.MaxCalls' default.
const DefaultMaxCalls = 24

func (b Budget) withDefaults() Budget {
	if b.MaxCalls <= 0 {
		b.MaxCalls = DefaultMaxCalls
	}
	if b.MaxUnits <= 0 {
		b.MaxUnits = 48
	}
	if b.Reserve == 0 {
		b.Reserve = 8
	}
	if b.Reserve < 0 {
		b.Reserve = 0
	}
	if b.MaxTokens < 0 {
		b.MaxTokens = 0
	}
	if b.TokensSetting == "" {
		b.TokensSetting = "agent.max_tokens"
	}
	return b
}

// weigh returns the units a call of the named tool costs and whether the
// tool is read-only. An unknown tool costs 1: the arbiter answers it with
// an error without running anything.
func (a *Agent) weigh(name string) (units int, readOnly bool) {
	s, ok := a.byName[name]
	if w, set := a.budget.Weights[name]; set && w > 0 {
		return w, ok && s.ReadOnly
	}
	if !ok {
		return 1, true
	}
	// Actions are compared as strings: agent does not import policy.
	switch string(s.Action) {
	case "read":
		return 1, s.ReadOnly
	case "fetch", "write":
		return 2, s.ReadOnly
	case "exec", "send":
		return 3, s.ReadOnly
	}
	return 2, s.ReadOnly
}

// Budget returns the agent's budget with its defaults filled in, so a
// channel can show how much of it a turn spent.
func (a *Agent) Budget() Budget { return a.budget }

// tokensSpent returns why the turn must stop when its model tokens reached
// the token budget, and "" while they have not (or there is no limit).
func (t *turn) tokensSpent() string {
	b := t.a.budget
	used := t.res.Usage.Input + t.res.Usage.Output
	if b.MaxTokens <= 0 || used < b.MaxTokens {
		return ""
	}
	return fmt.Sprintf("the token budget of this turn is spent (%d of %d model tokens; %s)", used, b.MaxTokens, b.TokensSetting)
}

// stepsSpent returns why the turn must stop before another model call
// when it made MaxSteps of them, and "" while it may go on.
func (t *turn) stepsSpent() string {
	b := t.a.budget
	if b.MaxSteps <= 0 || t.step < b.MaxSteps {
		return ""
	}
	return fmt.Sprintf("the model-call budget of this turn is spent (%d model calls; %s)", b.MaxSteps, b.StepsSetting)
}

// endSpent ends the turn after a model answer that spent the token budget:
// its tool calls are recorded as refused, not run (no model would read
// their results), and its text is the turn's answer. No further model call
// is made: that would spend more tokens past the budget.
func (t *turn) endSpent(ctx context.Context, got llm.Result, stop string) error {
	for _, c := range got.ToolCalls {
		content, err := t.refuse(ctx, c, policy.RuleBudgetTokens, stop)
		if err != nil {
			return err
		}
		t.res.Messages = append(t.res.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: content})
	}
	t.res.Stopped = stop
	t.onEvent(Event{Kind: EventStopped, Text: stop})
	t.res.Text = got.Text
	return nil
}
