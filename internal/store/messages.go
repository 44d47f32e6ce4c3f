package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// Message roles, as the messages table's CHECK allows them.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// MessageRow is one stored message of a conversation. Content is stored
// as given: callers redact it first.
type MessageRow struct {
	SessionID string
	Turn      int // set by AppendTurn
	Seq       int // position in the turn, from 0; set by AppendTurn
	Role      string
	Content   string
	// ToolCalls is a JSON array, set on an assistant message that proposed
	// calls; nil otherwise. Its shape belongs to the caller.
	ToolCalls  []byte
	ToolCallID string
	// Status is how the call a RoleTool message answers ended (a
	// channel.Status word: ran, denied, pending, error); "" on other
	// messages and on rows stored before migration 0016.
	Status    string
	CreatedAt time.Time
}

// Usage is the token count of one turn.
type Usage struct {
	Input, Output, Cached int
}

// AppendTurn records one whole turn of session: its usage and why it
// stopped (empty when the model answered on its own), then msgs in order.
// It creates the session for owner if needed and returns ErrSessionOwner if
// the session belongs to another owner. The turn number is the session's
// last plus one; it is returned. Call it inside one Write with the whole
// turn, so a turn is either stored completely or not at all.
func (tx *Tx) AppendTurn(session, owner string, msgs []MessageRow, usage Usage, stopped string, now time.Time) (int, error) {
	if len(msgs) == 0 {
		return 0, fmt.Errorf("append turn to %s: no messages", session)
	}
	if usage.Input < 0 || usage.Output < 0 || usage.Cached < 0 {
		return 0, fmt.Errorf("append turn to %s: negative usage %+v", session, usage)
	}
	for i, m := range msgs {
		if m.ToolCalls != nil && !json.Valid(m.ToolCalls) {
			return 0, fmt.Errorf("append turn to %s: message %d: tool calls are not valid JSON", session, i)
		}
	}
	if err := tx.EnsureSession(session, owner, now); err != nil {
		return 0, fmt.Errorf("append turn: %w", err)
	}
	var turn int
	if err := tx.queryRow(`SELECT coalesce(max(turn), 0) + 1 FROM turns WHERE session_id = ?`, session).Scan(&turn); err != nil {
		return 0, fmt.Errorf("append turn to %s: %w", session, err)
	}
	_, err := tx.exec(`INSERT INTO turns (session_id, turn, input_tokens, output_tokens, cached_tokens, stopped, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, session, turn, usage.Input, usage.Output, usage.Cached, stopped, nanos(now))
	if err != nil {
		return 0, fmt.Errorf("append turn %d to %s: %w", turn, session, err)
	}
	for i, m := range msgs {
		var calls any
		if m.ToolCalls != nil {
			calls = string(m.ToolCalls)
		}
		_, err := tx.exec(`INSERT INTO messages (session_id, turn, seq, role, content, tool_calls, tool_call_id, status, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, session, turn, i, m.Role, m.Content, calls, m.ToolCallID, m.Status, nanos(now))
		if err != nil {
			return 0, fmt.Errorf("append turn %d to %s: message %d: %w", turn, session, i, err)
		}
	}
	return turn, nil
}

func scanMessage(sc interface{ Scan(...any) error }) (MessageRow, error) {
	var m MessageRow
	var calls sql.NullString
	var created sql.NullInt64
	if err := sc.Scan(&m.SessionID, &m.Turn, &m.Seq, &m.Role, &m.Content, &calls, &m.ToolCallID, &m.Status, &created); err != nil {
		return MessageRow{}, err
	}
	if calls.Valid {
		m.ToolCalls = []byte(calls.String)
	}
	m.CreatedAt = fromNanos(created)
	return m, nil
}

// Messages returns every message of session in conversation order (turn,
// then position in the turn). An unknown session has no messages. It does
// not check who owns the session: callers do (Session).
func (s *Store) Messages(ctx context.Context, session string) ([]MessageRow, error) {
	rows, err := s.readRows(ctx, `SELECT session_id, turn, seq, role, content, tool_calls, tool_call_id, status, created_at
		FROM messages WHERE session_id = ? ORDER BY turn, seq`, session)
	if err != nil {
		return nil, fmt.Errorf("list messages of %s: %w", session, err)
	}
	return collect(rows, scanMessage, "list messages of "+session)
}
