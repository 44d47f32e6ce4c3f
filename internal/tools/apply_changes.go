package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

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
	dir  string
	deny []string
}

var _ tool.Typed[ApplyChangesParams] = (*ApplyChanges)(nil)

// NewApplyChanges builds the tool over the folder where run_command holds
// change sets; denyPaths are CommandOptions.DenyPaths.
func NewApplyChanges(ws *workspace.Workspace, holdDir string, denyPaths []string) tool.Tool {
	return tool.Adapt[ApplyChangesParams](&ApplyChanges{ws: ws, dir: holdDir, deny: denyPaths})
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

func (t *ApplyChanges) graded(meta heldMeta, cs *workspace.ChangeSet) (*workspace.Graded, workspace.GradeOptions, error) {
	o := workspace.GradeOptions{Expected: meta.Expected, RunsCode: meta.RunsCode, Since: meta.Since,
		Sensitive: func(rel string) bool { return commandHidden(t.ws, t.deny, meta.Root, rel) },
		HostTools: meta.HostTools}
	if o.HostTools == nil {
		o.HostTools = hostTools(nil)
	}
	g, err := t.ws.Grade(meta.Root, cs, o)
	return g, o, err
}

func (t *ApplyChanges) Prepare(ctx context.Context, p ApplyChangesParams) (tool.Plan, error) {
	meta, f, err := loadHeld(t.dir, p.ID)
	if err != nil {
		return tool.Plan{}, tool.InvalidArgs("%v", err)
	}
	defer f.Close()
	if t.ws.ReadOnly(meta.Root) {
		return tool.Plan{}, tool.Refuse(policy.RuleLimitRootReadOnly, "change set %s changes workspace root %q, which is read-only (access = \"ro\" in config); nothing is ever applied there", p.ID, meta.Root)
	}
	cs, err := workspace.ReadChanges(f, workspace.ReadOptions{})
	if err != nil {
		return tool.Plan{}, tool.InvalidArgs("change set %s cannot be read: %v", p.ID, err)
	}
	defer cs.Close()
	g, _, err := t.graded(meta, cs)
	if err != nil {
		return tool.Plan{}, tool.InvalidArgs("change set %s cannot be checked: %v", p.ID, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apply change set %s from %s (%s, graded %s)", p.ID, quoteArgv(meta.Command), changeSummary(g), g.Grade)
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
	return tool.NewPlan(tool.PlanSpec{
		Tool: "apply_changes", Action: policy.ActionWrite, Risk: policy.RiskCritical,
		Display: b.String(),
		Targets: targets,
		Body:    applyChangesBody{ID: p.ID, SHA256: meta.SHA256, Root: meta.Root, Digest: g.Digest},
	})
}

func (t *ApplyChanges) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b applyChangesBody
	if err := plan.Decode(&b); err != nil {
		return tool.Result{}, err
	}
	meta, f, err := loadHeld(t.dir, b.ID)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	defer f.Close()
	if meta.SHA256 != b.SHA256 || meta.Root != b.Root {
		return tool.Errorf("change set %s is not the one approved; propose apply_changes again", b.ID), nil
	}
	cs, err := workspace.ReadChanges(f, workspace.ReadOptions{})
	if err != nil {
		return tool.Errorf("change set %s cannot be read: %v", b.ID, err), nil
	}
	defer cs.Close()
	_, o, err := t.graded(meta, cs)
	if err != nil {
		return tool.Errorf("change set %s cannot be checked: %v", b.ID, err), nil
	}
	caller, _ := tool.CallerFrom(ctx)
	applied, err := t.ws.ApplyChanges(ctx, meta.Root, cs, meta.Since, workspace.ApplyOptions{
		Grade: o, Approved: workspace.GradeCritical, Digest: b.Digest, Run: caller.Run})
	if err != nil {
		if errors.Is(err, workspace.ErrConflict) || errors.Is(err, workspace.ErrNotApproved) {
			return tool.Errorf("nothing applied: %v; the workspace changed since the owner saw the change set", err), nil
		}
		return tool.Errorf("nothing applied: %v", err), nil
	}
	dropHeld(t.dir, b.ID)
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
