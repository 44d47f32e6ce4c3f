package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/workspace"
)

//go:embed edit_file.md
var editFileDoc string

// editPreviewBytes caps each side of the text shown on an approval card.
const editPreviewBytes = 2000

// EditFileParams are edit_file's arguments.
type EditFileParams struct {
	Path    string `json:"path" jsonschema:"workspace-relative, or absolute in a root"`
	OldText string `json:"old_text"`
	NewText string `json:"new_text"`
}

// EditFile is the edit_file tool.
type EditFile struct {
	ws   *workspace.Workspace
	gate *changeset.Gate
}

type editFileBody struct {
	File    location `json:"file"`
	OldText string   `json:"old_text"`
	NewText string   `json:"new_text"`
}

func (t *EditFile) Spec() tool.Spec {
	return tool.Spec{Name: "edit_file", Description: doc(editFileDoc), Action: policy.ActionWrite, Risk: policy.RiskMedium}
}

func (t *EditFile) Prepare(ctx context.Context, p EditFileParams) (tool.Plan, error) {
	wp, targets, real, err := planWrite(t.ws, p.Path)
	if err != nil {
		return tool.Plan{}, err
	}
	risk, graded, err := gradeWrite(t.gate, real, t.edited(real, p.OldText, p.NewText))
	if err != nil {
		return tool.Plan{}, err
	}
	display := fmt.Sprintf("edit %s: replace %d bytes with %d bytes\n--- old\n%s\n+++ new\n%s",
		shown(wp, real), len(p.OldText), len(p.NewText),
		truncate(p.OldText, editPreviewBytes), truncate(p.NewText, editPreviewBytes))
	return t.Spec().Plan(tool.PlanSpec{
		Risk:    risk,
		Display: display + graded,
		PreviewFunc: func() string {
			return editPreview(t.ws, real, shown(wp, real), p.OldText, p.NewText)
		},
		Targets: targets,
		Body:    editFileBody{File: locate(real), OldText: p.OldText, NewText: p.NewText},
	})
}

func (t *EditFile) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b editFileBody
	p, name, stop, res, err := openPlan(t.ws, plan, &b, &b.File)
	if stop {
		return res, err
	}
	if b.OldText == "" {
		return tool.Errorf("old_text is empty; give the exact text to replace, or use write_file to create or rewrite %s", name), nil
	}
	if b.OldText == b.NewText {
		return tool.Errorf("old_text and new_text are the same; nothing would change in %s", name), nil
	}
	data, failed := readText(t.ws, p, name, "edit_file only edits text")
	if failed != nil {
		return *failed, nil
	}
	content := string(data)
	at, n := occurrences(content, b.OldText)
	switch {
	case n == 0:
		return tool.Errorf("old_text was not found in %s; read the file again and copy the exact text, including whitespace and indentation", name), nil
	case n > 1:
		return tool.Errorf("old_text was found %d times in %s; include more surrounding lines so it matches exactly once", n, name), nil
	}
	line := strings.Count(content[:at], "\n") + 1
	edited := content[:at] + b.NewText + content[at+len(b.OldText):]
	return write(ctx, t.gate, plan, p, []byte(edited), fmt.Sprintf("edited %s at line %d", name, line)), nil
}

// edited is the file's content after the edit, as far as Prepare can
// tell (the file as it is when the edit does not apply: the gate grades
// the path either way; Run computes the edit again on the file as it is
// then).
func (t *EditFile) edited(p workspace.Path, oldText, newText string) []byte {
	data, err := t.ws.ReadFile(p)
	if err != nil {
		return nil
	}
	content := string(data)
	if at, n := occurrences(content, oldText); n == 1 && oldText != "" {
		return []byte(content[:at] + newText + content[at+len(oldText):])
	}
	return data
}

// occurrences finds where sub occurs in s and how many times, counting
// overlapping matches ("aa" occurs twice in "aaa"), since an overlapping
// second match makes the edit just as ambiguous.
func occurrences(s, sub string) (first, n int) {
	first = -1
	for from := 0; from <= len(s); {
		i := strings.Index(s[from:], sub)
		if i < 0 {
			break
		}
		if first < 0 {
			first = from + i
		}
		n++
		from += i + 1
	}
	return first, n
}

// editPreview is an edit's card: the diff of the whole file as it is now
// against the file with the edit applied. When the edit cannot apply to
// the current file (old_text missing or ambiguous, the file unreadable),
// it says so and shows the replaced text against its replacement.
func editPreview(ws *workspace.Workspace, real workspace.Path, name, oldText, newText string) string {
	data, exists, _ := currentContent(ws, real)
	note := ""
	switch {
	case !exists:
		note = "the file cannot be read now; the edit will fail unless it appears"
	case isBinary(data):
		note = "the file is binary; the edit will fail"
	case oldText == "":
		note = "old_text is empty; the edit will fail"
	default:
		content := string(data)
		at, n := occurrences(content, oldText)
		if n == 1 {
			return contentDiff(name, data, true, []byte(content[:at]+newText+content[at+len(oldText):]))
		}
		note = fmt.Sprintf("old_text occurs %d times in the current file; the edit will fail unless that changes", n)
	}
	d := udiff.Unified(name+" (old_text)", name+" (new_text)", oldText, newText)
	if d == "" {
		d = fmt.Sprintf("--- %s (old_text)\n+++ %s (new_text)\n", name, name)
	}
	return d + "(" + note + ")\n"
}
