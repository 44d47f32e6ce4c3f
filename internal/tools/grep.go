package tools

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/workspace"
)

//go:embed grep.md
var grepDoc string

// Limits of grep.
const (
	grepMaxMatches  = 500
	grepMaxBytes    = 64 << 10
	grepMaxLineSize = 500 // bytes of one matching line before it is cut
)

// GrepParams are grep's arguments.
type GrepParams struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty" jsonschema:"file or folder: workspace-relative, or absolute in a root; default the root"`
}

// Grep is the grep tool.
type Grep struct{ ws *workspace.Workspace }

type grepBody struct {
	Base    location `json:"base"`
	Pattern string   `json:"pattern"`
}

func (t *Grep) Spec() tool.Spec {
	return tool.Spec{Name: "grep", Description: doc(grepDoc), Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true}
}

// Prepare checks the expression and resolves the path. An invalid
// expression can never run, so it is refused (policy.RuleArgsInvalid)
// with the parser's reason.
func (t *Grep) Prepare(ctx context.Context, p GrepParams) (tool.Plan, error) {
	if _, err := regexp.Compile(p.Pattern); err != nil {
		return tool.Plan{}, tool.InvalidArgs("pattern is not a valid RE2 regular expression: %v; fix it (Go regexp syntax: no lookaround or backreferences)", err)
	}
	wp, targets, real, err := planRead(t.ws, cmp.Or(p.Path, ".")) // default the workspace root
	if err != nil {
		return tool.Plan{}, err
	}
	return t.Spec().Plan(tool.PlanSpec{
		Display: fmt.Sprintf("search %s for /%s/", shown(wp, real), p.Pattern),
		Targets: targets,
		Body:    grepBody{Base: locate(real), Pattern: p.Pattern},
	})
}

// grepState accumulates output within the caps.
type grepState struct {
	out     strings.Builder
	matches int
	full    bool // a cap was reached
	skipped int  // binary, oversized or unreadable files
	secret  int  // sensitive files and folders, not searched
}

func (t *Grep) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b grepBody
	if err := plan.Decode(&b); err != nil {
		return tool.Result{}, err
	}
	re, err := regexp.Compile(b.Pattern)
	if err != nil {
		return tool.Errorf("pattern is not a valid RE2 regular expression: %v", err), nil
	}
	p, refused := reopen(t.ws, b.Base)
	if refused != nil {
		return *refused, nil
	}
	name := t.ws.Display(p)
	fi, err := t.ws.Stat(p)
	if err != nil {
		return walkError(name, err), nil
	}
	var st grepState
	exhausted := false
	if fi.Mode().IsRegular() {
		t.searchFile(&st, re, p)
	} else {
		fsys, err := t.ws.FS(p.Root)
		if err != nil {
			return tool.Errorf("refused: %v", err), nil
		}
		exhausted, err = walk(ctx, fsys, p.Rel, true, -1, func(rel string, d fs.DirEntry) error {
			if (d.IsDir() || d.Type().IsRegular()) && t.ws.Sensitive(p.Root, join(p.Rel, rel)) {
				st.secret++
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil // directories are walked; symlinks and devices are not read
			}
			if info, err := d.Info(); err != nil || info.Size() > t.ws.MaxFileBytes() {
				st.skipped++
				return nil
			}
			t.searchFile(&st, re, workspace.Path{Root: p.Root, Rel: join(p.Rel, rel)})
			if st.full {
				return errStop
			}
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, err
			}
			return walkError(name, err), nil
		}
	}
	if st.matches == 0 {
		fmt.Fprintf(&st.out, "no matches for /%s/ in %s\n", b.Pattern, name)
	}
	if st.full {
		fmt.Fprintf(&st.out, "[stopped at %d matches or %d KiB; narrow the pattern or the path]\n", st.matches, grepMaxBytes>>10)
	}
	if exhausted {
		fmt.Fprintf(&st.out, "[stopped after visiting %d entries; search a narrower path]\n", walkMaxVisits)
	}
	if st.secret > 0 {
		fmt.Fprintf(&st.out, "[not searched: %s that hold credentials (sensitive; refused to tools unless the owner allows them in config)]\n", plural(st.secret, "file or folder", "files or folders"))
	}
	if st.skipped > 0 {
		fmt.Fprintf(&st.out, "[skipped %s: binary, over the size limit or unreadable]\n", plural(st.skipped, "file", "files"))
	}
	return tool.Result{Text: st.out.String(), Untrusted: true}, nil
}

// searchFile appends the matching lines of one file. The read goes
// through the workspace (os.Root, size cap), never around it.
func (t *Grep) searchFile(st *grepState, re *regexp.Regexp, p workspace.Path) {
	data, err := t.ws.ReadFile(p)
	if err != nil || isBinary(data) {
		if !errors.Is(err, fs.ErrNotExist) {
			st.skipped++
		}
		return
	}
	name := cleanName(t.ws.Display(p))
	for i, line := range strings.Split(string(data), "\n") {
		if !re.MatchString(line) {
			continue
		}
		entry := fmt.Sprintf("%s:%d:%s\n", name, i+1, truncate(line, grepMaxLineSize))
		if st.matches == grepMaxMatches || st.out.Len()+len(entry) > grepMaxBytes {
			st.full = true
			return
		}
		st.out.WriteString(entry)
		st.matches++
	}
}
