package app

import (
	"context"
	"slices"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/web/wire"
	"github.com/homard/homard/internal/owner"
	"github.com/homard/homard/internal/tool"
)

// Grant is a standing session or always approval, as front ends list it.
type Grant = approval.Grant

// ClipPreview cuts a card's preview to what a card shows (200 lines,
// 16 KiB) and says how many lines it left out; the whole preview is the
// approval's (`homard approval show ID --full`).
func ClipPreview(preview string) (shown string, omitted int) {
	return tool.ClipPreview(preview, 0, 0)
}

// IsDiff reports whether a preview is a unified diff, whose "+", "-" and
// "@@" lines a surface may colour.
func IsDiff(preview string) bool { return tool.IsDiff(preview) }

// awaitAnswer is the owner facade's Await: the one approval waiter.
func (r *Runtime) awaitAnswer(ctx context.Context, id string, within, poll time.Duration) (channel.Choice, error) {
	return r.Owner.Await(ctx, id, within, poll)
}

// ErrGrantNotFound is a grant id that is not one of the owner's grants.
var ErrGrantNotFound = owner.ErrGrantNotFound

// The owner's records in their one JSON shape (channel/web/wire), for
// `--json`: the gateway's /api prints the same structs.
type (
	ApprovalJSON = wire.Approval
	GrantJSON    = wire.Grant
	AuditJSON    = wire.AuditRecord
	// SuggestionJSON is an approval suggestion (homard approval suggest).
	SuggestionJSON = wire.Suggestion
	// Suggestion is a grant homard proposes (approval.Service.Suggest).
	Suggestion = approval.Suggestion
)

// SuggestTTL is how long an accepted suggestion's grant lasts.
const SuggestTTL = approval.SuggestTTL

// NewSuggestionJSON is the n-th suggestion's JSON object.
func NewSuggestionJSON(n int, s approval.Suggestion) SuggestionJSON {
	return wire.Suggestion{N: n, ID: s.ID, Tool: s.Tool, Patterns: s.Patterns, MaxRisk: s.MaxRisk.String(),
		Approvals: s.Count, LastApproval: s.Last, ExpiresIn: approval.SuggestTTL.String()}
}

// NewApprovalJSON is a's JSON object; full adds the whole preview.
func NewApprovalJSON(a Approval, full bool) ApprovalJSON {
	return wire.NewApproval(owner.ShownApproval(a), full)
}

// NewGrantJSON is g's JSON object; active is judged at now.
func NewGrantJSON(g Grant, now time.Time) GrantJSON { return wire.NewGrant(owner.ShownGrant(g), now) }

// NewAuditJSON is x's JSON object.
func NewAuditJSON(x AuditRecord) AuditJSON { return wire.NewAuditRecord(owner.ShownAudit(x)) }

// turnCards collects the approvals a turn's calls left pending, so they
// lapse (approval.Service.Lapse) when the turn ends with no one to use
// them. The agent calls a turn's event handler from one goroutine.
type turnCards struct {
	r     *Runtime
	since time.Time // when the turn started
	ids   []string
}

func (r *Runtime) pendingOf(since time.Time) *turnCards { return &turnCards{r: r, since: since} }

func (t *turnCards) add(out *Outcome) {
	if out != nil && out.Decision == arbiter.Pending && out.ApprovalID != "" && !slices.Contains(t.ids, out.ApprovalID) {
		t.ids = append(t.ids, out.ApprovalID)
	}
}

// lapse expires the collected approvals still pending, even after ctx
// ended (a cancelled turn's cards lapse too). A failure is logged: the
// cards then expire at their time.
func (t *turnCards) lapse(ctx context.Context) {
	if _, err := t.r.Approvals.Lapse(context.WithoutCancel(ctx), t.ids, t.since); err != nil {
		t.r.logger().Warn("lapse the approvals of an ended turn", "err", err)
	}
}
