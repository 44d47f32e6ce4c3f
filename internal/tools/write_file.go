package tools

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"fmt"
	"strings"

	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/workspace"
)

//go:embed write_file.md
var writeFileDoc string

// WriteFileParams are write_file's arguments.
type WriteFileParams struct {
	Path    string `json:"path" jsonschema:"workspace-relative, or absolute in a root"`
	Content string `json:"content"`
}

// WriteFile is the write_file tool.
type WriteFile struct {
	ws   *workspace.Workspace
	gate *changeset.Gate
}

type writeFileBody struct {
	File    location `json:"file"`
	Content string   `json:"content"`
}

func (t *WriteFile) Spec() tool.Spec {
	return tool.Spec{Name: "write_file", Description: doc(writeFileDoc), Action: policy.ActionWrite, Risk: policy.RiskMedium}
}

func (t *WriteFile) Prepare(ctx context.Context, p WriteFileParams) (tool.Plan, error) {
	wp, targets, real, err := planWrite(t.ws, p.Path)
	if err != nil {
		return tool.Plan{}, err
	}
	if int64(len(p.Content)) > t.ws.MaxFileBytes() {
		return tool.Plan{}, tool.Refuse(policy.RuleLimitSize, "content is %d bytes; the file size limit is %d", len(p.Content), t.ws.MaxFileBytes())
	}
	risk, graded, err := gradeWrite(t.gate, real, []byte(p.Content))
	if err != nil {
		return tool.Plan{}, err
	}
	return t.Spec().Plan(tool.PlanSpec{
		Risk: risk,
		Display: fmt.Sprintf("write %s: %d bytes, sha256 %s, %s", shown(wp, real), len(p.Content),
			shortHash(sha256.Sum256([]byte(p.Content))), effect(t.ws, real)) + graded,
		PreviewFunc: func() string {
			old, exists, note := currentContent(t.ws, real)
			return note + contentDiff(shown(wp, real), old, exists, []byte(p.Content))
		},
		Targets: targets,
		Body:    writeFileBody{File: locate(real), Content: p.Content},
	})
}

// effect says whether a write creates or replaces, for the approval card.
// It is shown, not hashed: the file may change before the run.
func effect(ws *workspace.Workspace, p workspace.Path) string {
	fi, err := ws.Lstat(p)
	if err != nil {
		return "creates a new file"
	}
	return fmt.Sprintf("replaces the existing file (%d bytes; the old content is checkpointed)", fi.Size())
}

func (t *WriteFile) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b writeFileBody
	p, name, stop, res, err := openPlan(t.ws, plan, &b, &b.File)
	if stop {
		return res, err
	}
	return write(ctx, t.gate, plan, p, []byte(b.Content), fmt.Sprintf("wrote %d bytes to %s", len(b.Content), name)), nil
}

// gradeWrite grades writing data to p through the gate, for a file
// tool's Prepare: the plan's risk (critical when the gate would hold the
// write in every mode: it then asks once, in every mode, and only that
// approval lets Run apply it) and the reasons to add to the card. A write
// the gate cannot even grade (a file in the way of a folder) is refused.
func gradeWrite(gate *changeset.Gate, p workspace.Path, data []byte) (policy.Risk, string, error) {
	g, err := gate.GradeFiles(p.Root, []changeset.File{{Rel: p.Rel, Data: data}})
	if err != nil {
		if isLimit(err) {
			return 0, "", refusal(err)
		}
		return 0, "", tool.InvalidArgs("cannot write %s: %v", p.Target(), err)
	}
	var b strings.Builder
	for _, r := range g.Reasons {
		fmt.Fprintf(&b, "\n  %s", r)
	}
	switch g.Grade {
	case workspace.GradeCritical:
		return policy.RiskCritical, b.String(), nil
	case workspace.GradeHigh:
		return policy.RiskHigh, b.String(), nil
	}
	return policy.RiskMedium, b.String(), nil
}

// write writes p's new content through the gate, as the one change set of
// a file tool's run, and reports the outcome: applied with its
// checkpoint, or held for apply_changes when the tree changed since the
// plan was graded (or the mode does not let its grade apply unasked).
func write(ctx context.Context, gate *changeset.Gate, plan tool.Plan, p workspace.Path, data []byte, done string) tool.Result {
	ws := gate.Workspace()
	caller, _ := tool.CallerFrom(ctx)
	out := gate.WriteFiles(ctx, changeset.Proposal{Root: p.Root, Writer: []string{plan.Tool(), p.Target()},
		Limit: changeset.Limit(caller.Mode, plan.Risk() == policy.RiskCritical), Run: caller.Run,
		By: plan.Tool() + " " + ws.Display(p)},
		[]changeset.File{{Rel: p.Rel, Data: data}})
	switch {
	case out.Err != nil:
		if isLimit(out.Err) {
			return tool.Errorf("refused: %v", out.Err)
		}
		return tool.Errorf("cannot write %s: %v", ws.Display(p), out.Err)
	case out.Applied != nil && len(out.Applied.Skipped) > 0:
		return tool.Errorf("refused: %s is never written (%s)", ws.Display(p), out.Applied.Skipped[0].Refused)
	case out.Applied != nil:
		a := out.Applied
		what := "the file was new"
		if a.Graded.Modified > 0 {
			what = "the old content is saved"
		}
		return tool.Result{Text: fmt.Sprintf("%s (%s; `homard checkpoint rollback %s` undoes it)", done, what, a.CheckpointID),
			Effects: append([]string{"applied as checkpoint " + a.CheckpointID + ":"}, a.Graded.Paths()...)}
	case out.Graded != nil && out.Graded.Grade == workspace.GradeLow, out.Graded == nil && !out.Cancelled:
		return tool.Result{Text: done + " (the file already had this content; nothing changed)"}
	}
	text, eff := settledText(plan.Tool(), out)
	r := tool.Errorf("%s", strings.TrimPrefix(text, "\n"))
	r.Effects = eff
	return r
}
