package tools

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/workspace"
)

//go:embed list_dir.md
var listDirDoc string

// listMaxEntries caps the entries list_dir shows.
const listMaxEntries = 1000

// ListDirParams are list_dir's arguments.
type ListDirParams struct {
	Path string `json:"path,omitempty" jsonschema:"workspace-relative, or absolute in a root; default the root"`
}

// ListDir is the list_dir tool.
type ListDir struct{ ws *workspace.Workspace }

type listDirBody struct {
	Dir location `json:"dir"`
}

func (t *ListDir) Spec() tool.Spec {
	return tool.Spec{Name: "list_dir", Description: doc(listDirDoc), Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true}
}

func (t *ListDir) Prepare(ctx context.Context, p ListDirParams) (tool.Plan, error) {
	wp, targets, real, err := planRead(t.ws, cmp.Or(p.Path, ".")) // default the workspace root
	if err != nil {
		return tool.Plan{}, err
	}
	return t.Spec().Plan(tool.PlanSpec{
		Display: "list " + shown(wp, real),
		Targets: targets,
		Body:    listDirBody{Dir: locate(real)},
	})
}

func (t *ListDir) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b listDirBody
	p, name, stop, res, err := openPlan(t.ws, plan, &b, &b.Dir)
	if stop {
		return res, err
	}
	entries, err := t.ws.ReadDir(p)
	switch {
	case errors.Is(err, workspace.ErrNotDir):
		return tool.Errorf("%s is not a directory; use read_file to read a file", name), nil
	case errors.Is(err, fs.ErrNotExist):
		return tool.Errorf("%s does not exist; list its parent directory to see what is there", name), nil
	case err != nil && isLimit(err):
		return tool.Errorf("refused: %v", err), nil
	case err != nil:
		return tool.Errorf("cannot list %s: %v", name, err), nil
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%s: %s (directories end in /, symlinks in @)\n", name, plural(len(entries), "entry", "entries"))
	for i, e := range entries {
		if i == listMaxEntries {
			fmt.Fprintf(&out, "[%d more entries not shown; use glob with a narrower pattern]\n", len(entries)-i)
			break
		}
		out.WriteString(cleanName(e.Name()))
		link := e.Type()&fs.ModeSymlink != 0
		switch {
		case link:
			out.WriteString("@")
		case e.IsDir():
			out.WriteString("/")
		}
		// Shown, not hidden: the model learns the file is there and that
		// it must not try to reach it another way.
		if isSensitive(t.ws, p.Root, join(p.Rel, e.Name()), link) {
			out.WriteString(sensitiveNote)
		}
		out.WriteString("\n")
	}
	return tool.Result{Text: out.String(), Untrusted: true}, nil
}
