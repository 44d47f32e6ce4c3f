package changeset

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/workspace"
)

// Options configure a Gate.
type Options struct {
	// HoldDir is where change sets that were not applied wait for
	// apply_changes. Required for holding: without it a change set that
	// cannot apply unasked is discarded.
	HoldDir string
	// DenyPaths are the path patterns of the operator's deny rules: a
	// path they match is graded like a sensitive file and hidden from
	// sandboxed runs.
	DenyPaths []string
	// HostTools are patterns added to workspace.DefaultHostTools (config
	// commands.host_tools).
	HostTools []string
	// GitConfigs are the owner's git config files outside the roots
	// (workspace.GradeOptions.GitConfigs): a hooks path they set is
	// protected in every repository of a root.
	GitConfigs []string
}

// Gate grades, applies and holds every write into the workspace's roots.
// It is safe for concurrent use: each root's writes are serialised by the
// root's lock.
type Gate struct {
	ws   *workspace.Workspace
	o    Options
	hide hideCache // hide.go
}

// New returns the gate over ws.
func New(ws *workspace.Workspace, o Options) *Gate {
	return &Gate{ws: ws, o: o}
}

// Workspace is the workspace the gate writes into.
func (g *Gate) Workspace() *workspace.Workspace { return g.ws }

// HostTools is the grader's list of files the owner's host tools run:
// homard's defaults and the operator's additions.
func (g *Gate) HostTools() []string {
	return append(slices.Clone(workspace.DefaultHostTools), g.o.HostTools...)
}

// Hidden reports a path no sandboxed run may read and no writer may change
// unasked: a sensitive file (workspace rules, the owner's patterns and
// allowances included) or one an operator deny rule matches.
func (g *Gate) Hidden(root, rel string) bool {
	if g.ws.Sensitive(root, rel) {
		return true
	}
	if len(g.o.DenyPaths) == 0 {
		return false
	}
	p, err := g.ws.PathIn(root, rel)
	if err != nil {
		return true
	}
	target := p.Target()
	return slices.ContainsFunc(g.o.DenyPaths, func(pat string) bool { return policy.MatchPath(pat, target) })
}

// Proposal is one writer's proposed change set and what its plan said.
type Proposal struct {
	Root string
	// Writer names what made the changes, for the held set and the card:
	// a command's argv, ["write_file", "path"], a skill's argv.
	Writer []string
	// Since is when the writer started; a file changed in the real root at
	// or after it is a conflict. Zero means no conflict check.
	Since time.Time
	// Expected and RunsCode are what the plan said the writer writes
	// (workspace.GradeOptions).
	Expected []string
	RunsCode bool
	// Limit is the highest grade applied without holding (see Limit).
	Limit workspace.Grade
	// Lock is the root's lock when the caller holds it; nil means the
	// gate takes it to apply.
	Lock *workspace.RootLock
	// Run is the tool run applying it, kept in the journal.
	Run string
	// By names the writer in the checkpoint's description; empty means
	// a command.
	By string
}

// Limit is the highest grade a writer's effects may have to apply without
// being held: ordinary changes (medium) in every mode; high ones in yolo,
// the owner's choice to be asked only for critical effects; critical ones
// only when the owner approved this very call knowing it was critical
// (approvedCritical: its plan was critical, which asks once in every mode).
func Limit(mode policy.Mode, approvedCritical bool) workspace.Grade {
	switch {
	case approvedCritical:
		return workspace.GradeCritical
	case mode == policy.ModeYolo:
		return workspace.GradeHigh
	}
	return workspace.GradeMedium
}

// Outcome is what the gate did with a change set.
type Outcome struct {
	// Graded is the grading; nil when the change set could not be read or
	// graded (Err).
	Graded *workspace.Graded
	// Applied is set when the changes were applied.
	Applied *workspace.Applied
	// Held is set when they were held for apply_changes.
	Held *Held
	// ApplyErr is why applying failed (a conflict, a grade that rose under
	// the lock); the set was then held.
	ApplyErr error
	// HoldErr is why a set that could not apply could not be held either:
	// it is discarded.
	HoldErr error
	// Err is why nothing could be judged: the stream could not be read or
	// graded. Nothing was applied or held.
	Err error
	// Cancelled: the context ended while applying; nothing was applied.
	Cancelled bool
}

// gradeOptions are the grading options of a proposal.
func (g *Gate) gradeOptions(root string, since time.Time, expected []string, runsCode bool, hostTools []string) workspace.GradeOptions {
	if hostTools == nil {
		hostTools = g.HostTools()
	}
	return workspace.GradeOptions{Expected: expected, RunsCode: runsCode, Since: since,
		Sensitive: func(rel string) bool { return g.Hidden(root, rel) },
		HostTools: hostTools, GitConfigs: g.o.GitConfigs}
}

// Settle reads the change-set stream, grades it and applies it when its
// grade is within p.Limit with nothing refused and no conflict; otherwise
// it holds it for apply_changes. It closes stream.
func (g *Gate) Settle(ctx context.Context, p Proposal, stream *os.File) Outcome {
	defer stream.Close()
	return g.settle(ctx, p, stream, workspace.ReadOptions{})
}

func (g *Gate) settle(ctx context.Context, p Proposal, stream io.ReadSeeker, ro workspace.ReadOptions) Outcome {
	cs, err := workspace.ReadChanges(stream, ro)
	if err != nil {
		return Outcome{Err: fmt.Errorf("read changes: %w", err)}
	}
	defer cs.Close()
	if len(cs.Entries) == 0 {
		return Outcome{}
	}
	gopts := g.gradeOptions(p.Root, p.Since, p.Expected, p.RunsCode, nil)
	gr, err := g.ws.Grade(p.Root, cs, gopts)
	if err != nil {
		return Outcome{Err: fmt.Errorf("check changes: %w", err)}
	}
	out := Outcome{Graded: gr}
	if gr.Grade == workspace.GradeLow {
		return out
	}
	if gr.Grade <= p.Limit && !gr.Refused() && len(gr.Conflicts) == 0 {
		applied, err := g.ws.ApplyChanges(ctx, p.Root, cs, p.Since, workspace.ApplyOptions{
			Grade: gopts, Approved: p.Limit, Digest: gr.Digest, Lock: p.Lock, Run: p.Run, By: p.By})
		if err == nil {
			out.Applied, out.Graded = &applied, applied.Graded
			return out
		}
		if ctx.Err() != nil {
			out.Cancelled = true
			return out
		}
		// A conflict or a grade that rose under the lock: hold it.
		out.ApplyErr = err
		gr.Reasons = append(gr.Reasons, workspace.Reason{Grade: workspace.GradeHigh, Text: "applying failed: " + err.Error()})
	}
	held, err := g.Hold(stream, Held{Root: p.Root, Since: p.Since, Writer: p.Writer,
		Expected: p.Expected, RunsCode: p.RunsCode, HostTools: gopts.HostTools})
	if err != nil {
		out.HoldErr = err
		return out
	}
	out.Held = &held
	return out
}
