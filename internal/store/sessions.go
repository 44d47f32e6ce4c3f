package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Session is one conversation. It belongs to exactly one owner for life.
type Session struct {
	ID        string
	Owner     string
	CreatedAt time.Time
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
	err := tx.queryRow(`SELECT owner FROM sessions WHERE id = ?`, id).Scan(&got)
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
	return nil
}

// Session returns one session or ErrNotFound.
func (s *Store) Session(ctx context.Context, id string) (Session, error) {
	var out Session
	var created, private sql.NullInt64
	err := s.readRow(ctx, `SELECT id, owner, created_at, private_since FROM sessions WHERE id = ?`, id).
		Scan(&out.ID, &out.Owner, &created, &private)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, fmt.Errorf("get session %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Session{}, fmt.Errorf("get session %s: %w", id, err)
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
}

// SessionsOf returns owner's sessions, the most recently active first, at
// most limit (≤ 0 means 100, never more than 1000).
func (s *Store) SessionsOf(ctx context.Context, owner string, limit int) ([]SessionSummary, error) {
	rows, err := s.readRows(ctx, `SELECT s.id, s.created_at, count(t.turn), coalesce(max(t.created_at), s.created_at) AS last,
		s.private_since
		FROM sessions s LEFT JOIN turns t ON t.session_id = s.id
		WHERE s.owner = ? GROUP BY s.id ORDER BY last DESC, s.id LIMIT ?`, owner, clampLimit(limit, 100, 1000))
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return collect(rows, func(sc interface{ Scan(...any) error }) (SessionSummary, error) {
		var out SessionSummary
		var created, last, private sql.NullInt64
		if err := sc.Scan(&out.ID, &created, &out.Turns, &last, &private); err != nil {
			return SessionSummary{}, err
		}
		out.CreatedAt, out.LastAt, out.PrivateSince = fromNanos(created), fromNanos(last), fromNanos(private)
		return out, nil
	}, "list sessions")
}
