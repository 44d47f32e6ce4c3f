package wire

import (
	"time"

	"github.com/homard/homard/internal/channel"
)

// The owner's records, one JSON shape per concept: `homard … --json` and
// the gateway's /api print these same structs (docs/JSON.md documents
// them key by key; docs/API.md points there). Rules: snake_case keys,
// always present (no omitempty); times RFC 3339 in UTC; a time that has
// not happened is null, never a zero date.

// Approval is an approval: `homard approval list|show --json`,
// GET /api/approvals and GET /api/approvals/{id}.
type Approval struct {
	ID       string `json:"id"`
	Tool     string `json:"tool"`
	Status   string `json:"status"`
	Risk     string `json:"risk"`
	Owner    string `json:"owner"`
	Session  string `json:"session"`
	Plan     string `json:"plan"`
	PlanHash string `json:"plan_hash"`
	// Preview is what the call does, computed by homard from the plan,
	// cut to what a card shows (200 lines, 16 KiB); PreviewOmitted counts
	// the lines left out; PreviewKind is "diff", "text" or "". PreviewFull
	// is the whole preview when one approval is asked for, null in lists.
	Preview        string     `json:"preview"`
	PreviewOmitted int        `json:"preview_omitted_lines"`
	PreviewKind    string     `json:"preview_kind"`
	PreviewFull    *string    `json:"preview_full"`
	Targets        []string   `json:"targets"`
	Rule           string     `json:"rule"`
	Reason         string     `json:"reason"`
	Scope          string     `json:"scope"`
	Template       string     `json:"template"`
	CreatedAt      time.Time  `json:"created_at"`
	ExpiresAt      time.Time  `json:"expires_at"`
	DecidedAt      *time.Time `json:"decided_at"`
	DecidedBy      string     `json:"decided_by"`
	ConsumedAt     *time.Time `json:"consumed_at"`
	// Covers is what a session or always answer would let run without
	// asking; "" when only once or deny may be chosen.
	Covers   string `json:"covers"`
	OnceOnly bool   `json:"once_only"`
	NoAlways bool   `json:"no_always"`
	// NeedsCode: approving it needs a code from the owner's
	// authenticator app (permissions.totp); send it as the answer's code.
	NeedsCode bool `json:"needs_code"`
}

// NewApproval is a's JSON object; full adds the whole preview.
func NewApproval(a channel.Approval, full bool) Approval {
	out := Approval{
		ID: a.ID, Tool: a.Tool, Status: a.Status, Risk: a.Risk, Owner: a.Owner, Session: a.Session, Plan: a.Plan,
		PlanHash: a.PlanHash, Preview: a.Preview, PreviewOmitted: a.PreviewOmitted, PreviewKind: PreviewKind(a.Preview, a.PreviewDiff),
		Targets: a.Targets, Rule: a.Rule, Reason: a.Reason, Scope: a.Scope, Template: a.Template,
		CreatedAt: a.CreatedAt.UTC(), ExpiresAt: a.ExpiresAt.UTC(), DecidedAt: timeOrNull(a.DecidedAt), DecidedBy: a.DecidedBy,
		ConsumedAt: timeOrNull(a.ConsumedAt), Covers: a.Covers, OnceOnly: a.OnceOnly, NoAlways: a.NoAlways,
		NeedsCode: a.NeedsCode,
	}
	if out.Targets == nil {
		out.Targets = []string{}
	}
	if full {
		whole := a.PreviewFull
		out.PreviewFull = &whole
	}
	return out
}

// Grant is a standing session or always approval: `homard approval grants
// --json`, GET /api/grants and POST /api/grants/{id}/revoke.
type Grant struct {
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

// NewGrant is g's JSON object; active is judged at now.
func NewGrant(g channel.Grant, now time.Time) Grant {
	out := Grant{ID: g.ID, Tool: g.Tool, Scope: g.Scope, Session: g.Session, Patterns: g.Patterns, Template: g.Template,
		MaxRisk: g.MaxRisk, ApprovalID: g.ApprovalID, CreatedAt: g.CreatedAt.UTC(), ExpiresAt: g.ExpiresAt.UTC(),
		Active: g.RevokedAt.IsZero() && now.Before(g.ExpiresAt), RevokedAt: timeOrNull(g.RevokedAt)}
	if out.Patterns == nil {
		out.Patterns = []string{}
	}
	return out
}

// AuditRecord is one record of the audit chain: `homard audit --json` (one
// per line) and the records of GET /api/audit.
type AuditRecord struct {
	Seq        int64     `json:"seq"`
	Time       time.Time `json:"time"`
	Owner      string    `json:"owner"`
	Session    string    `json:"session"`
	Trust      string    `json:"trust"`
	Tool       string    `json:"tool"`
	Decision   string    `json:"decision"`
	Rule       string    `json:"rule"`
	Reason     string    `json:"reason"`
	Args       string    `json:"args"`
	PlanHash   string    `json:"plan_hash"`
	RunID      string    `json:"run_id"`
	ApprovalID string    `json:"approval_id"`
	Effects    string    `json:"effects"`
	PrevHash   string    `json:"prev_hash"`
	Hash       string    `json:"hash"`
}

// NewAuditRecord is x's JSON object.
func NewAuditRecord(x channel.AuditRecord) AuditRecord {
	return AuditRecord{Seq: x.Seq, Time: x.Time.UTC(), Owner: x.Owner, Session: x.Session, Trust: x.Trust, Tool: x.Tool,
		Decision: x.Decision, Rule: x.Rule, Reason: x.Reason, Args: x.Args, PlanHash: x.PlanHash, RunID: x.RunID,
		ApprovalID: x.ApprovalID, Effects: x.Effects, PrevHash: x.PrevHash, Hash: x.Hash}
}

// timeOrNull is nil for the zero time, else t in UTC.
func timeOrNull(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// Suggestion is a grant homard proposes from the owner's repeated
// approvals: `homard approval suggest --json` (one per line).
type Suggestion struct {
	N        int      `json:"n"` // its number in the list, for `suggest accept N`
	ID       string   `json:"id"`
	Tool     string   `json:"tool"`
	Patterns []string `json:"patterns"`
	MaxRisk  string   `json:"max_risk"`
	// Approvals is how many approvals within the last 7 days it stands
	// for; LastApproval the newest of them.
	Approvals    int    `json:"approvals"`
	LastApproval string `json:"last_approval"`
	// ExpiresIn is how long the grant would last once accepted.
	ExpiresIn string `json:"expires_in"`
}
