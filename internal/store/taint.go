package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// TaintText is one text a session's model was shown, kept for per-value
// taint (internal/taint): Label is taint.Label's value (0 public, 1
// private, 2 the owner's), What where it came from.
type TaintText struct {
	ID    int64 // set by TaintTexts
	Label int
	What  string
	Text  string
	At    time.Time
}

// AddTaintText records a text session id's model was shown.
func (tx *Tx) AddTaintText(id string, t TaintText) error {
	if _, err := tx.exec(`INSERT INTO taint_texts (session_id, label, what, body, at) VALUES (?, ?, ?, ?, ?)`,
		id, t.Label, t.What, t.Text, nanos(t.At)); err != nil {
		return fmt.Errorf("record taint text of session %s: %w", id, err)
	}
	return nil
}

// TaintTexts returns the texts recorded for session id after the one
// whose ID is after (0: all), oldest first.
func (s *Store) TaintTexts(ctx context.Context, id string, after int64) ([]TaintText, error) {
	op := "taint texts of session " + id
	rows, err := s.reader.QueryContext(ctx, `SELECT id, label, what, body, at FROM taint_texts WHERE session_id = ? AND id > ? ORDER BY id`, id, after)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return collect(rows, func(r interface{ Scan(...any) error }) (TaintText, error) {
		var t TaintText
		var at sql.NullInt64
		err := r.Scan(&t.ID, &t.Label, &t.What, &t.Text, &at)
		t.At = fromNanos(at)
		return t, err
	}, op)
}
