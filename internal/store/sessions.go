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
	var created sql.NullInt64
	err := s.readRow(ctx, `SELECT id, owner, created_at FROM sessions WHERE id = ?`, id).
		Scan(&out.ID, &out.Owner, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, fmt.Errorf("get session %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Session{}, fmt.Errorf("get session %s: %w", id, err)
	}
	out.CreatedAt = fromNanos(created)
	return out, nil
}
