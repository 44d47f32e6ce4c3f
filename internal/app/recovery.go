package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/integrity"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/workspace"
)

// StartReport is what Open's crash recovery and record check did. Each
// step is not fatal on its own: its error is kept for doctor.
type StartReport struct {
	// Interrupted are the tool runs a process that died left running,
	// marked failed and audited at this start.
	Interrupted  []store.ToolRun
	InterruptErr error
	// Swept is what the sweep of stray temp files did.
	Swept    workspace.Sweep
	SweepErr error
	// Integrity is the start's check of the database and the audit
	// chain (not run by doctor's own Open: doctor runs the full check).
	Integrity    integrity.Report
	IntegrityErr error
}

// ErrNothingToAck: `homard doctor --ack` found nothing held.
var ErrNothingToAck = integrity.ErrNothingToAck

// Acknowledge records that the owner has looked at the problem for which
// homard refuses side effects and accepts the records as they are now;
// side effects are allowed again. It returns the problem acknowledged.
// storeURL is Options.StoreURL: the store the problem is in when it is
// not store.url's.
func Acknowledge(ctx context.Context, paths config.Paths, storeURL string) (string, error) {
	r, err := Open(ctx, paths, Options{inspect: true, StoreURL: storeURL})
	if err != nil {
		return "", err
	}
	defer r.Close()
	st, err := integrity.Acknowledge(ctx, r.Store, r.Config.Owner, r.now())
	if err != nil {
		return "", err
	}
	return st.AckedProblem, nil
}

// checkRecords runs the start-up check of the records again in a
// long-running process (serve): the records appended since, and the full
// check once a day. A problem it finds holds side effects at once.
func (r *Runtime) checkRecords(ctx context.Context, log *slog.Logger) {
	rep, err := integrity.Check(ctx, r.Store, integrity.Options{Now: r.now})
	switch {
	case err != nil && ctx.Err() == nil:
		log.Warn("checking homard's records failed", "err", err)
	case rep.State.Problem != "":
		log.Error("homard's records are damaged; side effects are refused until the owner runs `homard doctor --ack`", "problem", rep.State.Problem)
	}
}

// recoveryChecks are doctor's lines about crash recovery and the records'
// integrity. It runs the full integrity check, which may hold side effects
// if it finds a problem.
func recoveryChecks(ctx context.Context, r *Runtime) []Check {
	var out []Check
	rep, err := integrity.Check(ctx, r.Store, integrity.Options{Now: r.now, Full: true})
	switch st := rep.State; {
	case err != nil:
		out = append(out, Check{Name: "integrity", Detail: err.Error()})
	case st.Problem != "":
		out = append(out, Check{Name: "integrity", Detail: fmt.Sprintf(
			"side effects are refused since %s: %s. Look into it (keep a copy of %s first); then run `homard doctor --ack` to accept the records as they are and allow side effects again",
			st.ProblemAt.Local().Format(time.DateTime), st.Problem, r.Paths.DataDir)})
	default:
		detail := fmt.Sprintf("database and audit chain sound (%d records verified", rep.Verified)
		if st.BaseSeq > 0 {
			detail += fmt.Sprintf(" after record %d", st.BaseSeq)
		}
		out = append(out, Check{Name: "integrity", OK: true, Detail: detail + ")"})
		if st.AckedProblem != "" {
			out = append(out, Check{Name: "integrity", Info: true, Detail: fmt.Sprintf("acknowledged by %s on %s: %s",
				st.AckedBy, st.AckedAt.Local().Format(time.DateTime), st.AckedProblem)})
		}
	}

	s := r.Start
	switch recent, err := r.Store.InterruptedRuns(ctx, r.now().Add(-7*24*time.Hour), 5); {
	case s.InterruptErr != nil:
		out = append(out, Check{Name: "runs", Detail: "marking interrupted runs: " + s.InterruptErr.Error()})
	case err != nil:
		out = append(out, Check{Name: "runs", Detail: err.Error()})
	case len(recent) > 0:
		var list []string
		for _, run := range recent {
			list = append(list, fmt.Sprintf("%s %s at %s", run.ID, run.Tool, run.UpdatedAt.Local().Format(time.DateTime)))
		}
		detail := "tool runs interrupted in the last 7 days, newest first: " + strings.Join(list, "; ")
		if n := len(s.Interrupted); n > 0 {
			detail += fmt.Sprintf(" (%d marked at this start)", n)
		}
		out = append(out, Check{Name: "runs", Info: true, Detail: detail +
			"; homard stopped while they ran, so check what they name (`homard audit`, `homard checkpoint list`)"})
	default:
		out = append(out, Check{Name: "runs", OK: true, Detail: "no tool run was interrupted in the last 7 days"})
	}

	out = append(out, changesCheck(r.Recovered, r.RecoverErr))

	sw := s.Swept
	switch {
	case s.SweepErr != nil:
		out = append(out, Check{Name: "temp files", Detail: "removing stray temp files: " + s.SweepErr.Error()})
	case len(sw.Removed) > 0 || sw.Left > 0:
		detail := fmt.Sprintf("removed %d stray temp file(s) a stopped write left", len(sw.Removed))
		if len(sw.Removed) > 0 {
			detail += ": " + strings.Join(sw.Removed[:min(5, len(sw.Removed))], ", ")
		}
		if sw.Left > 0 {
			detail += fmt.Sprintf("; %d more are recent or in use, a later start removes them if they stay", sw.Left)
		}
		out = append(out, Check{Name: "temp files", Info: true, Detail: detail})
	default:
		out = append(out, Check{Name: "temp files", OK: true, Detail: "no stray temp files in the roots"})
	}
	if sw.Truncated {
		out = append(out, Check{Name: "temp files", Info: true, Detail: "a root is too large for the start-up sweep; only its first 20,000 entries were looked at"})
	}
	return out
}

// changesCheck is doctor's line about the change sets this start found
// half-applied (workspace.RecoverChanges).
func changesCheck(rec workspace.Recovery, err error) Check {
	switch {
	case err != nil:
		return Check{Name: "changes", Detail: "recovering half-applied change sets: " + err.Error() + "; run doctor again, and look at `homard checkpoint list`"}
	case len(rec.Conflicts) > 0:
		return Check{Name: "changes", Info: true, Detail: fmt.Sprintf(
			"a stopped command's change set could not be fully rolled back (%s); its checkpoint is kept: look at `homard checkpoint list` and roll it back or keep it",
			strings.Join(rec.Conflicts[:min(5, len(rec.Conflicts))], "; "))}
	case len(rec.RolledBack) > 0 || rec.Removed > 0:
		var parts []string
		if n := len(rec.RolledBack); n > 0 {
			parts = append(parts, fmt.Sprintf("rolled back %d change set(s) a stopped command left half-applied: %s",
				n, strings.Join(rec.RolledBack[:min(5, n)], ", ")))
		}
		if rec.Removed > 0 {
			parts = append(parts, fmt.Sprintf("removed %d change set(s) a stopped command prepared but never started", rec.Removed))
		}
		return Check{Name: "changes", Info: true, Detail: strings.Join(parts, "; ")}
	}
	return Check{Name: "changes", OK: true, Detail: "no change set was left half-applied"}
}

// auditCheck verifies the chain from the base the owner last accepted
// (genesis if never), so an acknowledged break is not reported again.
func auditCheck(ctx context.Context, r *Runtime) Check {
	st, err := r.Store.IntegrityState(ctx)
	if err != nil {
		return Check{Name: "audit", Detail: err.Error()}
	}
	_, n, err := audit.VerifyFrom(ctx, r.Store, audit.Anchor{Seq: st.BaseSeq, Hash: st.BaseHash, Accepted: true})
	if err != nil {
		return Check{Name: "audit", Detail: err.Error()}
	}
	if st.BaseSeq > 0 {
		return Check{Name: "audit", OK: true, Detail: fmt.Sprintf("chain intact after record %d (accepted by the owner), %d records since", st.BaseSeq, n)}
	}
	return Check{Name: "audit", OK: true, Detail: fmt.Sprintf("chain intact, %d records", n)}
}
