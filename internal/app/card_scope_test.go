package app

import (
	"context"
	"errors"
	"testing"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm/llmtest"
)

// findExec is a command that runs code (find -exec): smart mode asks, and
// on the host backend (ungraded: no overlay, no network barrier) the
// approval service takes only once. Tests of once-only cards set
// sandbox.backend = "host" for it; run graded (bwrap, landlock) it takes
// once or session (TestSmartCodingSessionGrant).
const findExec = `{"program":"find","args":[".","-maxdepth","0","-exec","true",";"]}`

// TestCardOffersOnlyWhatItCanGrant: the card of a command that runs code
// outside a graded sandbox (the host backend) is once-only, by the
// approval service's own rule, and a channel that answers "session"
// anyway is asked again instead of ending the turn; the twin, a write's
// card, offers and takes session.
func TestCardOffersOnlyWhatItCanGrant(t *testing.T) {
	r := newTestRuntime(t, "smart")
	r.Config.Sandbox.Backend = "host" // ungraded: once only
	runServer(t, r,
		openAI(toolCall("c1", "run_command", findExec)), openAI(llmtest.Turn{Text: []string{"Not run."}}),
		openAI(toolCall("c2", "write_file", `{"path":"a.md","content":"- tea\n"}`)), openAI(llmtest.Turn{Text: []string{"Wrote it."}}),
	)
	ctx := context.Background()
	var cards []channel.Card
	answers := []channel.Choice{channel.Session, channel.Deny}
	ask := func(_ context.Context, c channel.Card) (channel.Choice, error) {
		cards = append(cards, c)
		a := answers[0]
		answers = answers[1:]
		return a, nil
	}
	res, err := r.Run(ctx, channel.TurnRequest{Text: "find", Session: "s1", Ask: ask})
	if err != nil || res.Text != "Not run." {
		t.Fatalf("Run (session, then deny, on a once-only card) = %+v, %v; want the turn to go on", res, err)
	}
	if len(cards) != 2 || !cards[0].OnceOnly || cards[0].Allows(channel.Session) || cards[0].Allows(channel.Always) || !cards[0].Allows(channel.Once) {
		t.Fatalf("cards = %+v; want one once-only card asked twice", cards)
	}
	if a, _ := r.Owner.Approval(ctx, cards[0].ApprovalID); a.Status != approval.Denied {
		t.Errorf("the run_command approval is %s; want denied", a.Status)
	}
	// The web page and `homard approval` read the same rule.
	if shown, err := r.Admin().Approvals(ctx, ""); err != nil || len(shown) != 1 || !shown[0].OnceOnly || shown[0].Covers != "" {
		t.Errorf("the web's approvals = %+v, %v; want the run_command one once-only, naming no cover", shown, err)
	}

	cards, answers = nil, []channel.Choice{channel.Session}
	res, err = r.Run(ctx, channel.TurnRequest{Text: "write", Session: "s1", Ask: ask})
	if err != nil || res.Text != "Wrote it." {
		t.Fatalf("Run (session on a write) = %+v, %v", res, err)
	}
	if len(cards) != 1 || cards[0].OnceOnly || !cards[0].Allows(channel.Session) {
		t.Fatalf("cards = %+v; want one card offering session", cards)
	}
	if a, _ := r.Owner.Approval(ctx, cards[0].ApprovalID); a.Status != approval.Consumed || a.Scope != approval.ScopeSession {
		t.Errorf("the write's approval is %s %s; want consumed, scope session", a.Status, a.Scope)
	}
}

// TestFailedTurnLapsesItsCards: a turn that fails while its card waits
// stores nothing and tells no one what waits, so the card lapses (expired,
// never approvable); the twin, a turn that ends with its card left
// pending, lists it and keeps it for `homard approval approve`.
func TestFailedTurnLapsesItsCards(t *testing.T) {
	r := newTestRuntime(t, "smart")
	runServer(t, r,
		openAI(toolCall("c1", "write_file", `{"path":"a.md","content":"- tea\n"}`)),
		openAI(toolCall("c2", "write_file", `{"path":"b.md","content":"- tea\n"}`)), openAI(llmtest.Turn{Text: []string{"It waits."}}),
	)
	ctx := context.Background()
	var id string
	gone := errors.New("the channel went away")
	_, err := r.Run(ctx, channel.TurnRequest{Text: "write a", Session: "s1", Ask: func(_ context.Context, c channel.Card) (channel.Choice, error) {
		id = c.ApprovalID
		return channel.Leave, gone
	}})
	if !errors.Is(err, gone) {
		t.Fatalf("Run = %v; want the channel's error", err)
	}
	a, err := r.Owner.Approval(ctx, id)
	if err != nil || a.Status != approval.Expired || !a.Lapsed {
		t.Fatalf("the failed turn's approval = %s lapsed %v, %v; want expired, lapsed", a.Status, a.Lapsed, err)
	}
	if _, err := r.Owner.Approve(ctx, id, "once"); !errors.Is(err, approval.ErrExpired) {
		t.Errorf("approve the lapsed card = %v; want ErrExpired", err)
	}

	res, err := r.Run(ctx, channel.TurnRequest{Text: "write b", Session: "s1", Ask: func(context.Context, channel.Card) (channel.Choice, error) {
		return channel.Leave, nil
	}})
	if err != nil || len(res.Pending) != 1 {
		t.Fatalf("Run (left pending) = %+v, %v; want one pending approval", res, err)
	}
	if a, _ := r.Owner.Approval(ctx, res.Pending[0]); a.Status != approval.Pending || a.Lapsed {
		t.Errorf("the finished turn's card = %s lapsed %v; want pending", a.Status, a.Lapsed)
	}
}

// TestEndedRunLapsesItsCards: a scheduled task's run that ends while its
// card waits leaves no run to use it, so the card lapses (and its chat
// card closes as expired); the twin is
// TestRunWaitsForApprovalFromAnotherChannel, where the answer comes in
// time and the call runs.
func TestEndedRunLapsesItsCards(t *testing.T) {
	r := newTestRuntime(t, "smart")
	runServer(t, r,
		openAI(toolCall("c1", "write_file", `{"path":"report.md","content":"report\n"}`)),
		openAI(toolCall("c2", "complete_task", `{"summary":"could not write report.md"}`)),
	)
	r.Config.Automation.ApprovalWait = 1 // no one answers in time
	in := addApproved(t, r, TaskSpec{Name: "w", Prompt: "write the report", Every: "1h", Tools: []string{"write_file"}})
	runNow(t, r, in.ID)
	ctx := context.Background()
	if list, err := r.Approvals.List(ctx, approval.Pending); err != nil || len(list) != 0 {
		t.Fatalf("pending after the run = %+v, %v; want none", list, err)
	}
	list, err := r.Approvals.List(ctx, approval.Expired)
	if err != nil || len(list) != 1 || !list[0].Lapsed || list[0].Tool != "write_file" {
		t.Fatalf("expired after the run = %+v, %v; want the run's write, lapsed", list, err)
	}
}
