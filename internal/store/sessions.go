package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Session is one conversation. It belongs to exactly one owner for life.
type Session struct {
	ID    string
	Owner string
	// CreatedAt is when the conversation began: when the id was first
	// used, or used again after the session was deleted.
	CreatedAt time.Time
	// Deleted: the session was deleted (its messages are gone) and its id
	// not used again since.
	Deleted bool
	// PrivateSince is when the session's context first held the owner's
	// private data (see MarkSessionPrivate); zero while it has not.
	PrivateSince time.Time
}

// EnsureSession creates the session if it does not exist. If it exists
// with another owner it returns ErrSessionOwner: a session never changes
// hands, so nothing bound to it (tool runs, approvals, grants) can be
// reached by another owner through it.
func (tx *Tx) EnsureSession(id, owner string, now time.Time) error {
	if id == "" || owner == "" {
		return fmt.Errorf("ensure session: id and owner must not be empty")
	}
	var got string
	var deleted bool
	err := tx.queryRow(`SELECT owner, deleted_at IS NOT NULL FROM sessions WHERE id = ?`, id).Scan(&got, &deleted)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.exec(`INSERT INTO sessions (id, owner, created_at) VALUES (?, ?, ?)`, id, owner, nanos(now)); err != nil {
			return fmt.Errorf("ensure session %s: %w", id, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("ensure session %s: %w", id, err)
	case got != owner:
		return fmt.Errorf("ensure session %s: %w", id, ErrSessionOwner)
	}
	if deleted {
		// Its id used again: a new conversation under the old name, born
		// now. A reader that keeps a conversation (internal/history)
		// tells the two apart by created_at.
		if _, err := tx.exec(`UPDATE sessions SET deleted_at = NULL, created_at = ? WHERE id = ?`, nanos(now), id); err != nil {
			return fmt.Errorf("ensure session %s: %w", id, err)
		}
	}
	return nil
}

// Session returns one session or ErrNotFound.
func (s *Store) Session(ctx context.Context, id string) (Session, error) {
	var out Session
	var created, private sql.NullInt64
	err := s.readRow(ctx, `SELECT id, owner, created_at, private_since, deleted_at IS NOT NULL FROM sessions WHERE id = ?`, id).
		Scan(&out.ID, &out.Owner, &created, &private, &out.Deleted)
	if err = rowErr(err, "get session", id); err != nil {
		return Session{}, err
	}
	out.CreatedAt, out.PrivateSince = fromNanos(created), fromNanos(private)
	return out, nil
}

// MarkSessionPrivate records that session id's context now holds the
// owner's private data. Only the first mark is kept: the column moves from
// NULL to a time once and never back, so a mark is one UPDATE that changes
// nothing when the session is private already (or does not exist).
func (tx *Tx) MarkSessionPrivate(id string, now time.Time) error {
	if now.IsZero() {
		return fmt.Errorf("mark session %s private: no time given", id)
	}
	if _, err := tx.exec(`UPDATE sessions SET private_since = ? WHERE id = ? AND private_since IS NULL`, now.UnixNano(), id); err != nil {
		return fmt.Errorf("mark session %s private: %w", id, err)
	}
	return nil
}

// SessionSummary is one session with the size and age of its stored
// conversation.
type SessionSummary struct {
	ID        string
	CreatedAt time.Time
	Turns     int
	LastAt    time.Time // the last stored turn's time; CreatedAt when none
	// PrivateSince is when the session's context first held the owner's
	// private data (zero: never); see Tx.MarkSessionPrivate.
	PrivateSince time.Time
	// Title is the first words of the owner's first message (see
	// TitleOf); empty while the session has no stored turn.
	Title string
}

// SessionsOf returns owner's sessions, the most recently active first, at
// most limit (≤ 0 means 100, never more than 1000).
func (s *Store) SessionsOf(ctx context.Context, owner string, limit int) ([]SessionSummary, error) {
	// The title reads at most titleScan bytes of one message per session,
	// through messages' (session_id, turn, seq) index.
	rows, err := s.readRows(ctx, `SELECT s.id, s.created_at, count(t.turn), coalesce(max(t.created_at), s.created_at) AS last,
		s.private_since,
		coalesce((SELECT substr(m.content, 1, ?) FROM messages m WHERE m.session_id = s.id AND m.role = 'user'
			ORDER BY m.turn, m.seq LIMIT 1), '')
		FROM sessions s LEFT JOIN turns t ON t.session_id = s.id
		WHERE s.owner = ? AND s.deleted_at IS NULL GROUP BY s.id ORDER BY last DESC, s.id LIMIT ?`,
		titleScan, owner, clampLimit(limit, 100, 1000))
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return collect(rows, func(sc interface{ Scan(...any) error }) (SessionSummary, error) {
		var out SessionSummary
		var created, last, private sql.NullInt64
		var first string
		if err := sc.Scan(&out.ID, &created, &out.Turns, &last, &private, &first); err != nil {
			return SessionSummary{}, err
		}
		out.CreatedAt, out.LastAt, out.PrivateSince = fromNanos(created), fromNanos(last), fromNanos(private)
		out.Title = TitleOf(first)
		return out, nil
	}, "list sessions")
}

// Session titles: the first words of the owner's first message.
const (
	titleScan  = 400 // characters of the first message read
	titleWords = 8
	titleRunes = 60
)

// TitleOf is a session's title made from its first message: whitespace
// folded, at most titleWords words and titleRunes characters (text
// without spaces, as Chinese, is cut by characters), "…" when cut.
func TitleOf(first string) string {
	words := strings.Fields(first)
	cut := len(words) > titleWords
	if cut {
		words = words[:titleWords]
	}
	t := []rune(strings.Join(words, " "))
	if len(t) > titleRunes {
		t, cut = t[:titleRunes-1], true
	}
	if !cut && utf8.RuneCountInString(first) >= titleScan {
		cut = true // the scan itself stopped inside the message
	}
	if cut {
		return strings.TrimRight(string(t), " ") + "…"
	}
	return string(t)
}

// DeleteSession deletes owner's session id: its conversation (turns,
// messages, summary, turns waiting for memory capture, the texts of its
// taint ledger) goes, its session-scoped grants are revoked, and it
// is no longer listed. Approvals, tool runs, artifacts and the audit trail
// stay (the audit chain is append-only). It returns ErrNotFound when owner
// has no such session (or it was deleted), and ErrSessionPending, deleting
// nothing, while one of its approvals is pending and unexpired.
func (tx *Tx) DeleteSession(id, owner string, now time.Time) error {
	var got string
	err := tx.queryRow(`SELECT owner FROM sessions WHERE id = ? AND deleted_at IS NULL`, id).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && got != owner) {
		return fmt.Errorf("delete session %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	var pending int
	if err := tx.queryRow(`SELECT count(*) FROM approvals WHERE session_id = ? AND status = 'pending' AND expires_at > ?`,
		id, nanos(now)).Scan(&pending); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	if pending > 0 {
		return fmt.Errorf("delete session %s: %d pending: %w", id, pending, ErrSessionPending)
	}
	for _, q := range []string{
		`DELETE FROM session_summaries WHERE session_id = ?`, // refers to turns
		`DELETE FROM capture_queue WHERE session_id = ?`,     // refers to turns
		`DELETE FROM messages WHERE session_id = ?`,          // refers to turns
		`DELETE FROM turns WHERE session_id = ?`,
		`DELETE FROM taint_texts WHERE session_id = ?`, // what its model was shown
	} {
		if _, err := tx.exec(q, id); err != nil {
			return fmt.Errorf("delete session %s: %w", id, err)
		}
	}
	if _, err := tx.exec(`UPDATE grants SET revoked_at = ? WHERE session_id = ? AND revoked_at IS NULL`, nanos(now), id); err != nil {
		return fmt.Errorf("delete session %s: revoke its grants: %w", id, err)
	}
	if _, err := tx.exec(`UPDATE sessions SET deleted_at = ? WHERE id = ?`, nanos(now), id); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return nil
}
