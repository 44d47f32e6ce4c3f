package owner

import (
	"context"

	"github.com/homard/homard/internal/changeset"
)

// RollbackPreview shows what rolling checkpoint id back would do, graded
// as the one gate grades any write.
func (o *Actions) RollbackPreview(id string) (changeset.RollbackPreview, error) {
	return o.d.Gate.RollbackPreview(id)
}

// Rollback writes checkpoint id back through the gate, if the tree still
// has hash (what the preview showed), and audits it as the owner's
// (checkpoint.rollback): the owner's own rollbacks pass the one gate
// every write passes.
func (o *Actions) Rollback(ctx context.Context, id, hash string) (changeset.RollbackPreview, error) {
	pv, err := o.d.Gate.Rollback(id, hash)
	if err != nil {
		return pv, err
	}
	grade := "low"
	if pv.Graded != nil {
		grade = pv.Graded.Grade.String()
	}
	effects := append([]string{"rolled back checkpoint " + id + " (" + pv.Checkpoint.Target + "):"}, pv.Steps...)
	return pv, o.Audit(ctx, "checkpoint.rollback", "owner.rollback", "the owner rolled a checkpoint back (what it wrote back graded "+grade+")",
		map[string]string{"checkpoint": id, "hash": hash}, effects)
}
