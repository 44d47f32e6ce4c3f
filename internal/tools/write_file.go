package tools

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"fmt"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/workspace"
)

//go:embed write_file.md
var writeFileDoc string

// WriteFileParams are write_file's arguments.
type WriteFileParams struct {
	Path    string `json:"path" jsonschema:"relative to the workspace, or absolute under a root"`
	Content string `json:"content"`
}

// WriteFile is the write_file tool.
type WriteFile struct{ ws *workspace.Workspace }

var _ tool.Typed[WriteFileParams] = (*WriteFile)(nil)

type writeFileBody struct {
	File    location `json:"file"`
	Content string   `json:"content"`
}

func (t *WriteFile) Spec() tool.Spec {
	return tool.Spec{Name: "write_file", Description: doc(writeFileDoc), Action: policy.ActionWrite, Risk: policy.RiskMedium}
}

func (t *WriteFile) Prepare(ctx context.Context, p WriteFileParams) (tool.Plan, error) {
	wp, err := resolve(t.ws, p.Path)
	if err != nil {
		return tool.Plan{}, err
	}
	if err := checkWrite(t.ws, wp); err != nil {
		return tool.Plan{}, err
	}
	targets, real, err := planned(t.ws, wp)
	if err != nil {
		return tool.Plan{}, err
	}
	if int64(len(p.Content)) > t.ws.MaxFileBytes() {
		return tool.Plan{}, tool.Refuse(policy.RuleLimitSize, "content is %d bytes; the file size limit is %d", len(p.Content), t.ws.MaxFileBytes())
	}
	return tool.NewPlan(tool.PlanSpec{
		Tool: "write_file", Action: policy.ActionWrite, Risk: policy.RiskMedium,
		Display: fmt.Sprintf("write %s: %d bytes, sha256 %s, %s", shown(wp, real), len(p.Content),
			shortHash(sha256.Sum256([]byte(p.Content))), effect(t.ws, real)),
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
	if err := plan.Decode(&b); err != nil {
		return tool.Result{}, err
	}
	p, refused := reopen(t.ws, b.File)
	if refused != nil {
		return *refused, nil
	}
	return write(t.ws, p, []byte(b.Content), fmt.Sprintf("wrote %d bytes to %s", len(b.Content), t.ws.Display(p))), nil
}

// write runs WriteFile and reports the outcome with the checkpoint id.
func write(ws *workspace.Workspace, p workspace.Path, data []byte, done string) tool.Result {
	id, err := ws.WriteFile(p, data)
	if err != nil {
		if isLimit(err) {
			return tool.Errorf("refused: %v", err)
		}
		return tool.Errorf("cannot write %s: %v", ws.Display(p), err)
	}
	if id == "" {
		return tool.Result{Text: done + " (new file)"}
	}
	return tool.Result{Text: fmt.Sprintf("%s; the old content is saved as checkpoint %s", done, id)}
}
