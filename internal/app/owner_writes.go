package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
)

// The owner's own writes (a checkpoint rollback, memory added or
// forgotten by hand) leave an audit record naming the owner as the actor,
// like every tool call does: the chain shows every change homard made,
// whoever asked for it. This lives in app because it joins the gate or
// memory with the audit chain; the writing itself is the gate's and
// memory's.

// ownerActor is the session of records for the owner's own actions.
const ownerActor = "owner"

// auditOwner appends one record of an owner's action: tool names it
// ("checkpoint.rollback", "memory.add"), args its arguments (redacted
// here), effects what it changed.
func (r *Runtime) auditOwner(ctx context.Context, tool, rule, reason string, args map[string]string, effects []string) error {
	b, _ := json.Marshal(args)
	return r.Store.Write(ctx, func(tx *store.Tx) error {
		_, err := audit.Append(tx, audit.Record{
			Time: r.now(), Owner: r.Config.Owner, Session: ownerActor, Trust: policy.TrustOwner,
			Tool: tool, Decision: audit.Ran, Rule: rule, Reason: r.redactor.Redact(reason),
			Args: r.redactor.Redact(string(b)), Effects: r.redactor.Redact(strings.Join(effects, "\n")),
		})
		return err
	})
}

// CheckpointRollbackPreview shows what rolling checkpoint id back does and
// how the gate grades what it writes back.
func (r *Runtime) CheckpointRollbackPreview(id string) (changeset.RollbackPreview, error) {
	return r.Gate.RollbackPreview(id)
}

// CheckpointRollback rolls checkpoint id back through the gate, for the
// owner who gives the hash its preview showed, and audits it.
func (r *Runtime) CheckpointRollback(ctx context.Context, id, hash string) (changeset.RollbackPreview, error) {
	pv, err := r.Gate.Rollback(id, hash)
	if err != nil {
		return pv, err
	}
	grade := "low"
	if pv.Graded != nil {
		grade = pv.Graded.Grade.String()
	}
	effects := append([]string{"rolled back checkpoint " + id + " (" + pv.Checkpoint.Target + "):"}, pv.Steps...)
	return pv, r.auditOwner(ctx, "checkpoint.rollback", "owner.rollback", "the owner rolled a checkpoint back (what it wrote back graded "+grade+")",
		map[string]string{"checkpoint": id, "hash": hash}, effects)
}

// ownerGitConfigs are the git config files git reads in every repository
// besides the repository's own: the system file and the owner's global
// ones. A hooks path set there makes files in a root host-executed.
func ownerGitConfigs() []string {
	out := []string{"/etc/gitconfig"}
	if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		out = append(out, filepath.Join(x, "git", "config"))
	}
	return out
}
