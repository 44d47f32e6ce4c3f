package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel"
)

// TestBudgetAddsUpTheSession: /budget shows the last turn and, for the
// session's turns run in this chat, the tokens and the prompt-cache reads
// (hits, with their share of the input) and writes; /new starts the count
// again.
func TestBudgetAddsUpTheSession(t *testing.T) {
	m := New(context.Background(), &fakeRuntime{turn: answer("fine")}, "kitchen", nil)
	t.Cleanup(m.Close)
	turn := func(in, out, cached, written int) channel.TurnResult {
		return channel.TurnResult{Calls: 1, MaxCalls: 24, Units: 2, MaxUnits: 48,
			Usage: channel.Usage{Input: in, Output: out, Cached: cached, CacheWrite: written}}
	}
	steps := []struct {
		name string
		turn *channel.TurnResult // nil: type /new
		want []string
	}{
		{"first turn writes the cache", ptr(turn(2000, 10, 0, 1800)), []string{
			"Last turn: 1 of 24 tool calls, 2 of 48 budget units; tokens: 2000 in (0 cached), 10 out.",
			"This session, 1 turn in this chat: 2000 tokens in, 10 out; prompt cache: 0 tokens read (0% of the input), 1800 written."}},
		{"second turn reads it", ptr(turn(2200, 20, 1800, 300)), []string{
			"tokens: 2200 in (1800 cached), 20 out.",
			"This session, 2 turns in this chat: 4200 tokens in, 30 out; prompt cache: 1800 tokens read (42% of the input), 2100 written."}},
		{"a new session starts again", nil, []string{"No turn has finished yet in this session."}},
		{"its first turn", ptr(turn(100, 1, 50, 0)), []string{
			"This session, 1 turn in this chat: 100 tokens in, 1 out; prompt cache: 50 tokens read (50% of the input), 0 written."}},
	}
	for _, s := range steps {
		if s.turn == nil {
			m.command("/new")
		} else {
			m.done(doneMsg{res: *s.turn})
		}
		got := m.budget()
		for _, w := range s.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: /budget says\n%s\nwant it to contain\n%s", s.name, got, w)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }
