package owner

import (
	"context"
	"fmt"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/channel"
)

// Approvals lists approvals in a status ("" for all), newest first.
func (o *Actions) Approvals(ctx context.Context, status string) ([]approval.Approval, error) {
	return o.d.Approvals.List(ctx, approval.Status(status))
}

// Approval returns one approval.
func (o *Actions) Approval(ctx context.Context, id string) (approval.Approval, error) {
	return o.d.Approvals.Get(ctx, id)
}

// Approve approves a pending card; scope is once, session or always (the
// answer's wire strings).
func (o *Actions) Approve(ctx context.Context, id, scope string) (approval.Approval, error) {
	if _, ok := Scope(channel.Choice(scope)); !ok {
		return approval.Approval{}, fmt.Errorf("%w: --scope %q: %w", ErrBadRequest, scope, approval.ErrInvalidScope)
	}
	return o.Answer(ctx, id, channel.Choice(scope))
}

// Deny denies a pending card.
func (o *Actions) Deny(ctx context.Context, id string) error {
	_, err := o.Answer(ctx, id, channel.Deny)
	return err
}

// Answer records the owner's answer c to pending approval id: Deny denies
// it; Once, Session or Always approve it with that scope; any other answer
// records nothing (channel.ErrBadChoice). Every surface — the CLI, the web,
// a chat button, a terminal card — records answers here.
func (o *Actions) Answer(ctx context.Context, id string, c channel.Choice) (approval.Approval, error) {
	if c == channel.Deny {
		return o.d.Approvals.Deny(ctx, id, o.d.Owner)
	}
	scope, ok := Scope(c)
	if !ok {
		return approval.Approval{}, fmt.Errorf("%w: %q (want once, session, always or deny)", channel.ErrBadChoice, c)
	}
	return o.d.Approvals.Approve(ctx, id, o.d.Owner, scope)
}

// Scope is how far the owner's answer reaches when it approves: the one
// mapping from an answer to an approval.Scope. ok is false for an answer
// that approves nothing (Deny, Leave, Recorded, Lapsed).
func Scope(c channel.Choice) (scope approval.Scope, ok bool) {
	switch c {
	case channel.Once:
		return approval.ScopeOnce, true
	case channel.Session:
		return approval.ScopeSession, true
	case channel.Always:
		return approval.ScopeAlways, true
	}
	return "", false
}

// Await waits, through the one approval waiter (approval.Service.Wait),
// until approval id is answered anywhere (channel.Recorded) or within
// passes or it expires (channel.Lapsed). It records nothing. poll zero
// reads every approval.DefaultPoll.
func (o *Actions) Await(ctx context.Context, id string, within, poll time.Duration) (channel.Choice, error) {
	_, w, err := o.d.Approvals.Wait(ctx, id, within, poll)
	switch {
	case err != nil:
		return channel.Leave, err
	case w == approval.Answered:
		return channel.Recorded, nil
	}
	return channel.Lapsed, nil
}

// Grants returns the owner's grants, newest first: only the active ones
// unless all is set.
func (o *Actions) Grants(ctx context.Context, all bool) ([]approval.Grant, error) {
	list, err := o.d.Approvals.Grants(ctx, o.d.Owner)
	if err != nil {
		return nil, err
	}
	if all {
		return list, nil
	}
	now := o.d.Now()
	out := list[:0]
	for _, g := range list {
		if g.Active(now) {
			out = append(out, g)
		}
	}
	return out, nil
}

// RevokeGrant ends one of the owner's grants now: a call it covered asks
// again. Revoking a revoked grant succeeds; another owner's grant is
// ErrGrantNotFound, like an unknown id.
func (o *Actions) RevokeGrant(ctx context.Context, id string) (approval.Grant, error) {
	list, err := o.d.Approvals.Grants(ctx, o.d.Owner)
	if err != nil {
		return approval.Grant{}, err
	}
	for _, g := range list {
		if g.ID != id {
			continue
		}
		if err := o.d.Approvals.RevokeGrant(ctx, id); err != nil {
			return approval.Grant{}, err
		}
		if g.RevokedAt.IsZero() {
			g.RevokedAt = o.d.Now()
		}
		return g, nil
	}
	return approval.Grant{}, fmt.Errorf("revoke grant %s: %w (list them with `homard approval grants`)", id, ErrGrantNotFound)
}
