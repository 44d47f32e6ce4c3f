package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/homard/homard/internal/llm"
)

// When the provider refuses a request as longer than the model's context
// window (llm.ErrContextLength) — the configured budget is larger than the
// real window, or the provider counts tokens differently from
// EstimateTokens — the turn shrinks its own budget to half of what it
// just sent, folds and cuts the conversation to fit it exactly as when
// the budget is exceeded (assemble), and sends the request again. It does
// so once per turn: a second refusal ends the turn with ErrContextTooLong.

// ErrContextTooLong ends a turn whose request the provider refused as too
// long even after the conversation was folded to fit a smaller budget.
var ErrContextTooLong = errors.New("the conversation is too long for the model's context window")

// streamFitting is stream, folding the conversation and trying once more
// when the provider answers that the request is too long.
func (t *turn) streamFitting(ctx context.Context, final bool) (llm.Result, error) {
	got, err := t.stream(ctx, final)
	if err == nil || !errors.Is(err, llm.ErrContextLength) {
		return got, err
	}
	if t.refitted {
		return got, t.tooLong(err)
	}
	t.refitted = true
	t.window = refit(t.window, t.sent, t.a.prefix)
	t.onEvent(Event{Kind: EventCompacted, Text: fmt.Sprintf(
		"the model refused the request as longer than its context window (about %d tokens sent); folding the conversation to about %d tokens and trying once more",
		t.sent, t.window.MaxTokens)})
	got, err = t.stream(ctx, final)
	if errors.Is(err, llm.ErrContextLength) {
		return got, t.tooLong(err)
	}
	return got, err
}

// tooLong is the error that ends the turn after the second refusal.
func (t *turn) tooLong(err error) error {
	return fmt.Errorf("%w (%s), even after folding; start a new session, or set model.context_tokens below the model's window: %w",
		ErrContextTooLong, t.a.name, err)
}

// refit returns the budget for the retry: half of the smaller of the
// budget and what was sent, but never below the stable prefix plus
// minRefitTokens (the retry could hold nothing else). The summary cap
// shrinks with it, as withDefaults would cap it.
func refit(b ContextBudget, sent, prefix int) ContextBudget {
	b.MaxTokens = max(min(b.MaxTokens, sent)/2, prefix+minRefitTokens)
	b.SummaryTokens = min(b.SummaryTokens, b.MaxTokens/4)
	return b
}

// minRefitTokens is the least room a refitted budget leaves after the
// system prompt and tools.
const minRefitTokens = 1000
