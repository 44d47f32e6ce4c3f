package memreview

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/memory"
	"github.com/homard/homard/internal/store"
)

// cardButtons is how many proposals get a button of their own: a row
// holds five buttons on Discord, with "Approve all" and "Dismiss". After
// a press the card shows the next pending ones.
const cardButtons = 3

// cardTextRunes caps a note's text on the card.
const cardTextRunes = 200

// Line is proposal p as one line for a person: what it does to which
// units, with their texts now while it is pending (units: the owner's
// units; a unit no longer there says so), the new text and why. The
// texts are the model's and the owner's: a terminal caller prints the
// line through termtext.
func Line(pr lang.Printer, p store.MemoryReviewProposal, units []memory.Unit) string {
	was := p.IDs
	if p.Status == Pending {
		was = nil
		for _, id := range p.IDs {
			t := pr.T("(no longer in memory)")
			for _, u := range units {
				if u.ID == id {
					t = strconv.Quote(cut(u.Text))
				}
			}
			was = append(was, id+" "+t)
		}
	}
	line := pr.T(p.Action) + " " + strings.Join(was, "; ")
	if p.Text != "" {
		line += pr.Sprintf(" → %q", cut(p.Text))
	}
	if p.Reason != "" {
		line += pr.Sprintf(" (why: %s)", cut(p.Reason))
	}
	if p.Status != Pending {
		line += " [" + pr.T(p.Status) + "]"
	}
	return line
}

func cut(s string) string {
	if rs := []rune(s); len(rs) > cardTextRunes {
		return string(rs[:cardTextRunes]) + "…"
	}
	return s
}

// words are the actions and statuses as a person reads them.
var _ = []string{lang.N("merge"), lang.N("delete"), lang.N("replace"),
	lang.N("pending"), lang.N("approved"), lang.N("dismissed"), lang.N("stale")}

// Card is review r as one chat card: its text and its buttons (one per
// pending proposal, up to cardButtons, then "Approve all" and "Dismiss";
// none when nothing is pending). A button's data is
// "v:<review id>:<n|a|x>".
func Card(pr lang.Printer, r store.MemoryReview, units []memory.Unit) (string, []chat.Button) {
	var b strings.Builder
	b.WriteString(pr.Sprintf("Weekly memory review: %d proposals. Nothing changes until you approve one.\n", len(r.Proposals)))
	for _, p := range r.Proposals {
		fmt.Fprintf(&b, "\n%d. %s\n", p.N, Line(pr, p, units))
	}
	if r.Dropped > 0 {
		b.WriteString("\n" + Dropped(pr, r.Dropped) + "\n")
	}
	if r.Status == "open" {
		b.WriteString("\n" + pr.T("On the computer: homard memory review approve N|all, or dismiss [N].") + "\n")
	}
	var buttons []chat.Button
	for _, p := range r.Proposals {
		if p.Status == Pending && len(buttons) < cardButtons {
			buttons = append(buttons, chat.Button{Label: pr.Sprintf("Approve %d", p.N), Data: "v:" + r.ID + ":" + strconv.Itoa(p.N)})
		}
	}
	if len(buttons) > 0 {
		buttons = append(buttons, chat.Button{Label: pr.T("Approve all"), Data: "v:" + r.ID + ":a"},
			chat.Button{Label: pr.T("Dismiss"), Data: "v:" + r.ID + ":x"})
	}
	return b.String(), buttons
}

// Dropped says how many of the model's proposals failed the checks.
func Dropped(pr lang.Printer, n int) string {
	return pr.Sprintf("%d proposals of the model failed the checks and were dropped.", n)
}

// Nothing says that a review found nothing to change.
func Nothing(pr lang.Printer) string {
	return pr.T("Memory review: nothing to change.")
}

// StaleNote says that proposal n was not applied: memory.md changed.
func StaleNote(pr lang.Printer, n int) string {
	return pr.Sprintf("Proposal %d was not applied: memory.md changed since this review was made. Run `homard memory review --now` for a new review.", n)
}

// BadNumber says that s names no proposal.
func BadNumber(pr lang.Printer, s string) string {
	return pr.Sprintf("%q: want a proposal's number or all (homard memory review lists them)", s)
}

// ErrorText is err for a person in pr's language when it is one of the
// package's errors (ErrTooFew, ErrNoReview, ErrProposal, a *ModelError),
// else err's own text.
func ErrorText(pr lang.Printer, err error) string {
	var me *ModelError
	switch {
	case errors.Is(err, ErrTooFew):
		return pr.T("memory holds fewer than two notes: nothing to review")
	case errors.Is(err, ErrNoReview):
		return pr.T("no memory review waits with that id (homard memory review --now makes one)")
	case errors.Is(err, ErrProposal):
		return pr.T("the review has no waiting proposal with that number")
	case errors.As(err, &me):
		return pr.Sprintf("the review model could not be asked (only exact duplicates were looked for): %v", me.Err)
	}
	return err.Error()
}

// ParseButton reads a review card's button data "v:<review id>:<n|a|x>":
// n a proposal's number (0 for a and x), dismiss for x.
func ParseButton(data string) (id string, n int, dismiss, ok bool) {
	f := strings.Split(data, ":")
	if len(f) != 3 || f[0] != "v" || !strings.HasPrefix(f[1], "rv_") || len(f[1]) > 40 {
		return "", 0, false, false
	}
	switch f[2] {
	case "a":
		return f[1], 0, false, true
	case "x":
		return f[1], 0, true, true
	}
	n, err := strconv.Atoi(f[2])
	if err != nil || n < 1 || n > memory.MaxChanges {
		return "", 0, false, false
	}
	return f[1], n, false, true
}

// Press answers a review card's button (data as ParseButton reads it) for
// the owner, whom the caller has checked is the presser, and returns the
// card as it is then.
func (s *Service) Press(ctx context.Context, data string) (string, []chat.Button, error) {
	id, n, dismiss, ok := ParseButton(data)
	if !ok {
		return "", nil, ErrNoReview
	}
	r, err := s.Answer(ctx, id, n, dismiss)
	if err != nil {
		return "", nil, err
	}
	s.mu.Lock()
	audit := s.audit
	s.mu.Unlock()
	if audit != nil {
		what, summary := "memory.review-approve", "the owner approved memory review proposals in a chat" // lang:en
		if dismiss {
			what, summary = "memory.review-dismiss", "the owner dismissed memory review proposals in a chat" // lang:en
		}
		if err := audit(ctx, what, "owner.memory", summary, map[string]string{"review": r.ID, "proposal": strconv.Itoa(n), "via": "chat"}, nil); err != nil {
			return "", nil, err
		}
	}
	units, _, err := s.d.Memory.List(ctx, s.d.Owner)
	if err != nil {
		return "", nil, err
	}
	text, buttons := Card(lang.Printer{}, r, units)
	return text, buttons, nil
}
