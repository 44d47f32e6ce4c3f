package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// MemoryCandidate is one row of memory_candidates (migration 0007): a note
// proposed from a conversation that is not (yet) in the owner's memory.
type MemoryCandidate struct {
	ID            string
	Owner         string
	Norm          string
	Text          string
	Kind          string
	FirstSeen     time.Time
	LastSeen      time.Time
	Seen          int
	Source        string
	Status        string // buffered, promoted, review or dismissed
	ConflictsWith string
	UnitID        string
}

const candidateColumns = `id, owner, norm, text, kind, first_seen, last_seen, seen, source, status, conflicts_with, unit_id`

func scanCandidate(sc interface{ Scan(...any) error }) (MemoryCandidate, error) {
	var c MemoryCandidate
	var first, last sql.NullInt64
	err := sc.Scan(&c.ID, &c.Owner, &c.Norm, &c.Text, &c.Kind, &first, &last, &c.Seen, &c.Source, &c.Status, &c.ConflictsWith, &c.UnitID)
	c.FirstSeen, c.LastSeen = fromNanos(first), fromNanos(last)
	return c, err
}

// MemoryCandidateByNorm returns owner's candidate with normalized text
// norm, or ErrNotFound.
func (s *Store) MemoryCandidateByNorm(ctx context.Context, owner, norm string) (MemoryCandidate, error) {
	c, err := scanCandidate(s.readRow(ctx, `SELECT `+candidateColumns+` FROM memory_candidates WHERE owner = ? AND norm = ?`, owner, norm))
	return c, candidateErr(err)
}

// MemoryCandidate returns owner's candidate id, or ErrNotFound.
func (s *Store) MemoryCandidate(ctx context.Context, owner, id string) (MemoryCandidate, error) {
	c, err := scanCandidate(s.readRow(ctx, `SELECT `+candidateColumns+` FROM memory_candidates WHERE owner = ? AND id = ?`, owner, id))
	return c, candidateErr(err)
}

func candidateErr(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("memory candidate: %w", err)
	}
	return nil
}

// MemoryCandidates lists owner's candidates with one of statuses, oldest
// first.
func (s *Store) MemoryCandidates(ctx context.Context, owner string, statuses ...string) ([]MemoryCandidate, error) {
	var out []MemoryCandidate
	for _, st := range statuses {
		rows, err := s.readRows(ctx, `SELECT `+candidateColumns+` FROM memory_candidates
			WHERE owner = ? AND status = ? ORDER BY first_seen, id`, owner, st)
		if err != nil {
			return nil, fmt.Errorf("memory candidates: %w", err)
		}
		for rows.Next() {
			c, err := scanCandidate(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("memory candidates: %w", err)
			}
			out = append(out, c)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("memory candidates: %w", err)
		}
	}
	return out, nil
}

// PutMemoryCandidate inserts c or replaces the candidate with its id.
func (tx *Tx) PutMemoryCandidate(c MemoryCandidate) error {
	_, err := tx.exec(`INSERT INTO memory_candidates (`+candidateColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET norm = excluded.norm, text = excluded.text, kind = excluded.kind,
			first_seen = excluded.first_seen, last_seen = excluded.last_seen, seen = excluded.seen,
			source = excluded.source, status = excluded.status, conflicts_with = excluded.conflicts_with,
			unit_id = excluded.unit_id`,
		c.ID, c.Owner, c.Norm, c.Text, c.Kind, nanos(c.FirstSeen), nanos(c.LastSeen), c.Seen, c.Source, c.Status,
		c.ConflictsWith, c.UnitID)
	if err != nil {
		return fmt.Errorf("save memory candidate: %w", err)
	}
	return nil
}

// ExpireMemoryCandidates deletes owner's buffered candidates last seen
// before cutoff and reports how many.
func (tx *Tx) ExpireMemoryCandidates(owner string, cutoff time.Time) (int, error) {
	res, err := tx.exec(`DELETE FROM memory_candidates WHERE owner = ? AND status = 'buffered' AND last_seen < ?`,
		owner, cutoff.UnixNano())
	if err != nil {
		return 0, fmt.Errorf("expire memory candidates: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
