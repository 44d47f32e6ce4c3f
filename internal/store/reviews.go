package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
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

// MemoryReviewProposal is one proposal of a review.
type MemoryReviewProposal struct {
	N      int      `json:"n"`
	Action string   `json:"action"` // merge, delete or replace
	IDs    []string `json:"ids"`
	Text   string   `json:"text"`
	Reason string   `json:"reason"`
	Bound  string   `json:"bound"`
	Status string   `json:"status"` // pending, approved, dismissed or stale
}

// PutMemoryReview stores review r, new or changed; a new open review
// closes owner's reviews open before it.
func (tx *Tx) PutMemoryReview(r MemoryReview) error {
	props, err := json.Marshal(r.Proposals)
	if err == nil && r.Status == "open" {
		_, err = tx.exec(`UPDATE memory_reviews SET status = 'closed' WHERE owner = ? AND status = 'open' AND id != ?`, r.Owner, r.ID)
	}
	if err == nil {
		_, err = tx.exec(`INSERT INTO memory_reviews (id, owner, created_at, status, dropped, proposals) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET status = excluded.status, proposals = excluded.proposals`,
			r.ID, r.Owner, r.CreatedAt.UnixNano(), r.Status, r.Dropped, string(props))
	}
	if err != nil {
		return fmt.Errorf("save memory review: %w", err)
	}
	return nil
}

// OpenMemoryReview returns owner's open review, or ErrNotFound.
func (s *Store) OpenMemoryReview(ctx context.Context, owner string) (MemoryReview, error) {
	var r MemoryReview
	var created int64
	var props string
	err := s.readRow(ctx, `SELECT id, owner, created_at, status, dropped, proposals FROM memory_reviews
		WHERE owner = ? AND status = 'open' ORDER BY created_at DESC LIMIT 1`, owner).Scan(&r.ID, &r.Owner, &created, &r.Status, &r.Dropped, &props)
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	if err == nil {
		err = json.Unmarshal([]byte(props), &r.Proposals)
	}
	if err != nil {
		return r, fmt.Errorf("memory review: %w", err)
	}
	r.CreatedAt = time.Unix(0, created).UTC()
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
