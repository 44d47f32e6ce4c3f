package owner

import (
	"context"
	"fmt"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/totp"
)

// Approvals lists the owner's approvals in a status ("" for all), newest
// first. Another owner's (several owners on one shared store, issue 27)
// are never listed.
func (o *Actions) Approvals(ctx context.Context, status string) ([]approval.Approval, error) {
	return o.d.Approvals.ListOf(ctx, o.d.Owner, approval.Status(status))
}

// Approval returns one of the owner's approvals; another owner's is
// approval.ErrNotFound, like an unknown id, so its plan is never shown.
func (o *Actions) Approval(ctx context.Context, id string) (approval.Approval, error) {
	a, err := o.d.Approvals.Get(ctx, id)
	if err == nil && a.Owner != o.d.Owner {
		return approval.Approval{}, fmt.Errorf("get approval %s: %w", id, approval.ErrNotFound)
	}
	return a, err
}

// Approve approves a pending card; scope is once, session or always (the
// answer's wire strings).
func (o *Actions) Approve(ctx context.Context, id, scope string) (approval.Approval, error) {
	return o.ApproveCode(ctx, id, scope, "")
}

// ApproveCode is Approve with a code from the owner's authenticator (see
// AnswerCode).
func (o *Actions) ApproveCode(ctx context.Context, id, scope, code string) (approval.Approval, error) {
	if _, ok := Scope(channel.Choice(scope)); !ok {
		return approval.Approval{}, fmt.Errorf("%w: --scope %q: %w", ErrBadRequest, scope, approval.ErrInvalidScope)
	}
	return o.AnswerCode(ctx, id, channel.Choice(scope), code)
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
	return o.AnswerCode(ctx, id, c, "")
}

// AnswerCode is Answer with a code from the owner's authenticator, which
// approving a card at or above permissions.totp's risk needs
// (channel.ErrCodeNeeded when it is missing or refused; a code is
// accepted once). Denying never needs one.
func (o *Actions) AnswerCode(ctx context.Context, id string, c channel.Choice, code string) (approval.Approval, error) {
	scope, ok := Scope(c)
	if !ok && c != channel.Deny {
		return approval.Approval{}, fmt.Errorf("%w: %q (want once, session, always or deny)", channel.ErrBadChoice, c)
	}
	// Another owner's approval is not found here, as in Approval (the
	// decision below would refuse it too, but say that it exists).
	a, err := o.Approval(ctx, id)
	if err != nil {
		return approval.Approval{}, err
	}
	if c == channel.Deny {
		return o.d.Approvals.Deny(ctx, id, o.d.Owner)
	}
	if o.d.CodeFrom != 0 || o.d.CodeFromReach != 0 {
		if o.NeedsCode(a) {
			if err := o.checkCode(ctx, id, code); err != nil {
				return approval.Approval{}, err
			}
		}
	}
	return o.d.Approvals.Approve(ctx, id, o.d.Owner, scope)
}

// NeedsCode reports whether approving a needs a code from the owner's
// authenticator.
func (o *Actions) NeedsCode(a approval.Approval) bool { return o.NeedsCodeAt(a.Risk, a.Blast()) }

// NeedsCodeAt reports whether approving something of this risk and blast
// class needs a code from the owner's authenticator (a split's plan,
// which is approved outside the approval service): at or above
// permissions.totp's risk, or at or above its class.
func (o *Actions) NeedsCodeAt(risk policy.Risk, reach policy.Reach) bool {
	return o.d.CodeFrom != 0 && risk >= o.d.CodeFrom ||
		o.d.CodeFromReach != 0 && reach >= o.d.CodeFromReach
}

// CheckCode accepts code from the owner's authenticator once, for
// approving what (named in the error), or says why not
// (channel.ErrCodeNeeded).
func (o *Actions) CheckCode(ctx context.Context, what, code string) error {
	return o.checkCode(ctx, what, code)
}

// checkCode accepts code for approving id, or says why not.
func (o *Actions) checkCode(ctx context.Context, id, code string) error {
	if code == "" {
		return fmt.Errorf("%w: approve it with `homard approval approve %s --code CODE` or in the web UI", channel.ErrCodeNeeded, id)
	}
	if o.d.TOTP == nil {
		return fmt.Errorf("%w: %w", channel.ErrCodeNeeded, totp.ErrNotSetUp)
	}
	if err := o.d.TOTP.Verify(ctx, o.d.Owner, code); err != nil {
		return fmt.Errorf("%w: %w", channel.ErrCodeNeeded, err)
	}
	return nil
}

// Suggestions are the grants homard proposes from the owner's repeated
// approvals (approval.Service.Suggest); nothing is applied until the
// owner accepts one.
func (o *Actions) Suggestions(ctx context.Context) ([]approval.Suggestion, error) {
	return o.d.Approvals.Suggest(ctx, o.d.Owner)
}

// AcceptSuggestion makes one of the owner's current suggestions (by id
// or number from 1) an always grant that expires
// (approval.SuggestTTL).
func (o *Actions) AcceptSuggestion(ctx context.Context, ref string) (approval.Grant, error) {
	return o.d.Approvals.AcceptSuggestion(ctx, o.d.Owner, ref)
}

// TOTP is the owner's authenticator (homard totp …); nil when homard
// was opened without one.
func (o *Actions) TOTP() *totp.Service { return o.d.TOTP }

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
	if _, err := o.Approval(ctx, id); err != nil {
		return channel.Leave, err
	}
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
