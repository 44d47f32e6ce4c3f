package channel

import (
	"context"
	"errors"
	"time"
)

// Admin is what a channel that shows more than one conversation needs
// beyond Runtime (the HTTP gateway): the owner's sessions, approvals,
// audit, memory and scheduled tasks, and API token checks. Everything is the configured
// owner's; nothing here takes an owner from the caller.
type Admin interface {
	TaskAdmin
	// Sessions lists the owner's sessions, the most recently active first.
	Sessions(ctx context.Context) ([]SessionInfo, error)
	// DeleteSession deletes one of the owner's sessions: its conversation
	// goes and it is no longer listed; the audit trail stays. ErrNotFound
	// when there is none; ErrSessionPending, deleting nothing, while one
	// of its approvals waits for the owner; ErrSessionBusy while another
	// process runs a turn in it (the caller checks its own turns).
	DeleteSession(ctx context.Context, id string) error
	// Approvals lists approvals in status ("" for all), newest first.
	// ErrBadQuery for an unknown status.
	Approvals(ctx context.Context, status string) ([]Approval, error)
	// Approval returns one approval, with its status as of now (a lapsed
	// pending one reads "expired"). ErrNotFound when there is none.
	Approval(ctx context.Context, id string) (Approval, error)
	// Answer records the owner's choice on a pending approval: Once,
	// Session, Always or Deny. ErrNotPending when it was already decided,
	// used or expired; ErrBadChoice for another choice or a scope the
	// card does not take (a critical card takes only Once or Deny);
	// ErrCodeNeeded when approving it needs a code from the owner's
	// authenticator (permissions.totp) and code is missing or wrong.
	Answer(ctx context.Context, id string, c Choice, code string) (Approval, error)
	// Await holds until approval id is no longer pending — answered in
	// this process (at once) or another (at the next read): Recorded; or
	// until within passes or it expires: Lapsed. It records nothing.
	Await(ctx context.Context, id string, within time.Duration) (Choice, error)
	// Audit returns a page of records, filtered: after q.After, oldest
	// first; or, with q.Newest, before q.Before (0: from the last), newest
	// first.
	Audit(ctx context.Context, q AuditQuery) (AuditPage, error)
	// Memory returns the owner's memory units matching query; every unit
	// when query is empty.
	Memory(ctx context.Context, query string) ([]MemoryUnit, error)
	// Forget removes one memory unit. ErrNotFound when there is none.
	Forget(ctx context.Context, id string) error
	// Review lists the notes automatic capture proposed that wait for the
	// owner: those contradicting a remembered preference first.
	Review(ctx context.Context) ([]ReviewItem, error)
	// ReviewAnswer accepts (remembers) or dismisses a waiting note; on
	// accept, replace, when set, is a unit forgotten in the same write.
	// ErrNotFound when no note waits with that id.
	ReviewAnswer(ctx context.Context, id string, accept bool, replace string) error
	// WeeklyReview is the weekly memory review waiting for the owner.
	// ErrNotFound when none waits.
	WeeklyReview(ctx context.Context) (WeeklyReview, error)
	// WeeklyAnswer approves (or dismisses) proposal n of the open weekly
	// review, every pending one when n is 0, and returns the review as it
	// is then. ErrNotFound when no review waits or no pending proposal has
	// that number; ErrStale, with the review, when a proposal it
	// approved was stale (a note it names was edited since: it is left
	// alone; the others are applied).
	WeeklyAnswer(ctx context.Context, n int, dismiss bool) (WeeklyReview, error)
	// Grants lists the owner's active grants (standing session or always
	// approvals), newest first.
	Grants(ctx context.Context) ([]Grant, error)
	// RevokeGrant ends one of the owner's grants now; the calls it
	// covered ask again. ErrNotFound when the owner has no such grant.
	RevokeGrant(ctx context.Context, id string) (Grant, error)
	// VerifyToken reports whether token is a valid, unrevoked API token.
	// It compares in constant time and never logs the token.
	VerifyToken(ctx context.Context, token string) (bool, error)
}

// Errors an Admin returns; check them with errors.Is.
var (
	ErrNotFound   = errors.New("not found")
	ErrNotPending = errors.New("this approval is no longer pending")
	ErrBadChoice  = errors.New("invalid choice for this approval")
	// ErrCodeNeeded: approving this card needs a code from the owner's
	// authenticator app (permissions.totp), and none was given or it
	// was refused.
	ErrCodeNeeded = errors.New("approving this needs a code from your authenticator app")
	// ErrBadQuery: a list was asked for with a value it does not know
	// (an approval status).
	ErrBadQuery = errors.New("invalid query")
	// ErrSessionPending: the session cannot be deleted while one of its
	// approvals waits for the owner.
	ErrSessionPending = errors.New("the session has approvals waiting for your answer; approve or deny them first, then delete it")
	// ErrSessionBusy: a turn runs in the session (here or in another
	// process on the same home).
	ErrSessionBusy = errors.New("a turn is running in this session; wait for it to finish or cancel it")
	// ErrStale: a memory review proposal was not applied, a note it names
	// having been edited since the review was made.
	ErrStale = errors.New("memory.md changed since the review was made; run a new review")
)

// Shown is what an Admin answers for a listing: list with each item
// turned by show into what front ends see ([] when empty, never nil), or
// err, without a list, when the listing failed.
func Shown[S, T any](list []S, err error, show func(S) T) ([]T, error) {
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(list))
	for _, x := range list {
		out = append(out, show(x))
	}
	return out, nil
}

// SessionInfo is one of the owner's sessions.
type SessionInfo struct {
	ID        string
	CreatedAt time.Time
	Turns     int       // stored turns
	LastAt    time.Time // the last stored turn's time; CreatedAt when none
	// PrivateSince is when the session first read the owner's private
	// data (files, command output, memory); zero if it never did. From
	// then on its outbound requests may ask (permissions.private_egress).
	PrivateSince time.Time
	// Title is the first words of the owner's first message; empty before
	// the first stored turn. Untrusted text: show it inert.
	Title string
}

// Approval is a card as stored: what it binds and where it stands.
type Approval struct {
	ID       string
	Tool     string
	Status   string // pending, approved, denied, consumed or expired
	Risk     string // low, medium, high or critical
	Session  string
	Plan     string // the exact plan, as shown to people
	PlanHash string // "sha256:<hex>"
	// Reason says why homard asked; empty when not known.
	Reason    string
	CreatedAt time.Time
	ExpiresAt time.Time
	// Preview, PreviewOmitted and PreviewDiff are as in Card; PreviewFull
	// is the whole preview. Empty for approvals made before previews.
	Preview        string
	PreviewOmitted int
	PreviewDiff    bool
	PreviewFull    string
	// OnceOnly: it may only be approved once (or denied), as
	// Card.OnceOnly.
	OnceOnly bool
	// NoAlways: it may not be approved always, as Card.NoAlways.
	NoAlways bool
	// NeedsCode: approving it needs a code from the owner's
	// authenticator, as Card.NeedsCode.
	NeedsCode bool
	// Covers is what a session or always answer would let run without
	// asking; empty when those answers are not offered.
	Covers string
	// Owner, Targets (the paths or hosts the plan touches) and Rule (the
	// policy rule that asked) are as recorded; Scope is the answer's
	// reach once approved; Template a command's argv template. DecidedAt,
	// DecidedBy and ConsumedAt are zero until they happen.
	Owner      string
	Targets    []string
	Rule       string
	Scope      string
	Template   string
	DecidedAt  time.Time
	DecidedBy  string
	ConsumedAt time.Time
}

// Critical reports whether the approval may only be approved once or
// denied.
func (a Approval) Critical() bool { return a.Risk == "critical" }

// Allows reports whether the owner may answer the approval with ch, as
// Card.Allows.
func (a Approval) Allows(ch Choice) bool {
	return allows(ch, a.Critical() || a.OnceOnly, a.NoAlways)
}

// Grant is a standing permission left by a session or always approval.
type Grant struct {
	ID       string
	Tool     string
	Scope    string // session or always
	Session  string // the session a session grant is for; empty for always
	Patterns []string
	// Template is a command grant's argv template, as shown on its card;
	// empty for other tools.
	Template   string
	MaxRisk    string // the highest risk it covers
	ApprovalID string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	RevokedAt  time.Time // zero while not revoked
}

// AuditQuery selects audit records.
type AuditQuery struct {
	After int64 // records with a larger sequence number
	// Newest asks for the newest records first: those with a sequence
	// number smaller than Before (0: from the last record); After is
	// then ignored.
	Newest bool
	Before int64
	Limit  int // at most this many (the Admin caps it)
	// Tool and Decision, when set, keep only records with that tool name
	// and decision (ran, denied, pending, error).
	Tool, Decision string
}

// AuditPage is one page of audit records. Next is the sequence number to
// pass as After (Before, with Newest) for the next page: the last record
// looked at, which may be past the last one returned when a filter
// skipped some. With Newest, Next is 0 when no older record is left.
type AuditPage struct {
	Records []AuditRecord
	Next    int64
}

// AuditRecord is one audit record as shown to the owner. Args is
// redacted.
type AuditRecord struct {
	Seq        int64
	Time       time.Time
	Owner      string
	Session    string
	Trust      string
	Tool       string
	Decision   string
	Rule       string
	Reason     string
	Args       string
	PlanHash   string
	RunID      string
	ApprovalID string
	Effects    string
	PrevHash   string
	Hash       string
}

// ReviewItem is a note automatic capture proposed, waiting for the owner.
type ReviewItem struct {
	ID     string
	Text   string
	Kind   string // fact, preference or task
	Count  int    // how many turns proposed it
	Status string // buffered (waits to be seen again) or review (conflicts)
	// ConflictsWith is the remembered unit it contradicts, if any.
	ConflictsWith string
	Source        string // the session and turn that first proposed it
	FirstSeen     time.Time
}

// WeeklyReview is the weekly memory review: proposals to merge, delete
// or replace the owner's notes, each waiting for the owner's answer. Its
// texts are the model's and the memory's: show them inert. It is its own
// JSON shape (GET /api/memory/weekly, docs/API.md): one type, not a copy
// in wire.
type WeeklyReview struct {
	ID        string           `json:"id"`
	CreatedAt time.Time        `json:"created_at"` // UTC
	Proposals []WeeklyProposal `json:"proposals"`
}

// WeeklyProposal is one proposal of a weekly review.
type WeeklyProposal struct {
	N      int    `json:"n"`
	Action string `json:"action"` // merge, delete or replace
	// Before is the units it names, with their texts now (Gone: no
	// longer in memory).
	Before []MemoryBefore `json:"before"`
	Text   string         `json:"after"` // the proposed text after; "" for a delete
	Reason string         `json:"reason"`
	Status string         `json:"status"` // pending, approved, dismissed or stale
}

// MemoryBefore is a unit a proposal names, as it reads now.
type MemoryBefore struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	Gone bool   `json:"gone"`
}

// MemoryUnit is one thing homard remembers for the owner.
type MemoryUnit struct {
	ID      string
	Text    string
	Kind    string // fact, preference or task
	Source  string // "owner", or "session <id>"
	Created time.Time
	Expires time.Time // zero: never
}
