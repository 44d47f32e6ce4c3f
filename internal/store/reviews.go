package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MemoryReview is one row of memory_reviews (migration 0032) with its
// proposals.
type MemoryReview struct {
	ID        string
	Owner     string
	CreatedAt time.Time
	Status    string // open or closed
	Dropped   int    // the model's proposals that failed the checks
	Proposals []MemoryReviewProposal
}

// MemoryReviewProposal is one row of memory_review_proposals.
type MemoryReviewProposal struct {
	N      int
	Action string // merge, delete or replace
	IDs    []string
	Text   string
	Reason string
	Bound  string
	Status string // pending, approved, dismissed or stale
}

// PutMemoryReview stores a new review with its proposals and closes
// owner's reviews that were open before it.
func (tx *Tx) PutMemoryReview(r MemoryReview) error {
	if _, err := tx.exec(`UPDATE memory_reviews SET status = 'closed' WHERE owner = ? AND status = 'open'`, r.Owner); err != nil {
		return fmt.Errorf("save memory review: %w", err)
	}
	if _, err := tx.exec(`INSERT INTO memory_reviews (id, owner, created_at, status, dropped) VALUES (?, ?, ?, ?, ?)`,
		r.ID, r.Owner, r.CreatedAt.UnixNano(), r.Status, r.Dropped); err != nil {
		return fmt.Errorf("save memory review: %w", err)
	}
	for _, p := range r.Proposals {
		if _, err := tx.exec(`INSERT INTO memory_review_proposals (review_id, n, action, ids, text, reason, bound, status)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, p.N, p.Action, strings.Join(p.IDs, " "), p.Text, p.Reason, p.Bound, p.Status); err != nil {
			return fmt.Errorf("save memory review: %w", err)
		}
	}
	return nil
}

// SetMemoryReviewProposal sets proposal n of review id from pending to
// status, and closes the review when none is pending any more. ok is
// false when the proposal was not pending.
func (tx *Tx) SetMemoryReviewProposal(id string, n int, status string) (ok bool, err error) {
	res, err := tx.exec(`UPDATE memory_review_proposals SET status = ? WHERE review_id = ? AND n = ? AND status = 'pending'`, status, id, n)
	if err != nil {
		return false, fmt.Errorf("answer memory review: %w", err)
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return false, nil
	}
	_, err = tx.exec(`UPDATE memory_reviews SET status = 'closed' WHERE id = ? AND NOT EXISTS
		(SELECT 1 FROM memory_review_proposals WHERE review_id = ? AND status = 'pending')`, id, id)
	if err != nil {
		return false, fmt.Errorf("answer memory review: %w", err)
	}
	return true, nil
}

// OpenMemoryReview returns owner's open review, or ErrNotFound.
func (s *Store) OpenMemoryReview(ctx context.Context, owner string) (MemoryReview, error) {
	var r MemoryReview
	var created int64
	err := s.readRow(ctx, `SELECT id, owner, created_at, status, dropped FROM memory_reviews
		WHERE owner = ? AND status = 'open' ORDER BY created_at DESC LIMIT 1`, owner).Scan(&r.ID, &r.Owner, &created, &r.Status, &r.Dropped)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	if err != nil {
		return r, fmt.Errorf("memory review: %w", err)
	}
	r.CreatedAt = time.Unix(0, created).UTC()
	rows, err := s.readRows(ctx, `SELECT n, action, ids, text, reason, bound, status FROM memory_review_proposals
		WHERE review_id = ? ORDER BY n`, r.ID)
	if err != nil {
		return r, fmt.Errorf("memory review: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p MemoryReviewProposal
		var ids string
		if err := rows.Scan(&p.N, &p.Action, &ids, &p.Text, &p.Reason, &p.Bound, &p.Status); err != nil {
			return r, fmt.Errorf("memory review: %w", err)
		}
		p.IDs = strings.Fields(ids)
		r.Proposals = append(r.Proposals, p)
	}
	if err := rows.Err(); err != nil {
		return r, fmt.Errorf("memory review: %w", err)
	}
	return r, nil
}

// MemoryReviewSlot is the last weekly review slot run for owner (zero:
// none).
func (s *Store) MemoryReviewSlot(ctx context.Context, owner string) (time.Time, error) {
	var n sql.NullInt64
	err := s.readRow(ctx, `SELECT slot FROM memory_review_slots WHERE owner = ?`, owner).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("memory review slot: %w", err)
	}
	return fromNanos(n), nil
}

// ClaimMemoryReviewSlot records slot as owner's last weekly review and
// reports whether it was later than the one recorded: two processes
// never both claim one slot.
func (tx *Tx) ClaimMemoryReviewSlot(owner string, slot time.Time) (bool, error) {
	res, err := tx.exec(`INSERT INTO memory_review_slots (owner, slot) VALUES (?, ?)
		ON CONFLICT (owner) DO UPDATE SET slot = excluded.slot WHERE excluded.slot > memory_review_slots.slot`, owner, slot.UnixNano())
	if err != nil {
		return false, fmt.Errorf("claim memory review slot: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}
