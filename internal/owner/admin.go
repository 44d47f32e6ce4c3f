package owner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/memory"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/tool"
)

// Admin is the owner's actions as the channel.Admin contract the HTTP
// gateway talks to, but for scheduled tasks (channel.TaskAdmin), which app
// adds from the automation service. The CLI's --json prints these same
// values (channel/web/wire), so each concept has one shape.
type Admin struct{ o *Actions }

// Admin returns the channel view of o.
func (o *Actions) Admin() Admin { return Admin{o} }

// shown is ShownApproval, saying whether approving it needs a code.
func (a Admin) shown(x approval.Approval) channel.Approval {
	out := ShownApproval(x)
	out.NeedsCode = a.o.NeedsCode(x)
	return out
}

// ShownApproval is an approval as front ends show it: the preview cut to
// what a card shows, and the whole of it.
func ShownApproval(a approval.Approval) channel.Approval {
	preview, omitted := tool.ClipPreview(a.Preview, 0, 0)
	out := channel.Approval{
		ID: a.ID, Tool: a.Tool, Status: string(a.Status), Risk: a.Risk.String(), Session: a.Session,
		Plan: a.Display, PlanHash: a.PlanHash, Reason: a.Reason, CreatedAt: a.CreatedAt, ExpiresAt: a.ExpiresAt,
		Preview: preview, PreviewOmitted: omitted, PreviewDiff: tool.IsDiff(a.Preview), PreviewFull: a.Preview,
		OnceOnly: a.OnceOnly(), NoAlways: a.NoAlways(),
		Owner: a.Owner, Targets: a.Targets, Rule: a.Rule, Scope: string(a.Scope),
		DecidedAt: a.DecidedAt, DecidedBy: a.DecidedBy, ConsumedAt: a.ConsumedAt,
	}
	if a.Template != nil {
		out.Template = a.Template.String()
	}
	if a.Status == approval.Pending && !a.OnceOnly() {
		out.Covers = a.Covers()
	}
	return out
}

// ShownGrant is a grant as front ends show it.
func ShownGrant(g approval.Grant) channel.Grant {
	out := channel.Grant{ID: g.ID, Tool: g.Tool, Scope: string(g.Scope), Session: g.Session, Patterns: g.Patterns,
		MaxRisk: g.MaxRisk.String(), ApprovalID: g.ApprovalID, CreatedAt: g.CreatedAt, ExpiresAt: g.ExpiresAt, RevokedAt: g.RevokedAt}
	if g.Template != nil {
		out.Template = g.Template.String()
	}
	return out
}

// Sessions lists the owner's sessions, the most recently active first
// (at most 1000).
func (a Admin) Sessions(ctx context.Context) ([]channel.SessionInfo, error) {
	rows, err := a.o.Sessions(ctx)
	return channel.Shown(rows, err, func(s store.SessionSummary) channel.SessionInfo {
		return channel.SessionInfo{ID: s.ID, CreatedAt: s.CreatedAt, Turns: s.Turns, LastAt: s.LastAt,
			PrivateSince: s.PrivateSince, Title: s.Title}
	})
}

// DeleteSession deletes one of the owner's sessions (Actions.DeleteSession).
func (a Admin) DeleteSession(ctx context.Context, id string) error { return a.o.DeleteSession(ctx, id) }

// Grants lists the owner's active grants.
func (a Admin) Grants(ctx context.Context) ([]channel.Grant, error) {
	list, err := a.o.Grants(ctx, false)
	return channel.Shown(list, err, ShownGrant)
}

// RevokeGrant ends one of the owner's grants now.
func (a Admin) RevokeGrant(ctx context.Context, id string) (channel.Grant, error) {
	g, err := a.o.RevokeGrant(ctx, id)
	if errors.Is(err, ErrGrantNotFound) {
		return channel.Grant{}, fmt.Errorf("grant %s: %w", id, channel.ErrNotFound)
	}
	if err != nil {
		return channel.Grant{}, err
	}
	return ShownGrant(g), nil
}

// Approvals lists the owner's approvals in status ("" for all).
func (a Admin) Approvals(ctx context.Context, status string) ([]channel.Approval, error) {
	switch approval.Status(status) {
	case "", approval.Pending, approval.Approved, approval.Denied, approval.Consumed, approval.Expired:
	default:
		return nil, fmt.Errorf("%w: status %q (want pending, approved, denied, consumed, expired or empty for all)", channel.ErrBadQuery, status)
	}
	// Any other failure is homard's (the database), not the caller's: 500.
	list, err := a.o.Approvals(ctx, status)
	if err != nil {
		return nil, err
	}
	out := make([]channel.Approval, 0, len(list))
	for _, x := range list {
		if x.Owner == a.o.d.Owner {
			out = append(out, a.shown(x))
		}
	}
	return out, nil
}

// Approval returns one of the owner's approvals; another owner's is
// channel.ErrNotFound, like an unknown id.
func (a Admin) Approval(ctx context.Context, id string) (channel.Approval, error) {
	x, err := a.o.Approval(ctx, id)
	if errors.Is(err, approval.ErrNotFound) || (err == nil && x.Owner != a.o.d.Owner) {
		return channel.Approval{}, fmt.Errorf("approval %s: %w", id, channel.ErrNotFound)
	}
	if err != nil {
		return channel.Approval{}, err
	}
	return a.shown(x), nil
}

// Await waits for the answer to approval id (Actions.Await).
func (a Admin) Await(ctx context.Context, id string, within time.Duration) (channel.Choice, error) {
	return a.o.Await(ctx, id, within, 0)
}

// Answer records the owner's choice on a pending approval.
func (a Admin) Answer(ctx context.Context, id string, c channel.Choice, code string) (channel.Approval, error) {
	if _, err := a.Approval(ctx, id); err != nil {
		return channel.Approval{}, err
	}
	_, err := a.o.AnswerCode(ctx, id, c, code)
	switch {
	case errors.Is(err, approval.ErrAlreadyDecided), errors.Is(err, approval.ErrExpired):
		return channel.Approval{}, fmt.Errorf("%w: %w", channel.ErrNotPending, err)
	case errors.Is(err, approval.ErrScopeNotAllowed), errors.Is(err, approval.ErrInvalidScope):
		return channel.Approval{}, fmt.Errorf("%w: %w", channel.ErrBadChoice, err)
	case err != nil:
		return channel.Approval{}, err
	}
	return a.Approval(ctx, id)
}

// Audit returns a page of audit records (Actions.AuditPage).
func (a Admin) Audit(ctx context.Context, q channel.AuditQuery) (channel.AuditPage, error) {
	return a.o.AuditPage(ctx, q)
}

// Memory returns the owner's memory units matching query; every unit
// when query is empty.
func (a Admin) Memory(ctx context.Context, query string) ([]channel.MemoryUnit, error) {
	var units []memory.Unit
	var err error
	if query == "" {
		units, _, err = a.o.MemoryList(ctx)
	} else {
		units, err = a.o.MemorySearch(ctx, query, 50)
	}
	return channel.Shown(units, err, func(u memory.Unit) channel.MemoryUnit {
		return channel.MemoryUnit{ID: u.ID, Text: u.Text, Kind: string(u.Kind), Source: u.Source, Created: u.Created, Expires: u.Expires}
	})
}

// Forget removes one memory unit.
func (a Admin) Forget(ctx context.Context, id string) error {
	_, err := a.o.MemoryForget(ctx, id)
	if errors.Is(err, memory.ErrNotFound) {
		return fmt.Errorf("memory %s: %w", id, channel.ErrNotFound)
	}
	return err
}

// Review lists the notes capture proposed that wait for the owner.
func (a Admin) Review(ctx context.Context) ([]channel.ReviewItem, error) {
	cs, err := a.o.MemoryReview(ctx)
	return channel.Shown(cs, err, func(c memory.Candidate) channel.ReviewItem {
		return channel.ReviewItem{ID: c.ID, Text: c.Text, Kind: string(c.Kind), Count: c.Seen, Status: c.Status,
			ConflictsWith: c.ConflictsWith, Source: c.Source, FirstSeen: c.FirstSeen}
	})
}

// ReviewAnswer accepts or dismisses a waiting note.
func (a Admin) ReviewAnswer(ctx context.Context, id string, accept bool, replace string) error {
	var err error
	if accept {
		_, err = a.o.MemoryAccept(ctx, id, replace)
	} else {
		_, err = a.o.MemoryDismiss(ctx, id)
	}
	switch {
	case errors.Is(err, memory.ErrCandidate):
		return fmt.Errorf("note %s: %w", id, channel.ErrNotFound)
	case errors.Is(err, memory.ErrNotFound):
		return fmt.Errorf("memory %s: %w", replace, channel.ErrNotFound)
	}
	return err
}

// VerifyToken reports whether token is a valid API token.
func (a Admin) VerifyToken(ctx context.Context, token string) (bool, error) {
	return a.o.TokenVerify(ctx, token)
}

// sessionsLimit is how many sessions a listing shows.
const sessionsLimit = 1000

// Sessions returns the owner's sessions, the most recently active first
// (at most 1000).
func (o *Actions) Sessions(ctx context.Context) ([]store.SessionSummary, error) {
	return o.d.Store.SessionsOf(ctx, o.d.Owner, sessionsLimit)
}

// DeleteSession deletes one of the owner's sessions: its conversation
// goes; the audit trail stays. It waits for no turn: a turn of another
// process holding the session's lock is channel.ErrSessionBusy (this
// process's own turns are the caller's to check).
func (o *Actions) DeleteSession(ctx context.Context, id string) error {
	if o.d.LockSession != nil {
		unlock, err := o.d.LockSession(id)
		if err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
		defer unlock()
	}
	err := o.d.Store.Write(ctx, func(tx *store.Tx) error { return tx.DeleteSession(id, o.d.Owner, o.d.Now()) })
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("session %s: %w", id, channel.ErrNotFound)
	case errors.Is(err, store.ErrSessionPending):
		return fmt.Errorf("session %s: %w", id, channel.ErrSessionPending)
	}
	return err
}
