package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Summary is the summary of a session's folded turns: the turns up to and
// including ThroughTurn. Text is stored as given: callers redact it first.
type Summary struct {
	SessionID   string
	Text        string
	ThroughTurn int
	UpdatedAt   time.Time
}

// SetSummary records the summary of session's turns up to throughTurn,
// replacing the previous one. The turn must exist, and a summary never
// moves back to an earlier turn. Call it in the Write that appends the
// turn which made the summary, after AppendTurn.
func (tx *Tx) SetSummary(session, text string, throughTurn int, now time.Time) error {
	if throughTurn < 1 {
		return fmt.Errorf("set summary of %s: through turn %d: want at least 1", session, throughTurn)
	}
	var prev int
	err := tx.queryRow(`SELECT through_turn FROM session_summaries WHERE session_id = ?`, session).Scan(&prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("set summary of %s: %w", session, err)
	}
	if throughTurn < prev {
		return fmt.Errorf("set summary of %s: through turn %d is before the stored %d", session, throughTurn, prev)
	}
	_, err = tx.exec(`INSERT INTO session_summaries (session_id, summary, through_turn, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (session_id) DO UPDATE SET summary = excluded.summary, through_turn = excluded.through_turn,
			updated_at = excluded.updated_at`, session, text, throughTurn, nanos(now))
	if err != nil {
		return fmt.Errorf("set summary of %s through turn %d: %w", session, throughTurn, err)
	}
	return nil
}

// Summary returns the summary of session, or ErrNotFound when none was
// made. Like Messages, it does not check who owns the session.
func (s *Store) Summary(ctx context.Context, session string) (Summary, error) {
	out := Summary{SessionID: session}
	var updated sql.NullInt64
	err := s.reader.QueryRowContext(ctx, `SELECT summary, through_turn, updated_at FROM session_summaries WHERE session_id = ?`,
		session).Scan(&out.Text, &out.ThroughTurn, &updated)
	if err = rowErr(err, "get summary of", session); err != nil {
		return Summary{}, err
	}
	out.UpdatedAt = fromNanos(updated)
	return out, nil
}

// MessagesAfter returns the messages of session's turns after afterTurn,
// in conversation order: the part of the conversation a summary through
// afterTurn does not cover. MessagesAfter(ctx, s, 0) is Messages(ctx, s).
func (s *Store) MessagesAfter(ctx context.Context, session string, afterTurn int) ([]MessageRow, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT session_id, turn, seq, role, content, tool_calls, tool_call_id, status, created_at
		FROM messages WHERE session_id = ? AND turn > ? ORDER BY turn, seq`, session, afterTurn)
	if err != nil {
		return nil, fmt.Errorf("list messages of %s after turn %d: %w", session, afterTurn, err)
	}
	return collect(rows, scanMessage, fmt.Sprintf("list messages of %s after turn %d", session, afterTurn))
}
