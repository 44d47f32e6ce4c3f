package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Task statuses. pending waits for the owner's approval; only active
// tasks are due; removed is final (the row stays for its runs).
const (
	TaskPending = "pending"
	TaskActive  = "active"
	TaskPaused  = "paused"
	TaskRemoved = "removed"
)

// Where a task came from (Task.Origin): `homard task add`, the web UI's
// tasks page, or a conversation (a proposal approved on its card, a
// reminder snoozed from a chat).
const (
	TaskFromCLI  = "cli"
	TaskFromWeb  = "web"
	TaskFromChat = "chat"
)

// Task is one scheduled task as stored. Body is the canonical JSON of
// what the owner approves and MAC its seal (package task makes and checks
// both); the other columns are copies for listing and scheduling, never
// trusted in place of the body.
type Task struct {
	ID         string
	Owner      string
	Name       string
	Body       []byte // canonical JSON
	MAC        string // hex HMAC-SHA-256 of Body; empty until approved
	Status     string
	ApprovedAt time.Time // zero until approved
	ExpiresAt  time.Time // zero until approved
	NextRunAt  time.Time // zero: no slot left
	CreatedAt  time.Time
	WarnedAt   time.Time // when the owner was told the approval ends soon; zero: not yet
	// Origin is where the task came from: TaskFromCLI, TaskFromWeb or
	// TaskFromChat. Not sealed: bookkeeping, like Name.
	Origin string
}

const taskColumns = `id, owner, name, body, mac, status, approved_at, expires_at, next_run_at, created_at, warned_at, origin`

func scanTask(sc interface{ Scan(...any) error }) (Task, error) {
	var t Task
	var body string
	var approved, expires, next, created, warned sql.NullInt64
	if err := sc.Scan(&t.ID, &t.Owner, &t.Name, &body, &t.MAC, &t.Status, &approved, &expires, &next, &created, &warned, &t.Origin); err != nil {
		return Task{}, err
	}
	t.Body = []byte(body)
	t.ApprovedAt, t.ExpiresAt, t.NextRunAt, t.CreatedAt = fromNanos(approved), fromNanos(expires), fromNanos(next), fromNanos(created)
	t.WarnedAt = fromNanos(warned)
	return t, nil
}

// InsertTask stores a new task, pending approval: its MAC and approval
// times are ignored (ApproveTask sets them). Its ID must be new. An empty
// Origin is TaskFromCLI (the column's default); any other value but the
// three is refused.
func (tx *Tx) InsertTask(t Task) error {
	origin := t.Origin
	switch origin {
	case "":
		origin = TaskFromCLI
	case TaskFromCLI, TaskFromWeb, TaskFromChat:
	default:
		return fmt.Errorf("insert task %s: origin %q: want cli, web or chat", t.ID, t.Origin)
	}
	_, err := tx.exec(`INSERT INTO tasks (id, owner, name, body, status, next_run_at, created_at, origin)
		VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)`,
		t.ID, t.Owner, t.Name, string(t.Body), nanos(t.NextRunAt), nanos(t.CreatedAt), origin)
	if err != nil {
		return fmt.Errorf("insert task %s: %w", t.ID, err)
	}
	return nil
}

// ApproveTask records the owner's approval of body (which replaces the
// stored one: renewing gives the body a new expiry) with its MAC, until
// expires; the expiry warning of the approval before is forgotten. A pending or active task becomes active; a paused one stays
// paused. A removed task cannot be approved (ErrTaskStatus); an unknown
// id is ErrNotFound.
func (tx *Tx) ApproveTask(id string, body []byte, mac string, approvedAt, expires time.Time) error {
	if mac == "" || approvedAt.IsZero() || expires.IsZero() {
		return fmt.Errorf("approve task %s: a MAC, an approval time and an expiry are required", id)
	}
	res, err := tx.exec(`UPDATE tasks SET body = ?, mac = ?, approved_at = ?, expires_at = ?, warned_at = NULL,
		status = CASE status WHEN 'paused' THEN 'paused' ELSE 'active' END
		WHERE id = ? AND status != 'removed'`,
		string(body), mac, nanos(approvedAt), nanos(expires), id)
	if err != nil {
		return fmt.Errorf("approve task %s: %w", id, err)
	}
	return tx.taskChanged(res, id, "approve task")
}

// SetTaskStatus moves a task to status. Removed is final; active and
// paused need an approval (the schema's CHECK refuses them otherwise).
func (tx *Tx) SetTaskStatus(id, status string) error {
	switch status {
	case TaskPending, TaskActive, TaskPaused, TaskRemoved:
	default:
		return fmt.Errorf("set task %s status: %w: unknown status %q", id, ErrTaskStatus, status)
	}
	res, err := tx.exec(`UPDATE tasks SET status = ? WHERE id = ? AND status != 'removed'`, status, id)
	if err != nil {
		return fmt.Errorf("set task %s status %s: %w: %v", id, status, ErrTaskStatus, err)
	}
	return tx.taskChanged(res, id, "set task status")
}

// SetNextRun records when the task's next slot is due; the zero time means
// it has none left (an --at task that ran).
func (tx *Tx) SetNextRun(id string, at time.Time) error {
	res, err := tx.exec(`UPDATE tasks SET next_run_at = ? WHERE id = ?`, nanos(at), id)
	if err != nil {
		return fmt.Errorf("set task %s next run: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("set task %s next run: %w", id, ErrNotFound)
	}
	return nil
}

// taskChanged turns an UPDATE guarded by status != 'removed' that changed
// nothing into ErrNotFound or ErrTaskStatus.
func (tx *Tx) taskChanged(res sql.Result, id, op string) error {
	return tx.changed(res, `SELECT status FROM tasks WHERE id = ?`, id, op, ErrTaskStatus, "the task")
}

// changed explains a guarded UPDATE of row id that changed nothing, with
// statusQuery reading the row's status: ErrNotFound when the row is gone,
// else refused and what the status is ("op id: refused: subject is
// status"). An UPDATE that changed a row gives nil.
func (tx *Tx) changed(res sql.Result, statusQuery string, id any, op string, refused error, subject string) error {
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		return nil
	}
	var status string
	err := tx.queryRow(statusQuery, id).Scan(&status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%s %v: %w", op, id, ErrNotFound)
	case err != nil:
		return fmt.Errorf("%s %v: %w", op, id, err)
	}
	return fmt.Errorf("%s %v: %w: %s is %s", op, id, refused, subject, status)
}

// Task returns one task (removed ones included) or ErrNotFound.
func (s *Store) Task(ctx context.Context, id string) (Task, error) {
	t, err := scanTask(s.readRow(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = ?`, id))
	return one(t, err, "get task", id)
}

// Tasks returns owner's tasks that are not removed, oldest first; an
// empty owner means every owner's.
func (s *Store) Tasks(ctx context.Context, owner string) ([]Task, error) {
	return readAll(ctx, s, "list tasks", scanTask, `SELECT `+taskColumns+` FROM tasks
		WHERE status != 'removed' AND (?1 = '' OR owner = ?1) ORDER BY created_at, id`, owner)
}

// DueTasks returns owner's active tasks whose next run is at or before
// now, the earliest first (ties by id), at most limit (≤ 0 means 100). It
// walks the partial index tasks_due. Another owner's tasks (several
// owners on one shared store) are their own scheduler's: run here they
// would use this owner's home, config and key.
func (s *Store) DueTasks(ctx context.Context, owner string, now time.Time, limit int) ([]Task, error) {
	return readAll(ctx, s, "due tasks", scanTask, `SELECT `+taskColumns+` FROM tasks
		WHERE status = 'active' AND next_run_at <= ? AND owner = ? ORDER BY next_run_at, id LIMIT ?`,
		now.UnixNano(), owner, clampLimit(limit, 100, 1000))
}

// NextRunAt is when owner's earliest active task is due, and false when
// none has a slot left: what owner's scheduler arms its timer for.
func (s *Store) NextRunAt(ctx context.Context, owner string) (time.Time, bool, error) {
	var next sql.NullInt64
	err := s.readRow(ctx, `SELECT min(next_run_at) FROM tasks WHERE status = 'active' AND next_run_at IS NOT NULL AND owner = ?`, owner).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next run: %w", err)
	}
	return fromNanos(next), next.Valid, nil
}

// UpdatePendingTask replaces the body of a task that waits for approval
// (an edit before approving). A task already approved is ErrTaskStatus:
// changing it means a new task, or an approval of the new body.
func (tx *Tx) UpdatePendingTask(id string, body []byte, next time.Time) error {
	res, err := tx.exec(`UPDATE tasks SET body = ?, next_run_at = ? WHERE id = ? AND status = 'pending'`, string(body), nanos(next), id)
	if err != nil {
		return fmt.Errorf("update task %s: %w", id, err)
	}
	return tx.taskChanged(res, id, "update task")
}

// TasksExpiring returns owner's active and paused tasks whose approval
// ends at or before before and whose owner was not yet warned of it.
func (s *Store) TasksExpiring(ctx context.Context, owner string, before time.Time) ([]Task, error) {
	return readAll(ctx, s, "tasks expiring", scanTask, `SELECT `+taskColumns+` FROM tasks
		WHERE status IN ('active', 'paused') AND warned_at IS NULL AND expires_at <= ? AND owner = ? ORDER BY expires_at, id`, before.UnixNano(), owner)
}

// MarkTaskWarned records that the owner was told, at at, that the task's
// approval ends soon. first is false when it was already recorded (by
// another scheduler): then the caller sends nothing.
func (tx *Tx) MarkTaskWarned(id string, at time.Time) (first bool, err error) {
	res, err := tx.exec(`UPDATE tasks SET warned_at = ? WHERE id = ? AND warned_at IS NULL`, at.UnixNano(), id)
	if err != nil {
		return false, fmt.Errorf("mark task %s warned: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
