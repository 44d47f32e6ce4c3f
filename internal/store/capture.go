package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Batched memory capture (migration 0021): an owner turn is queued in the
// Write that stores it; a capture call claims a session's waiting turns,
// and either finishes them (the model answered: the rows go, its tokens
// are recorded) or releases them (it failed first: they wait again).

// CaptureBatch is a session's queued turns claimed by one capture call:
// turns First..Last, Turns of them (a turn queued while the call runs is
// not in it). Claim identifies the claim for Finish and Release.
type CaptureBatch struct {
	Session     string
	Owner       string // the session's owner
	First, Last int
	Turns       int
	Claim       int64
}

// CaptureTotals sums a session's capture calls.
type CaptureTotals struct {
	Calls int // capture calls the model answered
	Turns int // turns they covered
	Usage Usage
}

// claimable is the condition on a capture_queue row that no live capture
// holds: never claimed, or claimed before the stale time (its process
// died). The stale time is the second bind parameter after it.
const claimable = `(claimed_at IS NULL OR claimed_at < ?)`

// QueueCapture queues turn of session for memory capture. Call it in the
// Write that appends the turn, after AppendTurn.
func (tx *Tx) QueueCapture(session string, turn int) error {
	if _, err := tx.exec(`INSERT INTO capture_queue (session_id, turn) VALUES (?, ?)`, session, turn); err != nil {
		return fmt.Errorf("queue turn %d of %s for capture: %w", turn, session, err)
	}
	return nil
}

// CaptureWaiting counts session's queued turns that no live capture holds
// (a claim made before stale no longer holds).
func (s *Store) CaptureWaiting(ctx context.Context, session string, stale time.Time) (int, error) {
	var n int
	if err := s.readRow(ctx, `SELECT count(*) FROM capture_queue WHERE session_id = ? AND `+claimable,
		session, nanos(stale)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count turns waiting for capture in %s: %w", session, err)
	}
	return n, nil
}

// CaptureSessions lists the sessions with queued turns no live capture
// holds whose newest turn was stored before idle (all of them for a zero
// idle), oldest first.
func (s *Store) CaptureSessions(ctx context.Context, idle, stale time.Time) ([]string, error) {
	cutoff := int64(1<<63 - 1)
	if !idle.IsZero() {
		cutoff = idle.UnixNano()
	}
	rows, err := s.readRows(ctx, `SELECT session_id, last FROM (
			SELECT q.session_id, (SELECT max(t.created_at) FROM turns t WHERE t.session_id = q.session_id) AS last
			FROM capture_queue q WHERE `+claimable+` GROUP BY q.session_id) w
		WHERE last < ? ORDER BY last, session_id`,
		nanos(stale), cutoff)
	if err != nil {
		return nil, fmt.Errorf("list sessions waiting for capture: %w", err)
	}
	out, err := collect(rows, func(sc interface{ Scan(...any) error }) (string, error) {
		var id string
		var last sql.NullInt64
		return id, sc.Scan(&id, &last)
	}, "list sessions waiting for capture")
	return out, err
}

// ClaimCapture claims session's queued turns that no live capture holds,
// at now. ok is false when there are none.
func (tx *Tx) ClaimCapture(session string, now, stale time.Time) (b CaptureBatch, ok bool, err error) {
	b = CaptureBatch{Session: session, Claim: now.UnixNano()}
	var first, last sql.NullInt64
	if err := tx.queryRow(`SELECT min(turn), max(turn), count(*) FROM capture_queue WHERE session_id = ? AND `+claimable,
		session, nanos(stale)).Scan(&first, &last, &b.Turns); err != nil {
		return CaptureBatch{}, false, fmt.Errorf("claim turns of %s for capture: %w", session, err)
	}
	if b.Turns == 0 {
		return CaptureBatch{}, false, nil
	}
	b.First, b.Last = int(first.Int64), int(last.Int64)
	if err := tx.queryRow(`SELECT owner FROM sessions WHERE id = ?`, session).Scan(&b.Owner); err != nil {
		return CaptureBatch{}, false, fmt.Errorf("claim turns of %s for capture: owner: %w", session, err)
	}
	if _, err := tx.exec(`UPDATE capture_queue SET claimed_at = ? WHERE session_id = ? AND turn BETWEEN ? AND ? AND `+claimable,
		b.Claim, session, b.First, b.Last, nanos(stale)); err != nil {
		return CaptureBatch{}, false, fmt.Errorf("claim turns of %s for capture: %w", session, err)
	}
	return b, true, nil
}

// FinishCapture ends claim b after the model answered: its turns leave
// the queue and usage is recorded for the session.
func (tx *Tx) FinishCapture(b CaptureBatch, usage Usage, now time.Time) error {
	if usage.Input < 0 || usage.Output < 0 || usage.Cached < 0 {
		return fmt.Errorf("finish capture of %s: negative usage %+v", b.Session, usage)
	}
	if _, err := tx.exec(`DELETE FROM capture_queue WHERE session_id = ? AND turn BETWEEN ? AND ? AND claimed_at = ?`,
		b.Session, b.First, b.Last, b.Claim); err != nil {
		return fmt.Errorf("finish capture of %s: %w", b.Session, err)
	}
	if _, err := tx.exec(`INSERT INTO capture_usage (session_id, first_turn, last_turn, turns, input_tokens, output_tokens, cached_tokens, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, b.Session, b.First, b.Last, b.Turns, usage.Input, usage.Output, usage.Cached, nanos(now)); err != nil {
		return fmt.Errorf("finish capture of %s: record usage: %w", b.Session, err)
	}
	return nil
}

// ReleaseCapture gives claim b's turns back to the queue: the call did not
// get the model's answer. A failed call (failed true) counts an attempt;
// a turn that has failed maxAttempts times leaves the queue. A call cut by
// a stop (failed false) counts none.
func (tx *Tx) ReleaseCapture(b CaptureBatch, failed bool, maxAttempts int) error {
	add := 0
	if failed {
		add = 1
	}
	if _, err := tx.exec(`UPDATE capture_queue SET claimed_at = NULL, attempts = attempts + ?
		WHERE session_id = ? AND turn BETWEEN ? AND ? AND claimed_at = ?`, add, b.Session, b.First, b.Last, b.Claim); err != nil {
		return fmt.Errorf("release capture of %s: %w", b.Session, err)
	}
	if _, err := tx.exec(`DELETE FROM capture_queue WHERE session_id = ? AND turn BETWEEN ? AND ? AND claimed_at IS NULL AND attempts >= ?`,
		b.Session, b.First, b.Last, maxAttempts); err != nil {
		return fmt.Errorf("release capture of %s: %w", b.Session, err)
	}
	return nil
}

// CaptureUsage sums session's capture calls.
func (s *Store) CaptureUsage(ctx context.Context, session string) (CaptureTotals, error) {
	var t CaptureTotals
	if err := s.readRow(ctx, `SELECT count(*), coalesce(sum(turns), 0), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),
		coalesce(sum(cached_tokens), 0) FROM capture_usage WHERE session_id = ?`, session).
		Scan(&t.Calls, &t.Turns, &t.Usage.Input, &t.Usage.Output, &t.Usage.Cached); err != nil {
		return CaptureTotals{}, fmt.Errorf("capture usage of %s: %w", session, err)
	}
	return t, nil
}

// CaptureClaimed lists the turns claim b holds, in order.
func (s *Store) CaptureClaimed(ctx context.Context, b CaptureBatch) ([]int, error) {
	rows, err := s.readRows(ctx, `SELECT turn FROM capture_queue WHERE session_id = ? AND turn BETWEEN ? AND ? AND claimed_at = ? ORDER BY turn`,
		b.Session, b.First, b.Last, b.Claim)
	if err != nil {
		return nil, fmt.Errorf("list turns claimed for capture in %s: %w", b.Session, err)
	}
	return collect(rows, func(sc interface{ Scan(...any) error }) (int, error) {
		var t int
		return t, sc.Scan(&t)
	}, "list turns claimed for capture in "+b.Session)
}
