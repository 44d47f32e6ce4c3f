package changeset

import (
	"context"
	"fmt"
	"strings"

	"github.com/homard/homard/internal/workspace"
)

// Owner actions that write into a root pass the gate too: a rollback is
// graded like any writer's change (the preview shows the owner what the
// files it brings back are: a hook, a workflow, a sensitive file), and
// the recovery and the sweep at start are reached only through here.

// RollbackPreview is what undoing a checkpoint would do, and how the gate
// grades the files it writes back.
type RollbackPreview struct {
	workspace.Preview
	// Graded grades writing the restored files into the root as it is
	// now; nil when the rollback restores no file's content.
	Graded *workspace.Graded
}

// String is the preview for a person, with the gate's findings.
func (p RollbackPreview) String() string {
	s := p.Preview.String()
	if p.Graded == nil || len(p.Graded.Reasons) == 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s)
	fmt.Fprintf(&b, "what it writes back is graded %s:\n", p.Graded.Grade)
	for _, r := range p.Graded.Reasons {
		fmt.Fprintf(&b, "  %s\n", r)
	}
	return b.String()
}

// RollbackPreview shows what rolling checkpoint id back would do and how
// the gate grades it. It changes nothing.
func (g *Gate) RollbackPreview(id string) (RollbackPreview, error) {
	pv, err := g.ws.RollbackPreview(id)
	if err != nil {
		return RollbackPreview{}, err
	}
	out := RollbackPreview{Preview: pv}
	root, files, err := g.ws.RollbackWrites(id)
	if err != nil {
		return RollbackPreview{}, err
	}
	if len(files) == 0 {
		return out, nil
	}
	fs := make([]File, len(files))
	for i, f := range files {
		fs[i] = File{Rel: f.Rel, Data: f.Data}
	}
	if out.Graded, err = g.GradeFiles(root, fs); err != nil {
		return RollbackPreview{}, fmt.Errorf("rollback %s: %w", id, err)
	}
	return out, nil
}

// Rollback undoes checkpoint id for the owner, who saw its preview and
// gives its hash. It is the owner's own action, so a grade above medium
// does not hold it (the owner saw the findings); a change the gate never
// applies (homard's own files, an unsafe name) refuses it.
func (g *Gate) Rollback(id, hash string) (RollbackPreview, error) {
	pv, err := g.RollbackPreview(id)
	if err != nil {
		return pv, err
	}
	if pv.Graded != nil && pv.Graded.Refused() {
		for _, c := range pv.Graded.Changes {
			if c.Refused != "" {
				return pv, fmt.Errorf("rollback %s: %s is never written: %s", id, c.Rel, c.Refused)
			}
		}
	}
	return pv, g.ws.RollbackCheckpoint(id, hash)
}

// Recover rolls back the change sets a crash left half-applied
// (workspace.RecoverChanges); run once at start.
func (g *Gate) Recover(ctx context.Context) (workspace.Recovery, error) {
	return g.ws.RecoverChanges(ctx)
}

// Sweep removes homard's stray temp files from the roots
// (workspace.SweepTemp); run once at start.
func (g *Gate) Sweep(o workspace.SweepOptions) (workspace.Sweep, error) {
	return g.ws.SweepTemp(o)
}
