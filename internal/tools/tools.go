// Package tools holds homard's built-in tools, one file each: the file
// tools (read_file, write_file, edit_file, list_dir, glob, grep),
// run_command, http_get, web_search, current_time, read_artifact (which
// reads the caller's own artifacts through an ArtifactSource) and the memory
// tools (remember, recall, forget; owner only, see MemoryTools), and
// tool_search with call_tool's definition (toolsearch.go). Tools that
// need to know who is asking take the caller from the context, never from
// their arguments.
//
// Contract, for every tool here:
//   - Params are a typed struct; the JSON schema is generated from it and
//     the description is the embedded .md file next to the tool.
//   - Prepare resolves paths through the workspace and returns a tool.Refusal
//     for hard-limit violations (policy.RuleLimitWorkspace,
//     RuleLimitProtected, RuleLimitSymlink, RuleLimitSize,
//     RuleLimitRootReadOnly; a fixable argument is policy.RuleArgsInvalid).
//     It has no side effects.
//     Plan targets are workspace.Path.Target values: the path as written
//     and, when a symlink makes it lead elsewhere, its real location
//     (workspace.Workspace.Real), so operator rules and grants must match
//     both; the Plan body holds the real location, which Run uses.
//   - The Plan body holds everything Run needs (root name, relative path,
//     content...). Run decodes it with plan.Decode, works only from it, and
//     re-resolves every path through the workspace: nothing Prepare checked
//     is trusted.
//   - Expected failures (file missing, binary file, no unique match) are
//     error Results the model can act on; a Go error means the turn should
//     stop.
//   - Content read from files is marked Untrusted: it is data, never
//     instructions.
package tools

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/workspace"
)

// FileTools returns the built-in file tools over the gate's workspace
// (write_file and edit_file write through the gate), plus current_time
// reading now (nil means time.Now).
func FileTools(gate *changeset.Gate, now func() time.Time) []tool.Tool {
	if now == nil {
		now = time.Now
	}
	ws := gate.Workspace()
	return []tool.Tool{
		tool.Adapt[ReadFileParams](&ReadFile{ws: ws}),
		tool.Adapt[WriteFileParams](&WriteFile{ws: ws, gate: gate}),
		tool.Adapt[EditFileParams](&EditFile{ws: ws, gate: gate}),
		tool.Adapt[ListDirParams](&ListDir{ws: ws}),
		tool.Adapt[GlobParams](&Glob{ws: ws}),
		tool.Adapt[GrepParams](&Grep{ws: ws}),
		tool.Adapt[CurrentTimeParams](&CurrentTime{now: now}),
	}
}

// upTo checks a whole-number argument named name that the model may leave
// out: zero means def, and a value outside 1..most is an argument error.
func upTo(name string, n, def, most int) (int, error) {
	if n == 0 {
		return def, nil
	}
	if n < 1 || n > most {
		return 0, tool.InvalidArgs("%s must be between 1 and %d", name, most)
	}
	return n, nil
}

// doc is an embedded description without the file's final newline, which
// would otherwise travel, escaped, in every request to the model.
func doc(s string) string { return strings.TrimSpace(s) }

// location is how a plan body names a file: root name and relative path.
type location struct {
	Root string `json:"root"`
	Rel  string `json:"rel"`
}

func locate(p workspace.Path) location { return location{Root: p.Root, Rel: p.Rel} }

// resolve maps a model-sent path for Prepare, turning a confinement
// violation into a Refusal.
func resolve(ws *workspace.Workspace, p string) (workspace.Path, error) {
	wp, err := ws.Resolve(p)
	if err != nil {
		return workspace.Path{}, refusal(err)
	}
	return wp, nil
}

// checkWrite applies the workspace's write checks for Prepare. Hard limits
// become Refusals; other failures (a parent that is a file, permissions)
// are left for Run to report, since WriteFile checks everything again.
func checkWrite(ws *workspace.Workspace, p workspace.Path) error {
	return limitOnly(ws.CheckWrite(p))
}

// checkRead applies the workspace's read checks for Prepare: homard's own
// files (and symlinks leading to them) become a policy.RuleLimitProtected
// Refusal.
// Run checks again, on the opened file.
func checkRead(ws *workspace.Workspace, p workspace.Path) error {
	return limitOnly(ws.CheckRead(p))
}

// planned is what a file tool's Plan names: its targets (the path as
// written, plus the real location when a symlink leads elsewhere: an allow
// rule or a grant must cover both, a deny rule fires on either) and the
// real location, which the body holds and Run uses.
func planned(ws *workspace.Workspace, wp workspace.Path) (targets []string, real workspace.Path, err error) {
	real, err = ws.Real(wp)
	if err != nil {
		return nil, workspace.Path{}, refusal(err)
	}
	targets = []string{wp.Target()}
	if real.Target() != wp.Target() {
		targets = append(targets, real.Target())
	}
	return targets, real, nil
}

// planRead resolves a model-sent path for a reading tool's Prepare:
// resolveRead, then planned. It returns the path as written, the Plan's
// targets and the real location, which the body holds.
func planRead(ws *workspace.Workspace, p string) (wp workspace.Path, targets []string, real workspace.Path, err error) {
	if wp, err = resolveRead(ws, p); err != nil {
		return workspace.Path{}, nil, workspace.Path{}, err
	}
	targets, real, err = planned(ws, wp)
	return wp, targets, real, err
}

// planWrite resolves a model-sent path for a writing tool's Prepare:
// resolve, checkWrite, then planned. It returns what planRead returns.
func planWrite(ws *workspace.Workspace, p string) (wp workspace.Path, targets []string, real workspace.Path, err error) {
	if wp, err = resolve(ws, p); err != nil {
		return workspace.Path{}, nil, workspace.Path{}, err
	}
	if err = checkWrite(ws, wp); err != nil {
		return workspace.Path{}, nil, workspace.Path{}, err
	}
	targets, real, err = planned(ws, wp)
	return wp, targets, real, err
}

// shown names a planned path on a card: "notes/x" or, through a symlink,
// "notes/x (→ secrets/y)".
func shown(wp, real workspace.Path) string {
	if real.Target() == wp.Target() {
		return wp.Target()
	}
	return wp.Target() + " (→ " + real.Target() + ")"
}

// sensitiveNote marks a listed name the file tools refuse.
const sensitiveNote = "  (sensitive: refused to tools; the owner can allow it in config)"

// isSensitive reports whether the entry rel of root is a sensitive file
// where it really leads (a symlink is followed inside the root).
func isSensitive(ws *workspace.Workspace, root, rel string, symlink bool) bool {
	if ws.Sensitive(root, rel) {
		return true
	}
	if !symlink {
		return false
	}
	p, err := ws.PathIn(root, rel)
	if err != nil {
		return false
	}
	real, err := ws.Real(p)
	return err == nil && ws.Sensitive(root, real.Rel)
}

// resolveRead is resolve followed by checkRead.
func resolveRead(ws *workspace.Workspace, p string) (workspace.Path, error) {
	wp, err := resolve(ws, p)
	if err == nil {
		err = checkRead(ws, wp)
	}
	return wp, err
}

// limitOnly turns a hard limit into a Refusal and drops other failures,
// which Run reports.
func limitOnly(err error) error {
	if err == nil || isLimit(err) {
		return refusal(err)
	}
	return nil
}

// refusal converts a workspace limit error into a tool.Refusal; any other
// failure to resolve (a permission problem) is reported to the model as an
// argument error rather than aborting the turn.
func refusal(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, workspace.ErrProtected):
		return tool.Refuse(policy.RuleLimitProtected, "%v", err)
	case errors.Is(err, workspace.ErrSensitive):
		return tool.Refuse(policy.RuleLimitSensitive, "%v", err)
	case errors.Is(err, workspace.ErrReadOnly):
		return tool.Refuse(policy.RuleLimitRootReadOnly, "%v", err)
	case errors.Is(err, workspace.ErrSymlink):
		return tool.Refuse(policy.RuleLimitSymlink, "%v", err)
	case errors.Is(err, workspace.ErrTooLarge):
		return tool.Refuse(policy.RuleLimitSize, "%v", err)
	case isLimit(err):
		return tool.Refuse(policy.RuleLimitWorkspace, "%v", err)
	}
	return tool.InvalidArgs("%v", err)
}

// isLimit reports whether err is a workspace hard limit rather than an
// ordinary failure.
func isLimit(err error) bool {
	for _, e := range []error{
		workspace.ErrEmptyPath, workspace.ErrNUL, workspace.ErrControl, workspace.ErrTooLong,
		workspace.ErrDotDot, workspace.ErrEncoded, workspace.ErrOutside, workspace.ErrEscape,
		workspace.ErrUnknownRoot, workspace.ErrProtected, workspace.ErrSymlink, workspace.ErrTooLarge,
		workspace.ErrSensitive, workspace.ErrReadOnly,
	} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// reopen names a plan body's location at run time. Only lexical checks
// run here (the root still exists, the relative path is clean); whether
// the path leaves the root or reaches a protected file is decided by the
// operation itself, through the os.Root and on the opened file, so a
// symlink swapped in after Prepare is refused at that moment. A refusal
// is an error Result: the workspace changed since the plan was made.
func reopen(ws *workspace.Workspace, l location) (workspace.Path, *tool.Result) {
	p, err := ws.PathIn(l.Root, l.Rel)
	if err != nil {
		r := tool.Errorf("refused: %v", err)
		return workspace.Path{}, &r
	}
	return p, nil
}

// openPlan begins a file tool's Run: it decodes plan's body into body and
// reopens at, the body's location field, as p, which the model knows as
// name (Workspace.Display). When Run must stop there, stop is true and res
// and err are what it returns: a body that does not decode is a Go error,
// a location refused now an error Result (see reopen).
func openPlan(ws *workspace.Workspace, plan tool.Plan, body any, at *location) (p workspace.Path, name string, stop bool, res tool.Result, err error) {
	if err := plan.Decode(body); err != nil {
		return workspace.Path{}, "", true, tool.Result{}, err
	}
	p, refused := reopen(ws, *at)
	if refused != nil {
		return workspace.Path{}, "", true, *refused, nil
	}
	return p, ws.Display(p), false, tool.Result{}, nil
}

// isBinary reports content the text tools refuse: a NUL byte or invalid
// UTF-8.
func isBinary(b []byte) bool {
	return !utf8.Valid(b) || strings.IndexByte(string(b), 0) >= 0
}

// shortHash is the first 12 hex digits of a SHA-256, for display.
func shortHash(sum [32]byte) string { return fmt.Sprintf("%x", sum[:6]) }

// cleanName shows a file name safely on one line: quoted when it holds
// control characters or invalid UTF-8.
func cleanName(s string) string {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		return strconv.Quote(s)
	}
	return s
}

// truncate cuts s to at most n bytes at a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:tool.RuneCut(s, n)] + " … [line truncated]"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
