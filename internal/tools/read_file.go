package tools

import (
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

//go:embed read_file.md
var readFileDoc string

// Limits of read_file.
const (
	readMaxLines    = 2000
	readMaxBytes    = 256 << 10
	readMaxLineSize = 2000 // bytes of one line before it is cut
)

// ReadFileParams are read_file's arguments.
type ReadFileParams struct {
	Path   string `json:"path" jsonschema:"workspace-relative, or absolute in a root"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line, from 1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"lines; default and maximum 2000"`
}

// ReadFile is the read_file tool.
type ReadFile struct{ ws *workspace.Workspace }

type readFileBody struct {
	File   location `json:"file"`
	Offset int      `json:"offset"`
	Limit  int      `json:"limit"`
}

func (t *ReadFile) Spec() tool.Spec {
	return tool.Spec{Name: "read_file", Description: doc(readFileDoc), Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true}
}

// Prepare resolves the path; offset and limit out of range are clamped
// (offset below 1 to 1, limit outside 1..2000 to 2000).
func (t *ReadFile) Prepare(ctx context.Context, p ReadFileParams) (tool.Plan, error) {
	wp, targets, real, err := planRead(t.ws, p.Path)
	if err != nil {
		return tool.Plan{}, err
	}
	body := readFileBody{File: locate(real), Offset: max(p.Offset, 1), Limit: p.Limit}
	if body.Limit <= 0 || body.Limit > readMaxLines {
		body.Limit = readMaxLines
	}
	return t.Spec().Plan(tool.PlanSpec{
		Display: fmt.Sprintf("read %s (lines %d-%d)", shown(wp, real), body.Offset, body.Offset+body.Limit-1),
		Targets: targets,
		Body:    body,
	})
}

func (t *ReadFile) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b readFileBody
	p, name, stop, res, err := openPlan(t.ws, plan, &b, &b.File)
	if stop {
		return res, err
	}
	data, failed := readText(t.ws, p, name, "read_file only reads text")
	if failed != nil {
		return *failed, nil
	}
	if len(data) == 0 {
		return tool.Result{Text: name + " is empty", Untrusted: true}, nil
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if b.Offset > len(lines) {
		return tool.Errorf("%s has %s; offset %d is past the end", name, plural(len(lines), "line", "lines"), b.Offset), nil
	}
	var out strings.Builder
	last := b.Offset - 1 // last line written, 1-based
	for i := b.Offset - 1; i < len(lines) && i < b.Offset-1+b.Limit; i++ {
		line := fmt.Sprintf("%6d\t%s\n", i+1, truncate(lines[i], readMaxLineSize))
		if out.Len()+len(line) > readMaxBytes {
			break
		}
		out.WriteString(line)
		last = i + 1
	}
	if last < len(lines) {
		fmt.Fprintf(&out, "[showing lines %d-%d of %d; call read_file with offset=%d to read on]\n", b.Offset, last, len(lines), last+1)
	}
	return tool.Result{Text: out.String(), Untrusted: true}, nil
}

// readText reads the text file p, which the model knows as name, for a
// file tool's Run. A file it cannot read, or one that is not text, is
// instead the error Result Run returns (failed), ending with only: what
// the tool does with text ("read_file only reads text").
func readText(ws *workspace.Workspace, p workspace.Path, name, only string) (data []byte, failed *tool.Result) {
	data, err := ws.ReadFile(p)
	if err != nil {
		res := readError(name, err)
		return nil, &res
	}
	if isBinary(data) {
		res := tool.Errorf("%s looks like a binary file (it has NUL bytes or invalid UTF-8); %s", name, only)
		return nil, &res
	}
	return data, nil
}

// readError turns a workspace read failure into a Result saying what to do.
func readError(name string, err error) tool.Result {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tool.Errorf("%s does not exist; check the path with list_dir or glob", name)
	case errors.Is(err, workspace.ErrNotRegular):
		return tool.Errorf("%s is not a regular file (%v); use list_dir for directories", name, err)
	case errors.Is(err, workspace.ErrTooLarge):
		return tool.Errorf("%v; use grep to search it instead", err)
	case isLimit(err):
		return tool.Errorf("refused: %v", err)
	}
	return tool.Errorf("cannot read %s: %v", name, err)
}
