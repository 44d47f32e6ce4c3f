package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/store"
)

// approvalsCheck counts the approvals homard lapsed because the turn or
// run that asked them ended unanswered (approval.Service.Lapse), or the
// workspace changed after they were approved, and the orphans: pending
// cards a scheduled task's run asked, when no run of that task is going
// on, so no one can use them (a run lapses its cards when it ends; these
// were left by a homard that stopped first, or by a version before that).
// It changes nothing: doctor only reports.
func approvalsCheck(ctx context.Context, r *Runtime) Check {
	const name = "approvals"
	list, err := r.Approvals.List(ctx, "")
	if err != nil {
		return Check{Name: name, Detail: err.Error()}
	}
	var waiting, lapsed int
	var orphans []string
	running := map[string]bool{} // task id → a run of it is going on
	for _, a := range list {
		switch {
		case a.Lapsed:
			lapsed++
		case a.Status == approval.Pending:
			waiting++
			id, ok := taskOfSession(a.Session)
			if !ok {
				continue
			}
			run, seen := running[id]
			if !seen {
				runs, err := r.Store.RecentRuns(ctx, id, 1)
				if err != nil {
					return Check{Name: name, Detail: err.Error()}
				}
				run = len(runs) == 1 && (runs[0].Status == store.TaskRunRunning || runs[0].Status == store.TaskRunClaimed)
				running[id] = run
			}
			if !run {
				orphans = append(orphans, a.ID)
			}
		}
	}
	detail := fmt.Sprintf("%d waiting for an answer; %d lapsed (their turn or run ended before an answer, or the workspace changed after it)", waiting, lapsed)
	if len(orphans) == 0 {
		return Check{Name: name, OK: true, Detail: detail}
	}
	shown := orphans[:min(len(orphans), 5)]
	if len(orphans) > len(shown) {
		shown = append(shown, "…")
	}
	return Check{Name: name, Info: true, Detail: fmt.Sprintf("%s; %d orphaned: asked by a scheduled task's run that has ended, so no run can use them (%s): deny them with `homard approval deny ID`, or let them expire",
		detail, len(orphans), strings.Join(shown, ", "))}
}

// taskOfSession is the task whose run a session belongs to: "task-<id>",
// or a split task's worker's "task-<id>-split-…".
func taskOfSession(session string) (string, bool) {
	id, ok := strings.CutPrefix(session, approval.TaskSessionPrefix)
	id, _, _ = strings.Cut(id, "-split")
	return id, ok
}
