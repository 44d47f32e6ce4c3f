package agent

import (
	"context"
	"fmt"
	"sync"

	"github.com/homard/homard/internal/llm"
)

// ContextBudget caps what one model call is sent. The stable prefix
// (system prompt and tools) counts against it. Sizes are estimates (see
// EstimateTokens).
type ContextBudget struct {
	// MaxTokens caps the estimated size of every request. It does not
	// include the answer: leave room for it under the model's window.
	// Zero means 24000.
	MaxTokens int
	// SummaryTokens caps the summary of folded turns. Zero means 1500; it
	// is at most a quarter of MaxTokens.
	SummaryTokens int
}

func (c ContextBudget) withDefaults() ContextBudget {
	if c.MaxTokens <= 0 {
		c.MaxTokens = 24000
	}
	if c.SummaryTokens <= 0 {
		c.SummaryTokens = 1500
	}
	c.SummaryTokens = min(c.SummaryTokens, c.MaxTokens/4)
	return c
}

// Conversation is what a turn continues: the summary of earlier turns that
// were folded, and the whole turns after it, oldest first.
type Conversation struct {
	// Summary is empty when no turn was folded yet.
	Summary string
	// History starts at a user message; it is not modified.
	History []llm.Message
	// Memory are notes recalled from the owner's memory for this turn,
	// best first; empty for anyone but the owner. They are shown as a
	// data block before the user message, within MemoryChars, and count
	// against the budget; they are not part of TurnResult.Messages.
	Memory []MemoryNote
}

// Continue runs one turn of conv, like Turn. When the request would exceed
// the context budget, the oldest whole turns of conv.History are folded
// into the summary; TurnResult.Summary and SummarizedThrough say what the
// next turn continues from.
func (a *Agent) Continue(ctx context.Context, conv Conversation, user string, onEvent func(Event)) (TurnResult, error) {
	return a.runTurn(ctx, conv, user, onEvent)
}

// contextState is the conversation state of one turn: what was folded so far.
type contextState struct {
	memory    llm.Message // the memory block; Content "" when none
	memoryLen int         // its messageTokens
	summary   string
	history   []llm.Message // the part of the given history not folded
	sizes     []int         // messageTokens of each history message
}

// assemble returns the messages of the next request: the summary block,
// the history left and the turn's own messages. It first folds old turns
// if the request would exceed the budget, then, if the turn's own messages
// are still too big, shrinks a copy of them, and returns their estimate
// with them. It fails only when ctx ends.
func (t *turn) assemble(ctx context.Context) ([]llm.Message, int, error) {
	b := t.window
	if t.cs.sizes == nil {
		// The history is the last turn's and a few more messages: Seq
		// counts only those.
		t.cs.sizes = estimates.Seq(t.cs.history, countMessage)
	}
	own := make([]int, len(t.res.Messages))
	current := t.cs.memoryLen
	for i, m := range t.res.Messages {
		own[i] = messageTokens(m)
		current += own[i]
	}
	total := t.a.prefix + summaryBlockTokens(t.cs.summary) + sum(t.cs.sizes) + current
	if total > b.MaxTokens && len(t.cs.history) > 0 {
		// Plan with room for a summary at its cap, so that the new
		// summary cannot push the request over again.
		fixed := t.a.prefix + summaryBlockTokens("") + b.SummaryTokens + current
		if n := foldCount(t.cs.history, t.cs.sizes, fixed, b); n > 0 {
			if err := t.fold(ctx, n); err != nil {
				return nil, 0, err
			}
		}
	}
	// The estimates made above go to fit with their messages: a long
	// history is not counted again for each request of the turn.
	msgs, sizes := getList(), t.sizes[:0]
	if t.cs.summary != "" {
		msgs = append(msgs, summaryMessage(t.cs.summary))
		sizes = append(sizes, summaryBlockTokens(t.cs.summary))
	}
	msgs, sizes = append(msgs, t.cs.history...), append(sizes, t.cs.sizes...)
	if t.cs.memory.Content != "" {
		msgs, sizes = append(msgs, t.cs.memory), append(sizes, t.cs.memoryLen)
	}
	msgs, sizes = append(msgs, t.res.Messages...), append(sizes, own...)
	t.sizes = sizes
	t.list = msgs // to putList once the request is over
	fitted, n := fitSized(msgs, sizes, b.MaxTokens-t.a.prefix)
	return fitted, n, nil
}

// A request's message list is as long as the session's history: made
// afresh for each of a turn's requests it grew the garbage collector's
// share of a turn with the session (issue 22). The lists go back to
// lists once their request's stream is closed, which llm.Model's contract
// allows (Stream does not keep req.Messages past its stream).
var lists sync.Pool // of *[]llm.Message

// maxListed is the longest list kept for reuse.
const maxListed = 1 << 14

func getList() []llm.Message {
	if p, ok := lists.Get().(*[]llm.Message); ok {
		return (*p)[:0]
	}
	return nil
}

// putList hands l back; nothing may use it after. Its messages are
// cleared first: a pooled list must not keep a session's text alive.
func putList(l []llm.Message) {
	if cap(l) == 0 || cap(l) > maxListed {
		return
	}
	clear(l) // past len: cleared when a longer use was put
	l = l[:0]
	lists.Put(&l)
}

// foldCount decides how many leading messages of history to fold: whole
// turns, oldest first, until the rest fits in three quarters of the budget
// (so that folding is not needed again at once), keeping the newest turn
// of history if the rest then fits the whole budget. fixed is what the
// request costs besides history. sizes[i] is the estimate of history[i].
// It returns 0 when nothing needs folding.
func foldCount(history []llm.Message, sizes []int, fixed int, b ContextBudget) int {
	rest := fixed + sum(sizes)
	if rest <= b.MaxTokens {
		return 0
	}
	target := b.MaxTokens - b.MaxTokens/4
	n := 0
	open := 0 // tool calls proposed and not yet answered
	for i := 0; i <= len(history); i++ {
		boundary := i == len(history) || (i > 0 && open == 0 && history[i].Role == llm.RoleUser)
		if boundary {
			if rest <= target || (i == len(history) && rest <= b.MaxTokens) {
				break
			}
			for _, s := range sizes[n:i] {
				rest -= s
			}
			n = i
		}
		if i < len(history) {
			open += len(history[i].ToolCalls)
			if history[i].Role == llm.RoleTool && open > 0 {
				open--
			}
		}
	}
	return n
}

// fold folds the first n history messages into the summary, by a model
// call without tools, or by rules when that call fails. It fails only when
// ctx ends; the turn goes on either way.
func (t *turn) fold(ctx context.Context, n int) error {
	folded := t.cs.history[:n]
	turns := countTurns(folded)
	summary, err := t.summarise(ctx, t.cs.summary, folded)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		summary = ruleSummary(t.cs.summary, folded, t.window.SummaryTokens)
		t.onEvent(Event{Kind: EventCompacted, Text: fmt.Sprintf(
			"the summary call failed (%s); folded %d earlier turns into a rule-based summary", oneLine(err.Error()), turns)})
	} else {
		t.onEvent(Event{Kind: EventCompacted, Text: fmt.Sprintf("summarised %d earlier turns", turns)})
	}
	t.cs.summary = summary
	t.cs.history = t.cs.history[n:]
	t.cs.sizes = t.cs.sizes[n:]
	t.res.Summary = summary
	t.res.SummarizedThrough += n
	return nil
}

// countTurns counts the user messages of ms, at least 1.
func countTurns(ms []llm.Message) int {
	n := 0
	for _, m := range ms {
		if m.Role == llm.RoleUser {
			n++
		}
	}
	return max(n, 1)
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
