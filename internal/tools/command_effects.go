package tools

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/workspace"
)

// settler settles the change sets of sandboxed runs (run_command's and
// run_skill's writes to a workspace root) through the one gate.
type settler struct{ gate *changeset.Gate }

// hide lists the paths of root (at its real path) a sandboxed run must
// not read.
func (c settler) hide(root, path string) ([]string, error) { return c.gate.Hide(root, path) }

// settle grades what an overlay run changed and applies it when the grade
// is within what the mode lets apply unasked (changeset.Limit); otherwise
// the gate holds the change set for apply_changes, which always asks the
// owner. It returns the text the model reads; what names the run in it
// ("the command").
func (c settler) settle(ctx context.Context, what, rootName string, changes *os.File, since time.Time, argv []string, expected []string, runsCode bool, lock *workspace.RootLock) (text string, effects []string) {
	caller, _ := tool.CallerFrom(ctx)
	// The limit is the mode's alone, with nothing approved above it
	// (approvedCritical false): however the call was let run — a
	// one-time approval, a session grant of a command that runs code, an
	// operator rule, autopilot — a change graded above what the mode
	// applies unasked (a hook, a protected path, a repository's shape) is
	// held for apply_changes, whose card the owner answers once. A grant
	// decides the call, never its effects.
	out := c.gate.Settle(ctx, changeset.Proposal{Root: rootName, Writer: argv, Since: since,
		Expected: expected, RunsCode: runsCode, Limit: changeset.Limit(caller.Mode, false), Lock: lock, Run: caller.Run}, changes)
	return settledText(what, out)
}

// settledText is what the model reads of a gate's outcome, and the
// effects listed on the run.
func settledText(what string, out changeset.Outcome) (text string, effects []string) {
	g := out.Graded
	switch {
	case out.Err != nil:
		return fmt.Sprintf("\n%s's changes could not be checked (%v); nothing was applied", what, out.Err), nil
	case out.Cancelled:
		return "\nthe turn was cancelled; nothing was applied", nil
	case g == nil || g.Grade == workspace.GradeLow:
		return "", nil
	case out.Applied != nil:
		a := out.Applied
		return fmt.Sprintf("\napplied %s (checkpoint %s; the owner can undo it with `homard checkpoint rollback %s`)",
				changeSummary(a.Graded), a.CheckpointID, a.CheckpointID),
			append([]string{"applied as checkpoint " + a.CheckpointID + ":"}, a.Graded.Paths()...)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s's changes were NOT applied (%s, graded %s):", what, changeSummary(g), g.Grade)
	for _, r := range g.Reasons {
		fmt.Fprintf(&b, "\n  %s", r)
	}
	for _, cf := range g.Conflicts {
		fmt.Fprintf(&b, "\n  conflict: %q changed while %s ran", cf, what)
	}
	if out.HoldErr != nil {
		fmt.Fprintf(&b, "\nthey could not be kept for review (%v) and are discarded", out.HoldErr)
		return b.String(), append([]string{"not applied, discarded (graded " + g.Grade.String() + "):"}, g.Paths()...)
	}
	id := out.Held.ID
	fmt.Fprintf(&b, "\nthey are held as change set %s; to apply them, call apply_changes with {\"id\": %q}: the owner sees every change and decides", id, id)
	return b.String(), append([]string{"not applied, held as " + id + " (graded " + g.Grade.String() + "):"}, g.Paths()...)
}

// changeSummary: "3 created, 1 modified, 2 deleted".
func changeSummary(g *workspace.Graded) string {
	if g == nil {
		return "no changes"
	}
	return fmt.Sprintf("%d created, %d modified, %d deleted", g.Created, g.Modified, g.Deleted)
}
