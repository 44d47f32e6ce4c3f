package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Task run statuses. A slot is claimed before the model is called, then
// running, then ends once: succeeded, failed, skipped (it fell due while
// the previous run still ran), interrupted (homard stopped during it; it is
// never re-run) or refused (the seal or the expiry did not hold).
const (
	TaskRunClaimed     = "claimed"
	TaskRunRunning     = "running"
	TaskRunSucceeded   = "succeeded"
	TaskRunFailed      = "failed"
	TaskRunSkipped     = "skipped"
	TaskRunInterrupted = "interrupted"
	TaskRunRefused     = "refused"
)

// TaskRun is one slot of a task.
type TaskRun struct {
	ID        int64
	TaskID    string
	SlotKey   string // the slot's identity (package schedule), unique per task
	SlotAt    time.Time
	Status    string
	StartedAt time.Time // when the slot was claimed
	EndedAt   time.Time // zero while claimed or running
	Summary   string
	Usage     []byte // JSON, "{}" when none
	Tokens    int64
	Error     string
	// Refused lists the calls refused during the run, one per line:
	// "tool: reason (rule id)"; "" when none was.
	Refused string
	// Delivery is where the summary went: "" (nowhere yet), "web", or a
	// chat platform; for a platform, DeliveryState and DeliveryError are
	// its outbox row's (queued, sending, sent or failed, and why).
	Delivery      string
	DeliveryState string
	DeliveryError string
}

// TaskRunEnd is how a run ended, for FinishRun.
type TaskRunEnd struct {
	Status  string // succeeded, failed, skipped, interrupted or refused
	Summary string
	Usage   []byte // JSON; nil means "{}"
	Tokens  int64  // model tokens the run used, for the daily limit
	Error   string // the reason, for a run that did not succeed
	Refused string // the calls refused during the run, one per line
	EndedAt time.Time
}

const taskRunColumns = `r.id, r.task_id, r.slot_key, r.slot_at, r.status, r.started_at, r.ended_at, r.summary, r.usage, r.tokens, r.error,
	r.refused, r.delivery, coalesce(o.state, ''), coalesce(o.error, '')`

// taskRunFrom is the FROM clause taskRunColumns reads: a run and the
// outbox row that carries its summary, if any.
const taskRunFrom = ` FROM task_runs r LEFT JOIN chat_outbox o ON o.id = r.outbox_id `

func scanTaskRun(sc interface{ Scan(...any) error }) (TaskRun, error) {
	var r TaskRun
	var slot, started, ended sql.NullInt64
	var usage string
	if err := sc.Scan(&r.ID, &r.TaskID, &r.SlotKey, &slot, &r.Status, &started, &ended, &r.Summary, &usage, &r.Tokens, &r.Error,
		&r.Refused, &r.Delivery, &r.DeliveryState, &r.DeliveryError); err != nil {
		return TaskRun{}, err
	}
	r.SlotAt, r.StartedAt, r.EndedAt = fromNanos(slot), fromNanos(started), fromNanos(ended)
	r.Usage = []byte(usage)
	return r, nil
}

// ClaimSlot records that slot slotKey of the task runs now and returns the
// run's id. claimed is false, and nothing is written, when that slot of
// the task already has a row — whoever wrote it: another scheduler on the
// same database, this one before a restart. One INSERT … ON CONFLICT DO
// NOTHING, so two claims can never both succeed.
func (tx *Tx) ClaimSlot(taskID, slotKey string, slotAt, now time.Time) (id int64, claimed bool, err error) {
	if slotKey == "" || slotAt.IsZero() || now.IsZero() {
		return 0, false, fmt.Errorf("claim slot of task %s: a slot key, a slot time and the time now are required", taskID)
	}
	err = tx.queryRow(`INSERT INTO task_runs (task_id, slot_key, slot_at, status, started_at)
		VALUES (?, ?, ?, 'claimed', ?) ON CONFLICT (task_id, slot_key) DO NOTHING RETURNING id`,
		taskID, slotKey, slotAt.UnixNano(), now.UnixNano()).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("claim slot %s of task %s: %w", slotKey, taskID, err)
	}
	// The run's lock is held from before the row commits until its end
	// commits, so MarkInterrupted in another process never mistakes it
	// for a run left by a stop.
	lock := taskRunLock(id)
	if err := tx.s.runs.hold(lock); err != nil {
		return 0, false, fmt.Errorf("claim slot %s of task %s: hold its run lock: %w", slotKey, taskID, err)
	}
	tx.onRollback = append(tx.onRollback, func() { tx.s.releaseRun(lock) })
	return id, true, nil
}

// taskRunLock is the run lock (runlock.go) of task run id. Tool runs
// lock their seq, which stays far below 2^48; a task run's lock is above.
func taskRunLock(id int64) int64 { return 1<<48 + id }

// StartRun moves a claimed run to running, when the model is first called.
func (tx *Tx) StartRun(id int64) error {
	res, err := tx.exec(`UPDATE task_runs SET status = 'running' WHERE id = ? AND status = 'claimed'`, id)
	if err != nil {
		return fmt.Errorf("start task run %d: %w", id, err)
	}
	return tx.runChanged(res, id, "start task run")
}

// FinishRun ends a claimed or running run once; ending it again, or ending
// it as claimed or running, is an error.
func (tx *Tx) FinishRun(id int64, end TaskRunEnd) error {
	switch end.Status {
	case TaskRunSucceeded, TaskRunFailed, TaskRunSkipped, TaskRunInterrupted, TaskRunRefused:
	default:
		return fmt.Errorf("finish task run %d: %q is not a final status", id, end.Status)
	}
	usage := string(end.Usage)
	if usage == "" {
		usage = "{}"
	}
	res, err := tx.exec(`UPDATE task_runs SET status = ?, summary = ?, usage = ?, tokens = ?, error = ?, refused = ?, ended_at = ?
		WHERE id = ? AND status IN ('claimed', 'running')`,
		end.Status, end.Summary, usage, end.Tokens, end.Error, end.Refused, nanos(end.EndedAt), id)
	if err != nil {
		return fmt.Errorf("finish task run %d: %w", id, err)
	}
	if err := tx.runChanged(res, id, "finish task run"); err != nil {
		return err
	}
	tx.onCommit = append(tx.onCommit, func() { tx.s.releaseRun(taskRunLock(id)) })
	return nil
}

func (tx *Tx) runChanged(res sql.Result, id int64, op string) error {
	return tx.changed(res, `SELECT status FROM task_runs WHERE id = ?`, id, op, ErrTaskRunEnded, "it")
}

// MarkInterrupted ends, as interrupted at now, every claimed or running
// task run whose process is gone (its run lock is free: the process that
// claimed it stopped, however it stopped), and returns how many it ended.
// It is for the start of `homard serve`: a run left open by a stop is
// recorded and never re-run (its slot stays taken). A run of a live
// process — this Store's own, another scheduler's, a `homard task
// run-now` next to the daemon — is left alone.
func (tx *Tx) MarkInterrupted(now time.Time) (int64, error) {
	if tx.done {
		return 0, errTxDone
	}
	// No index: this runs once per start, and a claim is cheaper without.
	rows, err := tx.s.wconn.QueryContext(tx.ctx, `SELECT id FROM task_runs WHERE status IN ('claimed', 'running') ORDER BY id`)
	if err != nil {
		return 0, fmt.Errorf("mark interrupted task runs: %w", err)
	}
	open, err := collect(rows, func(sc interface{ Scan(...any) error }) (int64, error) {
		var id int64
		return id, sc.Scan(&id)
	}, "mark interrupted task runs")
	if err != nil || len(open) == 0 {
		return 0, err
	}
	free, done, err := tx.s.runs.probe()
	if err != nil {
		return 0, fmt.Errorf("mark interrupted task runs: %w", err)
	}
	defer done()
	var n int64
	for _, id := range open {
		gone, err := free(taskRunLock(id))
		if err != nil {
			return n, fmt.Errorf("mark interrupted task runs: probe run %d: %w", id, err)
		}
		if !gone {
			continue
		}
		_, err = tx.exec(`UPDATE task_runs SET status = 'interrupted', ended_at = ?,
			error = 'homard stopped during the run; the slot is not run again'
			WHERE id = ? AND status IN ('claimed', 'running')`, now.UnixNano(), id)
		if err != nil {
			return n, fmt.Errorf("mark task run %d interrupted: %w", id, err)
		}
		n++
	}
	return n, nil
}

// HasOpenRuns reports whether any task run is claimed or running: the
// read that spares a start the write transaction of MarkInterrupted when
// there is nothing to look at (nearly always).
func (s *Store) HasOpenRuns(ctx context.Context) (bool, error) {
	var open bool
	err := s.readRow(ctx, `SELECT EXISTS (SELECT 1 FROM task_runs WHERE status IN ('claimed', 'running'))`).Scan(&open)
	if err != nil {
		return false, fmt.Errorf("open task runs: %w", err)
	}
	return open, nil
}

// RecentRuns returns the task's last n runs (≤ 0 means 3), the newest
// first.
func (s *Store) RecentRuns(ctx context.Context, taskID string, n int) ([]TaskRun, error) {
	rows, err := s.readRows(ctx, `SELECT `+taskRunColumns+taskRunFrom+`
		WHERE r.task_id = ? ORDER BY r.started_at DESC, r.id DESC LIMIT ?`, taskID, clampLimit(n, 3, 1000))
	if err != nil {
		return nil, fmt.Errorf("recent runs of task %s: %w", taskID, err)
	}
	return collect(rows, scanTaskRun, "recent runs of task "+taskID)
}

// dayOf is the calendar day holding t, in t's location: [midnight, next
// midnight), 23 or 25 hours long on a day a clock changes.
func dayOf(t time.Time) (from, to time.Time) {
	y, m, d := t.Date()
	from = time.Date(y, m, d, 0, 0, 0, 0, t.Location())
	return from, time.Date(y, m, d+1, 0, 0, 0, 0, t.Location())
}

// RunsPerDay counts the task's runs claimed during the calendar day
// holding day, in day's location; skipped and refused slots do not count
// (they never called the model).
func (s *Store) RunsPerDay(ctx context.Context, taskID string, day time.Time) (int, error) {
	from, to := dayOf(day)
	var n int
	err := s.readRow(ctx, `SELECT count(*) FROM task_runs
		WHERE task_id = ? AND started_at >= ? AND started_at < ? AND status NOT IN ('skipped', 'refused')`,
		taskID, from.UnixNano(), to.UnixNano()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("runs per day of task %s: %w", taskID, err)
	}
	return n, nil
}

// TaskTokensToday sums the model tokens of owner's tasks' runs claimed
// during the calendar day holding now, in now's location: what owner's
// daily token limit is checked against.
func (s *Store) TaskTokensToday(ctx context.Context, owner string, now time.Time) (int64, error) {
	from, to := dayOf(now)
	var n int64
	err := s.readRow(ctx, `SELECT coalesce(sum(r.tokens), 0) FROM task_runs r JOIN tasks t ON t.id = r.task_id
		WHERE r.tokens > 0 AND r.started_at >= ? AND r.started_at < ? AND t.owner = ?`, // the partial index task_runs_tokens
		from.UnixNano(), to.UnixNano(), owner).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("task tokens today: %w", err)
	}
	return n, nil
}

// TaskRun returns one run or ErrNotFound.
func (s *Store) TaskRun(ctx context.Context, id int64) (TaskRun, error) {
	r, err := scanTaskRun(s.readRow(ctx, `SELECT `+taskRunColumns+taskRunFrom+` WHERE r.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return TaskRun{}, fmt.Errorf("get task run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return TaskRun{}, fmt.Errorf("get task run %d: %w", id, err)
	}
	return r, nil
}

// SlotRun returns the run of the task's slot slotKey, or ErrNotFound when
// the slot has none yet (one read of the (task_id, slot_key) key).
func (s *Store) SlotRun(ctx context.Context, taskID, slotKey string) (TaskRun, error) {
	r, err := scanTaskRun(s.readRow(ctx, `SELECT `+taskRunColumns+taskRunFrom+` WHERE r.task_id = ? AND r.slot_key = ?`, taskID, slotKey))
	if errors.Is(err, sql.ErrNoRows) {
		return TaskRun{}, fmt.Errorf("get run of slot %s of task %s: %w", slotKey, taskID, ErrNotFound)
	}
	if err != nil {
		return TaskRun{}, fmt.Errorf("get run of slot %s of task %s: %w", slotKey, taskID, err)
	}
	return r, nil
}

// SetRunDelivery records where run id's summary went: "web", or a chat
// platform with outboxID the chat_outbox row that carries it (0 for none).
func (tx *Tx) SetRunDelivery(id int64, target string, outboxID int64) error {
	var ob any
	if outboxID > 0 {
		ob = outboxID
	}
	res, err := tx.exec(`UPDATE task_runs SET delivery = ?, outbox_id = ? WHERE id = ?`, target, ob, id)
	if err != nil {
		return fmt.Errorf("set task run %d delivery: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("set task run %d delivery: %w", id, ErrNotFound)
	}
	return nil
}
