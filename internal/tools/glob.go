package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/workspace"
)

//go:embed glob.md
var globDoc string

// globMaxResults caps the paths glob returns.
const globMaxResults = 1000

// GlobParams are glob's arguments.
type GlobParams struct {
	Pattern string `json:"pattern" jsonschema:"workspace-relative, or absolute in a root"`
}

// Glob is the glob tool. Matching is hand-rolled over fs.WalkDir on the
// root's workspace FS with policy.MatchPath ("**" = any number of
// elements, path.Match for the rest): no doublestar dependency, and the
// walk can neither leave the root, nor follow a symlinked directory, nor
// see homard's own files.
type Glob struct{ ws *workspace.Workspace }

type globBody struct {
	Base    location `json:"base"`    // directory the walk starts in
	Pattern string   `json:"pattern"` // the rest of the pattern, relative to Base
}

func (t *Glob) Spec() tool.Spec {
	return tool.Spec{Name: "glob", Description: doc(globDoc), Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true}
}

// Prepare splits the pattern into a literal base directory (resolved like
// any path) and the wildcard rest.
func (t *Glob) Prepare(ctx context.Context, p GlobParams) (tool.Plan, error) {
	// The whole pattern must pass the path checks (no "..", no encoded
	// characters, inside a root, not homard's own files); wildcards are
	// ordinary characters there.
	// A pattern such as "**/*.pem" only lists names, which are shown
	// (marked) for sensitive files: the sensitive check is not applied to
	// the pattern text.
	whole, err := resolve(t.ws, p.Pattern)
	if err != nil {
		return tool.Plan{}, err
	}
	if err := t.ws.CheckRead(whole); !errors.Is(err, workspace.ErrSensitive) {
		if err := limitOnly(err); err != nil {
			return tool.Plan{}, err
		}
	}
	base, rest := splitPattern(p.Pattern)
	for _, e := range rest {
		if _, err := path.Match(e, ""); err != nil {
			return tool.Plan{}, tool.InvalidArgs("pattern %q: element %q is malformed (%v); check the [...] brackets", p.Pattern, e, err)
		}
	}
	wp, targets, real, err := planRead(t.ws, base)
	if err != nil {
		return tool.Plan{}, err
	}
	pattern := strings.Join(rest, "/")
	return t.Spec().Plan(tool.PlanSpec{
		Display: fmt.Sprintf("find %q under %s", pattern, shown(wp, real)),
		Targets: targets,
		Body:    globBody{Base: locate(real), Pattern: pattern},
	})
}

// splitPattern returns the leading elements without wildcards as a base
// path and the remaining elements. A pattern without wildcards matches
// itself: its parent is the base.
func splitPattern(pattern string) (base string, rest []string) {
	var elems []string
	for i, e := range strings.Split(pattern, "/") {
		if e != "" && e != "." || i == 0 {
			elems = append(elems, e)
		}
	}
	i := 0
	for i < len(elems) && !strings.ContainsAny(elems[i], `*?[\`) {
		i++
	}
	if i == len(elems) && i > 0 {
		i--
	}
	base = strings.Join(elems[:i], "/")
	switch {
	case base == "" && strings.HasPrefix(pattern, "/"):
		base = "/"
	case base == "":
		base = "."
	}
	return base, elems[i:]
}

func (t *Glob) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b globBody
	p, dir, stop, res, err := openPlan(t.ws, plan, &b, &b.Base)
	if stop {
		return res, err
	}
	fsys, err := t.ws.FS(p.Root)
	if err != nil {
		return tool.Errorf("refused: %v", err), nil
	}
	elems := strings.Split(b.Pattern, "/")
	maxDepth := len(elems)
	skipGit := true
	for _, e := range elems {
		if e == "**" {
			maxDepth = -1
		}
		if strings.EqualFold(e, ".git") {
			skipGit = false
		}
	}
	var found []string
	more := false
	exhausted, err := walk(ctx, fsys, p.Rel, skipGit, maxDepth, func(rel string, d fs.DirEntry) error {
		if !policy.MatchPath(b.Pattern, rel) {
			return nil
		}
		if len(found) == globMaxResults {
			more = true
			return errStop
		}
		name := cleanName(t.ws.Display(workspace.Path{Root: p.Root, Rel: join(p.Rel, rel)}))
		if d.IsDir() {
			name += "/"
		}
		if isSensitive(t.ws, p.Root, join(p.Rel, rel), d.Type()&fs.ModeSymlink != 0) {
			name += sensitiveNote
		}
		found = append(found, name)
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, err
		}
		return walkError(dir, err), nil
	}
	var out strings.Builder
	if len(found) == 0 {
		fmt.Fprintf(&out, "no paths match %q under %s\n", b.Pattern, dir)
	}
	for _, f := range found {
		out.WriteString(f + "\n")
	}
	if more {
		fmt.Fprintf(&out, "[stopped at %d results; use a narrower pattern]\n", globMaxResults)
	}
	if exhausted {
		fmt.Fprintf(&out, "[stopped after visiting %d entries; use a narrower pattern or base directory]\n", walkMaxVisits)
	}
	return tool.Result{Text: out.String(), Untrusted: true}, nil
}

// walkError reports a walk that could not start.
func walkError(name string, err error) tool.Result {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tool.Errorf("%s does not exist; check the path with list_dir", name)
	case isLimit(err):
		return tool.Errorf("refused: %v", err)
	}
	return tool.Errorf("cannot search %s: %v", name, err)
}
