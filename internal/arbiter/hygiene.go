package arbiter

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/tool"
)

// Crash consistency and approval hygiene (issue 11, items 12 and 13).
//
// A Plan with an effect is recorded as a ToolRun "running" in its own
// commit before it runs (stage 8), and that row is held by the running
// process (store's run locks). Its audit record is written when the run
// ends, with its outcome — or, if the process died first, by
// RecoverInterrupted at the next start, so every effect that may have
// happened has an audit record: one per proposal, as the contract says,
// written when the outcome is known.

// interruptedText is what an interrupted run's result and audit reason say.
const interruptedText = "interrupted: homard stopped while this ran (killed, or the machine went down); " +
	"its effect may be partly applied — check what it names; `homard checkpoint list` shows what can be undone"

// RecoverInterrupted marks every tool run that a process which has since
// died left running: failed, rule store.RunInterrupted, with one audit
// record each (decision error). Runs of live processes — a daemon next to
// this CLI command — are not touched. Call it at start.
func (a *Arbiter) RecoverInterrupted(ctx context.Context) ([]store.ToolRun, error) {
	var all []store.ToolRun
	for {
		var batch []store.ToolRun
		now := a.o.Now()
		err := a.o.Store.Write(ctx, func(tx *store.Tx) error {
			found, err := tx.OrphanedRuns(0)
			if err != nil {
				return err
			}
			for _, r := range found {
				if err := tx.InterruptToolRun(r.ID, interruptedText, now); err != nil {
					return err
				}
				_, err := audit.Append(tx, audit.Record{
					Time: now, Owner: r.Owner, Session: r.SessionID,
					// Trust is not kept on the run row; the proposal's own
					// record is the one that never got written.
					Tool: capText(r.Tool, 128), Decision: audit.Errored, Rule: store.RunInterrupted, Reason: interruptedText,
					Args: capText(string(r.Plan), a.o.MaxAuditArgs), PlanHash: r.PlanHash, RunID: r.ID, ApprovalID: r.ApprovalID,
					Effects: a.interruptedEffects(r),
				})
				if err != nil {
					return err
				}
				r.Status, r.Rule, r.Result = store.RunFailed, store.RunInterrupted, interruptedText
				batch = append(batch, r)
			}
			return nil
		})
		if err != nil {
			return all, fmt.Errorf("arbiter: mark interrupted runs: %w", err)
		}
		all = append(all, batch...)
		if len(batch) < 1000 { // OrphanedRuns' page
			return all, nil
		}
	}
}

// appliedBy is the Workspace's optional ability to list what the change
// sets a run applied changed (workspace.(*Workspace).AppliedBy).
type appliedBy interface {
	AppliedBy(run string, since time.Time) ([]string, error)
}

// interruptedEffects lists what an interrupted run is known to have
// applied — a command killed after its change set was applied but before
// its record was written — in the words of the record it would have had.
// A run whose effects cannot be listed gets a line saying where to look.
func (a *Arbiter) interruptedEffects(r store.ToolRun) string {
	ws, ok := a.o.Workspace.(appliedBy)
	if !ok {
		return ""
	}
	lines, err := ws.AppliedBy(r.ID, r.CreatedAt)
	if err != nil {
		lines = append(lines, "the change sets this run applied could not be listed ("+err.Error()+"); `homard checkpoint list` shows them")
	}
	if len(lines) == 0 {
		return ""
	}
	return capText(a.o.Redactor.Redact(strings.Join(lines, "\n")), maxAuditEffects)
}

// held denies the call when homard's records are damaged and the owner has
// not acknowledged it (package integrity sets the problem). It reports
// whether it did.
func (a *Arbiter) held(ctx context.Context, c *call) (bool, error) {
	problem, err := a.o.Store.IntegrityProblem(ctx)
	if err != nil {
		return false, fmt.Errorf("arbiter: %w", err)
	}
	if problem == "" {
		return false, nil
	}
	c.out.Decision, c.out.Rule, c.status = Denied, policy.RuleLimitIntegrity, store.RunDenied
	c.out.Reason = "homard refuses actions with side effects: its own records are damaged (" + problem + "). " +
		"Reading still works. Tell the owner to run `homard doctor` to see what is wrong, then `homard doctor --ack` to go on."
	return true, a.finish(ctx, c)
}

// codeChanged returns when the workspace a Plan that runs the workspace's
// code runs in last changed (the latest over its targets), or the zero
// time for any other Plan or without a Workspace.
func (a *Arbiter) codeChanged(p tool.Plan) (time.Time, error) {
	if a.o.Workspace == nil || !runsCode(p) {
		return time.Time{}, nil
	}
	var latest time.Time
	for _, target := range p.Targets() {
		t, err := a.o.Workspace.LastApplied(target)
		if err != nil {
			return time.Time{}, fmt.Errorf("arbiter: %w", err)
		}
		if t.After(latest) {
			latest = t
		}
	}
	return latest, nil
}

// runsCode reports whether a Plan runs the workspace's code: a command
// the catalog classes as running code (builds, tests, scripts, unknown
// programs).
func runsCode(p tool.Plan) bool { return p.Class() == policy.ClassRunsCode }
