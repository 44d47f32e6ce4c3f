package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/workspace"
)

//go:embed apply_changes.md
var applyChangesDoc string

// ApplyChangesParams are apply_changes's arguments.
type ApplyChangesParams struct {
	ID string `json:"id"`
}

// ApplyChanges is the apply_changes tool: the approval card for a change
// set that was graded above what a command may apply unasked. Its Plan is
// always critical, so it asks in every mode and only a one-time approval
// can run it; the Plan binds the change list's digest, and the changes are
// graded again under the root's lock when they are applied.
type ApplyChanges struct {
	ws   *workspace.Workspace
	gate *changeset.Gate
}

// NewApplyChanges builds the tool over the gate that holds change sets.
func NewApplyChanges(gate *changeset.Gate) tool.Tool {
	return tool.Adapt[ApplyChangesParams](&ApplyChanges{ws: gate.Workspace(), gate: gate})
}

type applyChangesBody struct {
	ID     string `json:"id"`
	SHA256 string `json:"sha256"`
	Root   string `json:"root"`
	Digest string `json:"digest"`
}

func (t *ApplyChanges) Spec() tool.Spec {
	return tool.Spec{Name: "apply_changes", Description: doc(applyChangesDoc), Action: policy.ActionWrite, Risk: policy.RiskCritical}
}

func (t *ApplyChanges) Prepare(ctx context.Context, p ApplyChangesParams) (tool.Plan, error) {
	meta, cs, err := t.gate.Load(p.ID)
	if err != nil {
		return tool.Plan{}, tool.InvalidArgs("%v", err)
	}
	defer cs.Close()
	if t.ws.ReadOnly(meta.Root) {
		return tool.Plan{}, tool.Refuse(policy.RuleLimitRootReadOnly, "change set %s changes workspace root %q, which is read-only (access = \"ro\" in config); nothing is ever applied there", p.ID, meta.Root)
	}
	g, _, err := t.gate.GradeHeld(meta, cs)
	if err != nil {
		return tool.Plan{}, tool.InvalidArgs("change set %s cannot be checked: %v", p.ID, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apply change set %s from %s (%s, graded %s)", p.ID, quoteArgv(meta.Writer), changeSummary(g), g.Grade)
	for _, r := range g.Reasons {
		fmt.Fprintf(&b, "\n  %s", r)
	}
	for _, c := range g.Conflicts {
		fmt.Fprintf(&b, "\n  conflict (will not apply): %q changed since the command ran", c)
	}
	const show = 200
	for i, line := range g.Paths() {
		if i == show {
			fmt.Fprintf(&b, "\n  … and %d more", len(g.Changes)-show)
			break
		}
		fmt.Fprintf(&b, "\n  %s", line)
	}
	targets := make([]string, 0, len(g.Changes))
	for _, c := range g.Changes {
		if wp, err := t.ws.PathIn(meta.Root, c.Rel); err == nil {
			targets = append(targets, wp.Target())
		} else {
			targets = append(targets, meta.Root+":"+c.Rel) // an unsafe name: shown, never applied
		}
	}
	return t.Spec().Plan(tool.PlanSpec{
		Display:     b.String(),
		PreviewFunc: func() string { return t.heldDiffs(p.ID) },
		Targets:     targets,
		Body:        applyChangesBody{ID: p.ID, SHA256: meta.SHA256, Root: meta.Root, Digest: g.Digest},
	})
}

func (t *ApplyChanges) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b applyChangesBody
	if err := plan.Decode(&b); err != nil {
		return tool.Result{}, err
	}
	caller, _ := tool.CallerFrom(ctx)
	applied, err := t.gate.ApplyHeld(ctx, b.ID, b.SHA256, b.Root, b.Digest, caller.Run)
	if err != nil {
		if errors.Is(err, workspace.ErrConflict) || errors.Is(err, workspace.ErrNotApproved) {
			return tool.Errorf("nothing applied: %v; the workspace changed since the owner saw the change set", err), nil
		}
		return tool.Errorf("nothing applied: %v", err), nil
	}
	text := fmt.Sprintf("applied change set %s: %s (checkpoint %s; `homard checkpoint rollback %s` undoes it)",
		b.ID, changeSummary(applied.Graded), applied.CheckpointID, applied.CheckpointID)
	if len(applied.Skipped) > 0 {
		text += fmt.Sprintf("; %d change(s) are never applied and were left out:", len(applied.Skipped))
		for _, c := range applied.Skipped {
			text += fmt.Sprintf("\n  %s (%s)", c.Rel, c.Refused)
		}
	}
	return tool.Result{Text: text, Effects: append([]string{"applied as checkpoint " + applied.CheckpointID + ":"}, applied.Graded.Paths()...)}, nil
}

// Bounds of a held set's card: the files whose diff is shown, and the
// size of a file shown.
const (
	heldDiffFiles = 20
	heldDiffBytes = 64 << 10
)

// heldDiffs is the card body of a held change set: the diff of each text
// file it creates or changes against the root as it is now (the owner
// sees what a planted hook would run, not only its name), bounded.
func (t *ApplyChanges) heldDiffs(id string) string {
	meta, cs, err := t.gate.Load(id)
	if err != nil {
		return ""
	}
	defer cs.Close()
	g, _, err := t.gate.GradeHeld(meta, cs)
	if err != nil {
		return ""
	}
	var b strings.Builder
	shown := 0
	for _, c := range g.Changes {
		if c.Op == workspace.OpDelete || c.Kind != workspace.EntryFile {
			continue
		}
		if shown == heldDiffFiles {
			fmt.Fprintf(&b, "(diffs of further files are not shown; the list above names them all)\n")
			break
		}
		shown++
		e, ok := cs.Entry(c.Rel)
		if !ok {
			continue
		}
		name := meta.Root + ":" + c.Rel
		if e.Size > heldDiffBytes {
			fmt.Fprintf(&b, "--- %s\n(%d bytes: too large to show, sha256 %s)\n", name, e.Size, e.SHA256)
			continue
		}
		data, err := cs.ReadContent(e, heldDiffBytes)
		if err != nil {
			continue
		}
		var old []byte
		exists, note := false, ""
		if wp, err := t.ws.PathIn(meta.Root, c.Rel); err == nil && c.Op == workspace.OpModify {
			old, exists, note = currentContent(t.ws, wp)
		}
		b.WriteString(note + contentDiff(name, old, exists, data))
	}
	return b.String()
}
