package agent

import (
	"context"

	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/llm"
)

// Answer is what became of a call the owner was asked about, as the loop
// needs it: whether to propose the call again and what to tell the model.
// The owner's choices themselves (once, this session, always) belong to
// the channels and the approval service; the composition root maps them.
type Answer int

// Answers.
const (
	// Left: the approval stays pending and the model is told the call
	// waits, exactly as when no one was asked. The zero Answer.
	Left Answer = iota
	// Approved: an approval of exactly this call was recorded (through the
	// approval service, bound to the Plan's hash), by the Asker or by
	// someone else; the agent proposes the same call again, so it runs
	// only if the arbiter finds and consumes a real approval.
	Approved
	// Denied: the owner refused the call; the Asker has recorded it.
	Denied
	// Lapsed: no answer came while the turn waited. The approval stays
	// pending (the owner may still approve it later); the model is told
	// the call was not approved while the turn waited.
	Lapsed
)

// Asker asks the owner, while the turn waits, about one call the arbiter
// left pending. out is the pending Outcome: ApprovalID, Plan (the exact
// display), PlanHash and Risk are set. The Asker records the owner's
// answer itself and says what became of the call; the agent never
// approves anything. An error other than ctx's ends the turn.
type Asker func(ctx context.Context, call llm.ToolCall, out arbiter.Outcome) (Answer, error)

// ask gives a pending outcome to the Asker and returns the outcome the
// model should see: the re-proposed call's when approved, a denial when
// the owner said no, and out unchanged otherwise.
func (t *turn) ask(ctx context.Context, c llm.ToolCall, out arbiter.Outcome) (arbiter.Outcome, error) {
	if t.a.ask == nil || out.Decision != arbiter.Pending || out.ApprovalID == "" {
		return out, nil
	}
	ans, err := t.a.ask(ctx, c, out)
	if err != nil {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		return out, err
	}
	switch ans {
	case Approved:
		// The same raw arguments give the same Plan, so the arbiter finds
		// the approval just recorded; a Plan that changed meanwhile (a file
		// edited under it) is a new card, and the model is told it waits.
		again, err := t.a.decider.Decide(ctx, arbiter.Proposal{Tool: c.Name, Args: c.Args, Caller: t.a.caller})
		if err != nil {
			return out, err
		}
		t.onEvent(Event{Kind: EventToolResult, Call: c, Outcome: &again})
		return again, nil
	case Denied:
		denied := out
		denied.Decision = arbiter.Denied
		denied.Reason = "the owner denied this call (approval " + out.ApprovalID + ")"
		t.onEvent(Event{Kind: EventToolResult, Call: c, Outcome: &denied})
		return denied, nil
	case Lapsed:
		lapsed := out
		lapsed.Reason = "not approved while the turn waited; " + out.Reason
		t.onEvent(Event{Kind: EventToolResult, Call: c, Outcome: &lapsed})
		return lapsed, nil
	}
	return out, nil
}
