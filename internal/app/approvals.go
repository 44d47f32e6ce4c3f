package app

import (
	"context"
	"slices"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/channel"
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

// ApprovalJSON is an approval as `--json` prints it (docs/JSON.md): snake
// case keys, risk as a word, times RFC 3339 UTC, the plan as text and the
// whole preview.
type ApprovalJSON struct {
	ID         string     `json:"id"`
	Tool       string     `json:"tool"`
	Status     string     `json:"status"`
	Risk       string     `json:"risk"`
	Owner      string     `json:"owner"`
	Session    string     `json:"session"`
	Plan       string     `json:"plan"`
	PlanHash   string     `json:"plan_hash"`
	Preview    string     `json:"preview"`
	Targets    []string   `json:"targets"`
	Rule       string     `json:"rule"`
	Reason     string     `json:"reason"`
	Scope      string     `json:"scope"`
	Template   string     `json:"template"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	DecidedAt  *time.Time `json:"decided_at"`
	DecidedBy  string     `json:"decided_by"`
	ConsumedAt *time.Time `json:"consumed_at"`
	// Covers is what a session or always answer would let run without
	// asking; empty when only once or deny may be chosen (a critical
	// plan, a scheduled task's call) or the approval is not pending.
	Covers string `json:"covers"`
	// OnceOnly: only once or deny may answer it; NoAlways: not always
	// (a graded code command: once, session or deny).
	OnceOnly bool `json:"once_only"`
	NoAlways bool `json:"no_always"`
}

// NewApprovalJSON turns an approval into its JSON object.
func NewApprovalJSON(a Approval) ApprovalJSON {
	out := ApprovalJSON{
		ID: a.ID, Tool: a.Tool, Status: string(a.Status), Risk: a.Risk.String(), Owner: a.Owner, Session: a.Session,
		Plan: a.Display, PlanHash: a.PlanHash, Preview: a.Preview, Targets: a.Targets, Rule: a.Rule, Reason: a.Reason,
		Scope: string(a.Scope), CreatedAt: a.CreatedAt.UTC(), ExpiresAt: a.ExpiresAt.UTC(),
		DecidedAt: optTime(a.DecidedAt), DecidedBy: a.DecidedBy, ConsumedAt: optTime(a.ConsumedAt),
	}
	if out.Targets == nil {
		out.Targets = []string{}
	}
	if a.Template != nil {
		out.Template = a.Template.String()
	}
	out.OnceOnly, out.NoAlways = a.OnceOnly(), a.NoAlways()
	if a.Status == approval.Pending && !a.OnceOnly() {
		out.Covers = a.Covers()
	}
	return out
}

// GrantJSON is a grant as `--json` prints it (docs/JSON.md).
type GrantJSON struct {
	ID         string     `json:"id"`
	Tool       string     `json:"tool"`
	Scope      string     `json:"scope"`
	Session    string     `json:"session"`
	Patterns   []string   `json:"patterns"`
	Template   string     `json:"template"`
	MaxRisk    string     `json:"max_risk"`
	ApprovalID string     `json:"approval_id"`
	Active     bool       `json:"active"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

// NewGrantJSON turns a grant into its JSON object; active is as of now.
func NewGrantJSON(g Grant, now time.Time) GrantJSON {
	out := GrantJSON{
		ID: g.ID, Tool: g.Tool, Scope: string(g.Scope), Session: g.Session, Patterns: g.Patterns,
		MaxRisk: g.MaxRisk.String(), ApprovalID: g.ApprovalID, Active: g.Active(now),
		CreatedAt: g.CreatedAt.UTC(), ExpiresAt: g.ExpiresAt.UTC(), RevokedAt: optTime(g.RevokedAt),
	}
	if out.Patterns == nil {
		out.Patterns = []string{}
	}
	if g.Template != nil {
		out.Template = g.Template.String()
	}
	return out
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

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
