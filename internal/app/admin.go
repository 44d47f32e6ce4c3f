package app

import (
	"context"
	"fmt"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/workspace"
)

// Names for the types front ends print, so they need not import the
// packages that define them.
type (
	Outcome     = arbiter.Outcome
	Approval    = approval.Approval
	AuditRecord = audit.Record
	Checkpoint  = workspace.Checkpoint
)

// CheckpointKindChanges marks the checkpoint of a command's change set.
const CheckpointKindChanges = workspace.KindChanges

// ApprovalList lists approvals in a status ("" for all), newest first.
func (r *Runtime) ApprovalList(ctx context.Context, status string) ([]Approval, error) {
	return r.Approvals.List(ctx, approval.Status(status))
}

// ApprovalGet returns one approval.
func (r *Runtime) ApprovalGet(ctx context.Context, id string) (Approval, error) {
	return r.Approvals.Get(ctx, id)
}

// ApprovalApprove approves a pending card as the configured owner.
// scope is once, session or always (the answer's wire strings).
func (r *Runtime) ApprovalApprove(ctx context.Context, id, scope string) (Approval, error) {
	if _, ok := approvalScope(channel.Choice(scope)); !ok {
		return Approval{}, fmt.Errorf("%w: --scope %q: %w", ErrBadRequest, scope, approval.ErrInvalidScope)
	}
	return r.recordAnswer(ctx, id, channel.Choice(scope))
}

// ApprovalDeny denies a pending card as the configured owner.
func (r *Runtime) ApprovalDeny(ctx context.Context, id string) error {
	_, err := r.recordAnswer(ctx, id, channel.Deny)
	return err
}

// AuditTail returns the last n audit records in order.
func (r *Runtime) AuditTail(ctx context.Context, n int) ([]AuditRecord, error) {
	last, err := r.Store.LastAuditSeq(ctx)
	if err != nil {
		return nil, err
	}
	return audit.List(ctx, r.Store, max(0, last-int64(n)), n)
}

// AuditAfter returns up to limit records after seq.
func (r *Runtime) AuditAfter(ctx context.Context, seq int64, limit int) ([]AuditRecord, error) {
	return audit.List(ctx, r.Store, seq, limit)
}

// AuditVerify checks the whole hash chain.
func (r *Runtime) AuditVerify(ctx context.Context) (int, error) {
	return audit.Verify(ctx, r.Store)
}
