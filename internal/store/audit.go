package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// AuditRow is one stored audit record. The audit package owns its meaning
// (how Seq, PrevHash and Hash are computed); store keeps it append-only.
type AuditRow struct {
	Seq        int64
	Time       time.Time
	Owner      string
	Session    string
	Trust      string
	Tool       string
	Decision   string
	Rule       string
	Reason     string
	Args       string
	PlanHash   string
	RunID      string
	ApprovalID string
	PrevHash   string
	Hash       string
	Effects    string
}

const auditColumns = `seq, time, owner, session_id, trust, tool, decision, rule, reason, args,
	plan_hash, run_id, approval_id, prev_hash, hash, effects`

func scanAudit(sc interface{ Scan(...any) error }) (AuditRow, error) {
	var r AuditRow
	var t sql.NullInt64
	err := sc.Scan(&r.Seq, &t, &r.Owner, &r.Session, &r.Trust, &r.Tool, &r.Decision, &r.Rule, &r.Reason,
		&r.Args, &r.PlanHash, &r.RunID, &r.ApprovalID, &r.PrevHash, &r.Hash, &r.Effects)
	if err != nil {
		return AuditRow{}, err
	}
	r.Time = fromNanos(t)
	return r, nil
}

// LastAudit returns the seq and hash of the newest audit row, or 0 and ""
// when there is none. Reading it inside the appending transaction (which
// holds the write lock) makes read-last-then-append atomic.
func (tx *Tx) LastAudit() (seq int64, hash string, err error) {
	err = tx.queryRow(`SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`).Scan(&seq, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("read last audit record: %w", err)
	}
	return seq, hash, nil
}

// InsertAudit appends r. Its Seq must be new.
func (tx *Tx) InsertAudit(r AuditRow) error {
	_, err := tx.exec(`INSERT INTO audit (`+auditColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Seq, nanos(r.Time), r.Owner, r.Session, r.Trust, r.Tool, r.Decision, r.Rule, r.Reason, r.Args,
		r.PlanHash, r.RunID, r.ApprovalID, r.PrevHash, r.Hash, r.Effects)
	if err != nil {
		return fmt.Errorf("insert audit record %d: %w", r.Seq, err)
	}
	return nil
}

// ListAudit returns rows with seq > afterSeq in seq order, at most limit
// (≤ 0 means 100, never more than 1000).
func (s *Store) ListAudit(ctx context.Context, afterSeq int64, limit int) ([]AuditRow, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit WHERE seq > ? ORDER BY seq LIMIT ?`,
		afterSeq, clampLimit(limit, 100, 1000))
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	return collect(rows, scanAudit, "list audit")
}

// AllAudit streams every row in seq order to fn, from one consistent
// snapshot, without holding them all in memory. It stops at the first
// error fn returns and returns that error unchanged.
func (s *Store) AllAudit(ctx context.Context, fn func(AuditRow) error) error {
	return s.AuditFrom(ctx, 0, fn)
}

// LastAuditSeq returns the seq of the newest audit record, 0 if none.
func (s *Store) LastAuditSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.reader.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM audit`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("last audit seq: %w", err)
	}
	return seq, nil
}
