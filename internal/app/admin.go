package app

import (
	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/audit"
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
