package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Tool run statuses. A run only moves forward:
// requested → approved → running → succeeded | failed | denied | cancelled
// (steps may be skipped; a final status never changes).
const (
	RunRequested = "requested"
	RunApproved  = "approved"
	RunRunning   = "running"
	RunSucceeded = "succeeded"
	RunFailed    = "failed"
	RunDenied    = "denied"
	RunCancelled = "cancelled"
)

// runStage orders the statuses; the final ones share the last stage.
var runStage = map[string]int{
	RunRequested: 0,
	RunApproved:  1,
	RunRunning:   2,
	RunSucceeded: 3,
	RunFailed:    3,
	RunDenied:    3,
	RunCancelled: 3,
}

const finalStage = 3

// ToolRun is the durable record of one proposed tool call.
type ToolRun struct {
	ID        string
	SessionID string
	Owner     string
	Tool      string
	PlanHash  string
	Plan      []byte // canonical JSON, redacted by the caller
	Display   string
	Status    string
	Decision  string // the arbiter's outcome: ran, pending, denied or error
	Rule      string
	Reason    string
	// ApprovalID is empty when no approval was involved.
	ApprovalID string
	Result     string
	IsError    bool
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// InsertToolRun records a new run and returns its id, which the store
// assigns (r.ID must be empty): "run_" and a number that only grows. The
// session must exist (EnsureSession) and belong to r.Owner.
func (tx *Tx) InsertToolRun(r ToolRun) (string, error) {
	if r.ID != "" {
		return "", fmt.Errorf("insert tool run: the store assigns run ids; got %q", r.ID)
	}
	if _, ok := runStage[r.Status]; !ok {
		return "", fmt.Errorf("insert tool run: %w: unknown status %q", ErrRunStatus, r.Status)
	}
	updated := r.UpdatedAt
	if updated.IsZero() {
		updated = r.CreatedAt
	}
	// One statement on the hot path: the row is inserted only if the
	// session exists and is r.Owner's; why it was not is asked only then.
	var seq int64
	err := tx.queryRow(`INSERT INTO tool_runs (session_id, owner, tool, plan_hash, plan, display, status,
		decision, rule, reason, approval_id, result, is_error, created_at, updated_at)
		SELECT CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT),
			CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS BIGINT), CAST(? AS BIGINT)
		WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?1 AND owner = ?2)
		RETURNING seq`,
		r.SessionID, r.Owner, r.Tool, r.PlanHash, string(r.Plan), r.Display, r.Status,
		r.Decision, r.Rule, r.Reason, nullString(r.ApprovalID), r.Result, boolInt(r.IsError),
		nanos(r.CreatedAt), nanos(updated)).Scan(&seq)
	switch {
	case err == nil:
		if r.Status == RunRunning {
			// Held by this process until it finishes (runlock.go).
			if err := tx.holdRun(seq); err != nil {
				return "", err
			}
		}
		return runIDPrefix + strconv.FormatInt(seq, 10), nil
	case !errors.Is(err, sql.ErrNoRows):
		return "", fmt.Errorf("insert tool run: %w", err)
	}
	var owner string
	err = tx.queryRow(`SELECT owner FROM sessions WHERE id = ?`, r.SessionID).Scan(&owner)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", fmt.Errorf("insert tool run: session %s: %w", r.SessionID, ErrNotFound)
	case err != nil:
		return "", fmt.Errorf("insert tool run: %w", err)
	}
	return "", fmt.Errorf("insert tool run: %w", ErrSessionOwner)
}

const runIDPrefix = "run_"

// runSeq returns the seq a run id since migration 0008 names, or -1. An id
// from before (run_ and 16 random hex digits) may read as a number too, but
// seq never gets near 16 digits, and runs with a stored id are found by it.
func runSeq(id string) int64 {
	digits, ok := strings.CutPrefix(id, runIDPrefix)
	if !ok || digits == "" || digits[0] == '0' || len(digits) > 15 {
		return -1
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// runWhere selects a run by id: a numbered run by seq (its rowid), an
// older run through its stored id. Its two parameters come from runKey.
const runWhere = `((id IS NULL AND seq = ?1) OR id = ?2)`

// runKey is the parameters of runWhere for id.
func runKey(id string) []any { return []any{runSeq(id), id} }

// UpdateToolRun moves a run to status and records its result. It returns
// ErrNotFound for an unknown id, ErrRunFinished if the run already has a
// final status, and ErrRunStatus for a move backwards.
func (tx *Tx) UpdateToolRun(id, status, result string, isError bool, now time.Time) error {
	next, ok := runStage[status]
	if !ok {
		return fmt.Errorf("update tool run %s: %w: unknown status %q", id, ErrRunStatus, status)
	}
	var seq int64
	var cur string
	err := tx.queryRow(`SELECT seq, status FROM tool_runs WHERE `+runWhere, runKey(id)...).Scan(&seq, &cur)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("update tool run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("update tool run %s: %w", id, err)
	}
	if runStage[cur] == finalStage {
		return fmt.Errorf("update tool run %s (%s): %w", id, cur, ErrRunFinished)
	}
	if next <= runStage[cur] {
		return fmt.Errorf("update tool run %s: %w: %s → %s", id, ErrRunStatus, cur, status)
	}
	// The status condition repeats the check above in SQL so the update
	// cannot apply to a row that changed in between.
	res, err := tx.exec(`UPDATE tool_runs SET status = ?, result = ?, is_error = ?, updated_at = ?
		WHERE seq = ? AND status = ?`, status, result, isError, nanos(now), seq, cur)
	if err != nil {
		return fmt.Errorf("update tool run %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("update tool run %s: %w: the run changed concurrently", id, ErrRunStatus)
	}
	switch {
	case status == RunRunning:
		return tx.holdRun(seq)
	case cur == RunRunning && next == finalStage:
		tx.onCommit = append(tx.onCommit, func() { tx.s.releaseRun(seq) })
	}
	return nil
}

const toolRunColumns = `coalesce(id, '` + runIDPrefix + `' || seq), session_id, owner, tool, plan_hash, plan, display, status, decision, rule,
	reason, coalesce(approval_id, ''), result, is_error, created_at, updated_at`

func scanToolRun(sc interface{ Scan(...any) error }) (ToolRun, error) {
	var r ToolRun
	var plan string
	var created, updated sql.NullInt64
	err := sc.Scan(&r.ID, &r.SessionID, &r.Owner, &r.Tool, &r.PlanHash, &plan, &r.Display, &r.Status,
		&r.Decision, &r.Rule, &r.Reason, &r.ApprovalID, &r.Result, &r.IsError, &created, &updated)
	if err != nil {
		return ToolRun{}, err
	}
	r.Plan = []byte(plan)
	r.CreatedAt, r.UpdatedAt = fromNanos(created), fromNanos(updated)
	return r, nil
}

// GetToolRun returns one run or ErrNotFound.
func (s *Store) GetToolRun(ctx context.Context, id string) (ToolRun, error) {
	r, err := scanToolRun(s.readRow(ctx, `SELECT `+toolRunColumns+` FROM tool_runs WHERE `+runWhere, runKey(id)...))
	return one(r, err, "get tool run", id)
}

// ListToolRuns returns the newest runs first (insertion order: seq, so
// no index on created_at has to be kept up to date on every insert). A limit ≤ 0 means 50; at
// most 1000 rows are returned.
func (s *Store) ListToolRuns(ctx context.Context, limit int) ([]ToolRun, error) {
	return readAll(ctx, s, "list tool runs", scanToolRun, `SELECT `+toolRunColumns+` FROM tool_runs
		ORDER BY seq DESC LIMIT ?`, clampLimit(limit, 50, 1000))
}

// ToolRunsSince returns the tool runs proposed at or after since, oldest
// first, at most limit (≤ 0 means 10,000): a policy replay's history.
func (s *Store) ToolRunsSince(ctx context.Context, since time.Time, limit int) ([]ToolRun, error) {
	return readAll(ctx, s, "list tool runs since", scanToolRun, `SELECT `+toolRunColumns+` FROM tool_runs
		WHERE created_at >= ? ORDER BY seq LIMIT ?`, nanos(since), clampLimit(limit, 10000, 10000))
}

// rowErr is the error of op's one-row read of key: "op key: " and
// ErrNotFound when there was no row, or err; nil when err is nil.
func rowErr(err error, op, key string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		err = ErrNotFound
	}
	return fmt.Errorf("%s %s: %w", op, key, err)
}

// one returns v, scanned from op's one-row read of key, or rowErr's error.
func one[T any](v T, err error, op, key string) (T, error) {
	if err = rowErr(err, op, key); err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// readAll runs query on the reader and scans every row it returns with
// scan; op names the read in an error.
func readAll[T any](ctx context.Context, s *Store, op string, scan func(interface{ Scan(...any) error }) (T, error), query string, args ...any) ([]T, error) {
	rows, err := s.readRows(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return collect(rows, scan, op)
}

// collect scans every row with scan and closes rows.
func collect[T any](rows *sql.Rows, scan func(interface{ Scan(...any) error }) (T, error), op string) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
