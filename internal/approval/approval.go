// Package approval keeps the owner's approvals and grants (DESIGN.md §2.7).
//
// An approval is bound to a Binding: tool name + SHA-256 of the canonical
// Plan + owner + session. It is created pending with an expiry, decided
// once by its owner (approve or deny), and an approved one is consumed by
// exactly one run of exactly that Plan in exactly that session. A changed
// argument is a new Plan hash and so a new approval; a replayed, expired or
// foreign approval is refused with an error saying why.
//
// Approving with scope session or always also creates a Grant: a standing,
// expiring permission for the same owner and tool over path patterns
// derived from the Plan's targets (see Patterns), covering Plans up to the
// approved Plan's risk. Critical Plans are only ever approved once and are
// never covered by a grant. Approval.OnceOnly says which approvals take
// only once, by the same rule Approve enforces.
//
// A command's grant is not a path pattern but an argv template
// (policy.Template): the card shows it before the owner picks a scope, the
// grant stores it, and MatchCommandGrant covers only commands that fit it.
// A command that runs code is approved once, or for the session when it
// runs graded (policy.Template.Graded: sandboxed, no network, its changes
// graded before they apply); never always.
//
// Identical Plans share one card: a Request matching a pending approval's
// binding returns it. At most Options.MaxPending cards wait in one
// session. An approval for a Plan that runs the workspace's code is
// consumed with ConsumeUnchanged, and lapses when the workspace changed
// after its card was drawn. A card its turn left pending when that turn
// failed, or its task run ended, lapses too (Lapse): nothing can use it.
//
// Every state change is a conditional UPDATE inside one store.Write
// transaction, so concurrent approvers or consumers cannot both win. SQL
// lives in package store; the rules live here.
package approval

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
)

// Status is the state of an approval as seen now.
type Status string

// Approval statuses. Expired is derived on read: a pending or approved
// approval whose expiry has passed is shown as expired.
const (
	Pending  Status = "pending"
	Approved Status = "approved"
	Denied   Status = "denied"
	Consumed Status = "consumed"
	Expired  Status = "expired"
)

// Scope is how far an approval reaches.
type Scope string

// Approval scopes.
const (
	ScopeOnce    Scope = "once"    // this Plan, one run
	ScopeSession Scope = "session" // plus a grant for this session
	ScopeAlways  Scope = "always"  // plus a grant for every session, expiring
)

func (s Scope) valid() bool { return s == ScopeOnce || s == ScopeSession || s == ScopeAlways }

// Binding is what an approval is bound to. All four must match to consume.
type Binding struct {
	Tool     string
	PlanHash string // hex SHA-256 of the canonical Plan
	Owner    string
	Session  string
}

// Approval is one request for the owner's decision.
type Approval struct {
	ID string
	Binding
	Display string
	Plan    []byte // canonical JSON; PlanHash is its SHA-256
	Targets []string
	Risk    policy.Risk
	// Reach is the call's blast class (policy.ReachOf its Plan);
	// ReachNone on cards stored before homard recorded it, which
	// Approval.Blast reads as the highest class.
	Reach      policy.Reach
	Status     Status
	Scope      Scope // empty until approved
	CreatedAt  time.Time
	ExpiresAt  time.Time
	DecidedAt  time.Time
	DecidedBy  string
	ConsumedAt time.Time
	// Rule and Reason say why approval was asked (the policy decision).
	Rule   string
	Reason string
	// Template is what a session or always approval of a command would
	// grant; nil for other tools.
	Template *policy.Template
	// Preview is what the card shows below Display (tool.Plan.Preview,
	// redacted): a write's diff, a command's argv. Display only: the
	// binding is PlanHash.
	Preview string
	// Lapsed says homard expired it before its time (Status Expired): its
	// turn ended while it waited (Lapse), or the workspace changed after
	// it was approved (ConsumeUnchanged).
	Lapsed bool
}

// Card is what a pending approval shows the owner: the exact Plan and why
// homard asks.
type Card struct {
	Display string
	Plan    []byte // canonical JSON; its SHA-256 must be the binding's PlanHash
	Targets []string
	Risk    policy.Risk
	// Reach is the call's blast class (policy.ReachOf its Plan); a card
	// without one is read as the highest class.
	Reach  policy.Reach
	Rule   string // the policy rule that asked, e.g. mode.safe
	Reason string // already redacted
	// Template is a command Plan's argv template (policy.Template.String
	// is what the owner reads before choosing a scope); nil for other
	// tools.
	Template *policy.Template
	// Preview is the Plan's preview, already redacted. It is not checked
	// against Plan: it is display, computed by homard from the Plan.
	Preview string
}

// Options configures a Service.
type Options struct {
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// TTL is how long a pending approval can be decided, and how long an
	// approved one can then be consumed (counted from the decision).
	// Zero means 30 minutes.
	TTL time.Duration
	// SessionTTL is the lifetime of a session grant. Zero means 12 hours.
	SessionTTL time.Duration
	// AlwaysTTL is the lifetime of an always grant. Zero means 720 hours.
	AlwaysTTL time.Duration
	// MaxPending caps the unexpired pending approvals of one owner in one
	// session; a further Request fails with ErrTooManyPending (a request
	// matching a pending card still gets that card). Zero means 20.
	MaxPending int
}

// Service manages approvals and grants. It is safe for concurrent use.
type Service struct {
	st         *store.Store
	now        func() time.Time
	ttl        time.Duration
	sessionTTL time.Duration
	alwaysTTL  time.Duration
	maxPending int

	// waiters are the Waits of this process, by approval id (wait.go).
	waitMu  sync.Mutex
	waiters map[string][]chan struct{}
	// listen starts, at the first Wait, listening for answers recorded by
	// other processes on a shared database (store.Listen).
	listen sync.Once
}

// New returns a Service over st.
func New(st *store.Store, o Options) *Service {
	s := &Service{st: st, now: o.Now, ttl: o.TTL, sessionTTL: o.SessionTTL, alwaysTTL: o.AlwaysTTL, maxPending: o.MaxPending}
	if s.maxPending <= 0 {
		s.maxPending = DefaultMaxPending
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.ttl <= 0 {
		s.ttl = 30 * time.Minute
	}
	if s.sessionTTL <= 0 {
		s.sessionTTL = 12 * time.Hour
	}
	if s.alwaysTTL <= 0 {
		s.alwaysTTL = 720 * time.Hour
	}
	return s
}

// DefaultMaxPending is Options.MaxPending's default.
const DefaultMaxPending = 20

// Request returns the unexpired pending approval with exactly this binding,
// or creates one: identical Plans share one card. It also records the
// session for the owner; a session that belongs to another owner is
// refused (store.ErrSessionOwner). A new card beyond MaxPending waiting in
// the session is refused with ErrTooManyPending.
func (s *Service) Request(ctx context.Context, b Binding, c Card) (Approval, error) {
	plan, risk := c.Plan, c.Risk
	if b.Tool == "" || b.PlanHash == "" || b.Owner == "" || b.Session == "" {
		return Approval{}, fmt.Errorf("request approval: %w: the binding needs tool, plan hash, owner and session", ErrInvalidRequest)
	}
	if risk < policy.RiskLow || risk > policy.RiskCritical {
		return Approval{}, fmt.Errorf("request approval: %w: unknown risk %v", ErrInvalidRequest, risk)
	}
	if sum := sha256.Sum256(plan); hex.EncodeToString(sum[:]) != b.PlanHash {
		return Approval{}, fmt.Errorf("request approval for %s: %w", b.Tool, ErrPlanMismatch)
	}
	tmpl, err := encodeTemplate(c.Template)
	if err != nil {
		return Approval{}, fmt.Errorf("request approval for %s: %w", b.Tool, err)
	}
	now := s.now()
	var out store.Approval
	err = s.st.Write(ctx, func(tx *store.Tx) error {
		if err := tx.EnsureSession(b.Session, b.Owner, now); err != nil {
			return err
		}
		existing, err := tx.PendingApproval(b.Tool, b.PlanHash, b.Owner, b.Session, now)
		if err == nil {
			out = existing
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if n, err := tx.CountPending(b.Owner, b.Session, now); err != nil {
			return err
		} else if n >= s.maxPending {
			return fmt.Errorf("%w (%d are waiting)", ErrTooManyPending, n)
		}
		out = store.Approval{
			ID: newID("ap_"), Tool: b.Tool, PlanHash: b.PlanHash, Owner: b.Owner, SessionID: b.Session,
			Display: c.Display, Plan: slices.Clone(plan), Targets: slices.Clone(c.Targets), Risk: int(risk), Reach: int(c.Reach),
			Status: string(Pending), CreatedAt: now, ExpiresAt: now.Add(s.ttl), Rule: c.Rule, Reason: c.Reason,
			Template: tmpl, Preview: c.Preview,
		}
		return tx.InsertApproval(out)
	})
	if err != nil {
		return Approval{}, fmt.Errorf("request approval for %s: %w", b.Tool, err)
	}
	return fromRow(out, now), nil
}

// Session prefixes of callers nobody watches from homard's side.
const (
	// TaskSessionPrefix starts the session of every scheduled task's run
	// ("task-<id>").
	TaskSessionPrefix = "task-"
	// PairedSessionPrefix starts the session of an MCP client using
	// homard as its tool layer (`homard mcp serve`).
	PairedSessionPrefix = "mcp-"
)

// OnceOnlySession reports whether the approvals asked in session may only
// be approved once: a scheduled task's run or another program's model,
// which nobody here watches, so an approval for the session or for always
// would reach calls the owner never saw.
func OnceOnlySession(session string) bool {
	return strings.HasPrefix(session, TaskSessionPrefix) || strings.HasPrefix(session, PairedSessionPrefix)
}

// OnceOnly reports whether a may only be approved once (or denied): the
// rule Approve enforces, so that every card offers only the answers it
// can take. See scopeRefused.
func (a Approval) OnceOnly() bool {
	return scopeRefused(ScopeSession, a.Risk, a.Session, a.Template) != nil
}

// NoAlways reports whether a may not be approved always (a once-only
// approval may not either): by the rule Approve enforces, a command that
// runs code is granted for its session at most. See scopeRefused.
func (a Approval) NoAlways() bool {
	return scopeRefused(ScopeAlways, a.Risk, a.Session, a.Template) != nil
}

// scopeRefused says why an approval of a Plan of this risk, asked in
// session, of a command with template t (nil for other tools), may not be
// approved with scope (an error wrapping ErrScopeNotAllowed), or nil when
// it may. It is the one rule: decide enforces it, Approval.OnceOnly and
// Approval.NoAlways show it.
//
// A command that runs code (a build, a test) may be granted for the
// session only when it runs graded (policy.Template.Graded): confined,
// with no network, on an overlay whose change set the gate grades, so
// what a covered run changes is still held above the mode's limit. Never
// always: an always grant would reach other sessions, a scheduled task's
// runs among them, running whatever the workspace holds by then, for
// weeks, with nobody watching; a session grant ends with the session the
// owner is watching (and in permissions.session_ttl at most).
func scopeRefused(scope Scope, risk policy.Risk, session string, t *policy.Template) error {
	if scope == ScopeOnce {
		return nil
	}
	switch {
	case risk >= policy.RiskCritical:
		return fmt.Errorf("%w: it is critical", ErrScopeNotAllowed)
	case OnceOnlySession(session):
		return fmt.Errorf("%w: it was asked by a scheduled task's run or another program, whose approval covers one call", ErrScopeNotAllowed)
	case t != nil && !t.Grantable():
		return fmt.Errorf("%w: %s runs code outside a graded sandbox (the host backend, or a read-only root), and the next run could do anything else", ErrScopeNotAllowed, t.String())
	case t != nil && t.RunsCode && scope != ScopeSession:
		return fmt.Errorf("%w: %s runs code; it may be approved for this session at most", ErrScopeNotAllowed, t.String())
	}
	return nil
}

// Approve records the owner's yes. Only the approval's owner may decide,
// only once, only before it expires. Scope session or always also creates
// a grant (see the package doc); a critical Plan may only be approved once.
func (s *Service) Approve(ctx context.Context, id, approver string, scope Scope) (Approval, error) {
	if !scope.valid() {
		return Approval{}, fmt.Errorf("approve %s: %w (got %q)", id, ErrInvalidScope, scope)
	}
	return s.decide(ctx, "approve", id, approver, Approved, scope)
}

// Deny records the owner's no, with the same checks as Approve.
func (s *Service) Deny(ctx context.Context, id, approver string) (Approval, error) {
	return s.decide(ctx, "deny", id, approver, Denied, "")
}

func (s *Service) decide(ctx context.Context, op, id, approver string, to Status, scope Scope) (Approval, error) {
	now := s.now()
	var out store.Approval
	err := s.st.Write(ctx, func(tx *store.Tx) error {
		row, err := tx.GetApproval(id)
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		switch {
		case row.Owner != approver:
			return ErrForeignOwner
		case row.Status == string(Expired):
			return ErrExpired
		case row.Status != string(Pending):
			return ErrAlreadyDecided
		case !now.Before(row.ExpiresAt):
			return ErrExpired
		case to == Approved && scope != ScopeOnce:
			var tmpl *policy.Template
			if row.Template != "" {
				t, err := decodeTemplate(row.Template)
				if err != nil {
					return err
				}
				tmpl = &t
			}
			if err := scopeRefused(scope, policy.Risk(row.Risk), row.SessionID, tmpl); err != nil {
				return err
			}
		}
		expires := row.ExpiresAt
		if to == Approved {
			expires = now.Add(s.ttl) // time to consume it, counted from the decision
		}
		// The conditions above, again, in the UPDATE itself: the row
		// changes only if it is still pending, unexpired and ours.
		changed, err := tx.DecideApproval(store.ApprovalDecision{
			ID: id, Approver: approver, Status: string(to), Scope: string(scope), Now: now, ExpiresAt: expires,
		})
		if err != nil {
			return err
		}
		if !changed {
			return ErrAlreadyDecided
		}
		if scope == ScopeSession || scope == ScopeAlways {
			if err := tx.InsertGrant(s.grantFor(row, scope, now)); err != nil {
				return err
			}
		}
		out, err = tx.GetApproval(id)
		return err
	})
	if err != nil {
		return Approval{}, fmt.Errorf("%s %s: %w", op, id, err)
	}
	s.wake(id)
	return fromRow(out, now), nil
}

// Consume uses up one approved, unexpired approval with exactly this
// binding and returns it. It reports false when there is none, so a retry
// after approval runs once and a second retry finds nothing.
func (s *Service) Consume(ctx context.Context, b Binding) (Approval, bool, error) {
	return s.ConsumeUnchanged(ctx, b, time.Time{})
}

// ConsumeUnchanged is Consume for a Plan whose meaning depends on what the
// workspace holds (it runs the workspace's code): changed is when the
// workspace it runs in last changed, and an approval created before that
// lapses — it is expired, never consumed — because the owner approved
// other code than what would now run. When nothing is consumed but an
// approval lapsed, the lapsed one is returned (Status Expired) with false,
// so the caller can say why it asks again. A zero changed lapses nothing.
func (s *Service) ConsumeUnchanged(ctx context.Context, b Binding, changed time.Time) (Approval, bool, error) {
	now := s.now()
	var out, lapsed store.Approval
	var ok, didLapse bool
	err := s.st.Write(ctx, func(tx *store.Tx) error {
		var err error
		if !changed.IsZero() {
			if lapsed, didLapse, err = tx.LapseApprovals(b.Tool, b.PlanHash, b.Owner, b.Session, changed, now); err != nil {
				return err
			}
		}
		out, ok, err = tx.ConsumeApproval(b.Tool, b.PlanHash, b.Owner, b.Session, now)
		return err
	})
	if err != nil {
		return Approval{}, false, fmt.Errorf("consume approval for %s: %w", b.Tool, err)
	}
	switch {
	case ok:
		return fromRow(out, now), true, nil
	case didLapse:
		return fromRow(lapsed, now), false, nil
	}
	return Approval{}, false, nil
}

// Lapse expires the approvals in ids that are still pending and were
// created at or after since: the turn that asked them (which started at
// since) ended without an answer, and nothing can use them any more — a
// failed turn stores nothing, and a scheduled task's run is over. An
// approval an earlier turn asked too (identical Plans share one card) is
// left pending. It returns how many lapsed.
func (s *Service) Lapse(ctx context.Context, ids []string, since time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	now, n := s.now(), 0
	err := s.st.Write(ctx, func(tx *store.Tx) error {
		n = 0
		for _, id := range ids {
			ok, err := tx.LapsePending(id, since, now)
			if err != nil {
				return err
			}
			if ok {
				n++
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("lapse approvals: %w", err)
	}
	s.wake(ids...)
	return n, nil
}

// Get returns one approval with its status as seen now.
func (s *Service) Get(ctx context.Context, id string) (Approval, error) {
	row, err := s.st.GetApproval(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Approval{}, fmt.Errorf("get approval %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Approval{}, err
	}
	return fromRow(row, s.now()), nil
}

// List returns every owner's approvals newest first (at most 1000), all
// of them when status is empty, else those whose status as seen now is
// status. What an owner is shown is ListOf.
func (s *Service) List(ctx context.Context, status Status) ([]Approval, error) {
	return s.ListOf(ctx, "", status)
}

// ListOf is List of owner's approvals only ("" for every owner's).
func (s *Service) ListOf(ctx context.Context, owner string, status Status) ([]Approval, error) {
	switch status {
	case "", Pending, Approved, Denied, Consumed, Expired:
	default:
		return nil, fmt.Errorf("list approvals: unknown status %q (want pending, approved, denied, consumed or expired)", status)
	}
	now := s.now()
	rows, err := s.st.ListApprovals(ctx, owner, string(status), now, 1000)
	if err != nil {
		return nil, err
	}
	out := make([]Approval, 0, len(rows))
	for _, r := range rows {
		out = append(out, fromRow(r, now))
	}
	return out, nil
}

func fromRow(r store.Approval, now time.Time) Approval {
	var tmpl *policy.Template
	if t, err := decodeTemplate(r.Template); err == nil && r.Template != "" {
		tmpl = &t
	}
	st := Status(r.Status)
	if (st == Pending || st == Approved) && !now.Before(r.ExpiresAt) {
		st = Expired
	}
	return Approval{
		ID:        r.ID,
		Binding:   Binding{Tool: r.Tool, PlanHash: r.PlanHash, Owner: r.Owner, Session: r.SessionID},
		Display:   r.Display,
		Plan:      r.Plan,
		Targets:   r.Targets,
		Risk:      policy.Risk(r.Risk),
		Reach:     policy.Reach(r.Reach),
		Status:    st,
		Scope:     Scope(r.Scope),
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, DecidedAt: r.DecidedAt,
		DecidedBy: r.DecidedBy, ConsumedAt: r.ConsumedAt,
		Rule: r.Rule, Reason: r.Reason, Template: tmpl, Preview: r.Preview,
		Lapsed: r.Status == string(Expired),
	}
}

// Blast is a's blast class for permissions.totp: its Reach, or the
// highest class when the card has none (stored before homard recorded
// classes, or made by a caller that did not say): an unknown class fails
// closed.
func (a Approval) Blast() policy.Reach {
	if a.Reach <= policy.ReachNone || a.Reach > policy.ReachSend {
		return policy.ReachSend
	}
	return a.Reach
}

// newID returns prefix + 16 random hex digits.
func newID(prefix string) string {
	var b [8]byte
	rand.Read(b[:]) // never returns an error (crypto/rand, Go ≥ 1.24)
	return prefix + hex.EncodeToString(b[:])
}
