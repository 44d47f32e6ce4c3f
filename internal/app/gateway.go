package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/homard/homard/internal/store"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/memory"
)

// Admin returns r as the channel.Admin contract the HTTP gateway talks
// to: the configured owner's sessions, approvals, audit and memory, and
// API token checks.
func (r *Runtime) Admin() channel.Admin { return adminRuntime{r, r.Tasks.Admin()} }

// adminRuntime adapts Runtime to channel.Admin; the task service serves
// its tasks.
type adminRuntime struct {
	r *Runtime
	channel.TaskAdmin
}

var _ channel.Admin = adminRuntime{}

func (a adminRuntime) Sessions(ctx context.Context) ([]channel.SessionInfo, error) {
	rows, err := a.r.Store.SessionsOf(ctx, a.r.Config.Owner, 1000)
	if err != nil {
		return nil, err
	}
	out := make([]channel.SessionInfo, 0, len(rows))
	for _, s := range rows {
		out = append(out, channel.SessionInfo{ID: s.ID, CreatedAt: s.CreatedAt, Turns: s.Turns, LastAt: s.LastAt,
			PrivateSince: s.PrivateSince, Title: s.Title})
	}
	return out, nil
}

func (a adminRuntime) DeleteSession(ctx context.Context, id string) error {
	// A turn of another process (homard run, homard chat) holds the
	// session's lock; this process's own turns are the gateway's to check.
	unlock, err := a.r.LockSession(id)
	if errors.Is(err, ErrSessionBusy) {
		return fmt.Errorf("session %s: %w", id, channel.ErrSessionBusy)
	}
	if err != nil {
		return err
	}
	defer unlock()
	err = a.r.Store.Write(ctx, func(tx *store.Tx) error { return tx.DeleteSession(id, a.r.Config.Owner, a.r.now()) })
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("session %s: %w", id, channel.ErrNotFound)
	case errors.Is(err, store.ErrSessionPending):
		return fmt.Errorf("session %s: %w", id, channel.ErrSessionPending)
	}
	return err
}

func shownApproval(a Approval) channel.Approval {
	preview, omitted := ClipPreview(a.Preview)
	return channel.Approval{
		ID: a.ID, Tool: a.Tool, Status: string(a.Status), Risk: a.Risk.String(), Session: a.Session,
		Plan: a.Display, PlanHash: a.PlanHash, Reason: a.Reason, CreatedAt: a.CreatedAt, ExpiresAt: a.ExpiresAt,
		Preview: preview, PreviewOmitted: omitted, PreviewDiff: IsDiff(a.Preview), PreviewFull: a.Preview,
		OnceOnly: a.OnceOnly(), NoAlways: a.NoAlways(), Covers: NewApprovalJSON(a).Covers,
	}
}

func shownGrant(g Grant) channel.Grant {
	j := NewGrantJSON(g, time.Now())
	return channel.Grant{ID: g.ID, Tool: g.Tool, Scope: j.Scope, Session: g.Session, Patterns: j.Patterns, Template: j.Template,
		MaxRisk: j.MaxRisk, ApprovalID: g.ApprovalID, CreatedAt: g.CreatedAt, ExpiresAt: g.ExpiresAt, RevokedAt: g.RevokedAt}
}

func (a adminRuntime) Grants(ctx context.Context) ([]channel.Grant, error) {
	list, err := a.r.GrantList(ctx, false)
	if err != nil {
		return nil, err
	}
	out := make([]channel.Grant, 0, len(list))
	for _, g := range list {
		out = append(out, shownGrant(g))
	}
	return out, nil
}

func (a adminRuntime) RevokeGrant(ctx context.Context, id string) (channel.Grant, error) {
	g, err := a.r.GrantRevoke(ctx, id)
	if errors.Is(err, ErrGrantNotFound) {
		return channel.Grant{}, fmt.Errorf("grant %s: %w", id, channel.ErrNotFound)
	}
	if err != nil {
		return channel.Grant{}, err
	}
	return shownGrant(g), nil
}

func (a adminRuntime) Approvals(ctx context.Context, status string) ([]channel.Approval, error) {
	switch approval.Status(status) {
	case "", approval.Pending, approval.Approved, approval.Denied, approval.Consumed, approval.Expired:
	default:
		return nil, fmt.Errorf("%w: status %q (want pending, approved, denied, consumed, expired or empty for all)", channel.ErrBadQuery, status)
	}
	// Any other failure is homard's (the database), not the caller's: 500.
	list, err := a.r.ApprovalList(ctx, status)
	if err != nil {
		return nil, err
	}
	out := make([]channel.Approval, 0, len(list))
	for _, x := range list {
		if x.Owner == a.r.Config.Owner {
			out = append(out, shownApproval(x))
		}
	}
	return out, nil
}

func (a adminRuntime) Approval(ctx context.Context, id string) (channel.Approval, error) {
	x, err := a.r.ApprovalGet(ctx, id)
	if errors.Is(err, approval.ErrNotFound) || (err == nil && x.Owner != a.r.Config.Owner) {
		return channel.Approval{}, fmt.Errorf("approval %s: %w", id, channel.ErrNotFound)
	}
	if err != nil {
		return channel.Approval{}, err
	}
	return shownApproval(x), nil
}

func (a adminRuntime) Await(ctx context.Context, id string, within time.Duration) (channel.Choice, error) {
	return a.r.awaitAnswer(ctx, id, within, 0)
}

func (a adminRuntime) Answer(ctx context.Context, id string, c channel.Choice) (channel.Approval, error) {
	if _, err := a.Approval(ctx, id); err != nil {
		return channel.Approval{}, err
	}
	_, err := a.r.recordAnswer(ctx, id, c)
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

// auditScanPages caps how many pages one filtered Audit call reads before
// it returns what it found and where to go on.
const auditScanPages = 20

func (a adminRuntime) Audit(ctx context.Context, q channel.AuditQuery) (channel.AuditPage, error) {
	limit := q.Limit
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	if q.Newest {
		return a.auditNewest(ctx, q, limit)
	}
	page := channel.AuditPage{Records: []channel.AuditRecord{}, Next: q.After}
	for range auditScanPages {
		recs, err := audit.List(ctx, a.r.Store, page.Next, 1000)
		if err != nil {
			return channel.AuditPage{}, err
		}
		for _, x := range recs {
			page.Next = x.Seq
			if (q.Tool != "" && x.Tool != q.Tool) || (q.Decision != "" && string(x.Decision) != q.Decision) {
				continue
			}
			page.Records = append(page.Records, shownAudit(x))
			if len(page.Records) == limit {
				return page, nil
			}
		}
		if len(recs) < 1000 {
			break
		}
	}
	return page, nil
}

// auditNewest reads backwards from q.Before (0: past the last record)
// in windows of 1000, newest first.
func (a adminRuntime) auditNewest(ctx context.Context, q channel.AuditQuery, limit int) (channel.AuditPage, error) {
	cursor := q.Before
	if cursor <= 0 {
		last, err := a.r.Store.LastAuditSeq(ctx)
		if err != nil {
			return channel.AuditPage{}, err
		}
		cursor = last + 1
	}
	page := channel.AuditPage{Records: []channel.AuditRecord{}}
	for range auditScanPages {
		from := max(0, cursor-1-1000) // the window is (from, cursor)
		if cursor <= 1 {
			break
		}
		recs, err := audit.List(ctx, a.r.Store, from, int(cursor-1-from))
		if err != nil {
			return channel.AuditPage{}, err
		}
		for i := len(recs) - 1; i >= 0; i-- {
			x := recs[i]
			if x.Seq >= cursor {
				continue
			}
			cursor = x.Seq
			if (q.Tool != "" && x.Tool != q.Tool) || (q.Decision != "" && string(x.Decision) != q.Decision) {
				continue
			}
			page.Records = append(page.Records, shownAudit(x))
			if len(page.Records) == limit {
				page.Next = cursor
				return page, nil
			}
		}
		cursor = min(cursor, from+1)
	}
	if cursor > 1 {
		page.Next = cursor // the scan cap ended it: older records are left
	}
	return page, nil
}

func shownAudit(x AuditRecord) channel.AuditRecord {
	return channel.AuditRecord{
		Seq: x.Seq, Time: x.Time, Owner: x.Owner, Session: x.Session, Trust: string(x.Trust), Tool: x.Tool,
		Decision: string(x.Decision), Rule: x.Rule, Reason: x.Reason, Args: x.Args, PlanHash: x.PlanHash,
		RunID: x.RunID, ApprovalID: x.ApprovalID,
	}
}

func (a adminRuntime) Memory(ctx context.Context, query string) ([]channel.MemoryUnit, error) {
	var units []memory.Unit
	var err error
	if query == "" {
		units, _, err = a.r.MemoryList(ctx)
	} else {
		units, err = a.r.MemorySearch(ctx, query, 50)
	}
	if err != nil {
		return nil, err
	}
	out := make([]channel.MemoryUnit, 0, len(units))
	for _, u := range units {
		out = append(out, channel.MemoryUnit{ID: u.ID, Text: u.Text, Kind: string(u.Kind), Source: u.Source, Created: u.Created, Expires: u.Expires})
	}
	return out, nil
}

func (a adminRuntime) Forget(ctx context.Context, id string) error {
	_, err := a.r.MemoryForget(ctx, id)
	if errors.Is(err, memory.ErrNotFound) {
		return fmt.Errorf("memory %s: %w", id, channel.ErrNotFound)
	}
	return err
}

func (a adminRuntime) Review(ctx context.Context) ([]channel.ReviewItem, error) {
	cs, err := a.r.MemoryReview(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]channel.ReviewItem, 0, len(cs))
	for _, c := range cs {
		out = append(out, channel.ReviewItem{ID: c.ID, Text: c.Text, Kind: string(c.Kind), Count: c.Seen, Status: c.Status,
			ConflictsWith: c.ConflictsWith, Source: c.Source, FirstSeen: c.FirstSeen})
	}
	return out, nil
}

func (a adminRuntime) ReviewAnswer(ctx context.Context, id string, accept bool, replace string) error {
	var err error
	if accept {
		_, err = a.r.MemoryAccept(ctx, id, replace)
	} else {
		_, err = a.r.MemoryDismiss(ctx, id)
	}
	switch {
	case errors.Is(err, memory.ErrCandidate):
		return fmt.Errorf("note %s: %w", id, channel.ErrNotFound)
	case errors.Is(err, memory.ErrNotFound):
		return fmt.Errorf("memory %s: %w", replace, channel.ErrNotFound)
	}
	return err
}

func (a adminRuntime) VerifyToken(ctx context.Context, token string) (bool, error) {
	return a.r.TokenVerify(ctx, token)
}

// SessionSummary is one of the owner's sessions as listed.
type SessionSummary = store.SessionSummary

// SessionList returns the owner's sessions, the most recently active first
// (at most 1000).
func (r *Runtime) SessionList(ctx context.Context) ([]SessionSummary, error) {
	return r.Store.SessionsOf(ctx, r.Config.Owner, 1000)
}
