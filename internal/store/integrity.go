package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// IntegrityState is the one row of the integrity table: how far the audit
// chain is known to verify, and whether homard currently refuses side
// effects because its records are damaged (Problem non-empty). Package
// integrity owns its meaning; store only keeps it.
type IntegrityState struct {
	// BaseSeq/BaseHash is where a full verification of the audit chain
	// starts: 0 and "" (genesis) until the owner acknowledges a break.
	BaseSeq  int64
	BaseHash string
	// VerifiedSeq/VerifiedHash is the newest record known to verify.
	VerifiedSeq  int64
	VerifiedHash string
	// FullAt is the last full check (zero: never).
	FullAt time.Time
	// Problem, when set, says what failed; side effects are refused until
	// it is acknowledged.
	Problem   string
	ProblemAt time.Time
	// AckedProblem is the last problem the owner acknowledged, when and by
	// whom.
	AckedProblem string
	AckedAt      time.Time
	AckedBy      string
}

const integrityColumns = `base_seq, base_hash, verified_seq, verified_hash, full_at, problem, problem_at,
	acked_problem, acked_at, acked_by`

func scanIntegrity(sc interface{ Scan(...any) error }) (IntegrityState, error) {
	var s IntegrityState
	var full, problemAt, ackedAt sql.NullInt64
	err := sc.Scan(&s.BaseSeq, &s.BaseHash, &s.VerifiedSeq, &s.VerifiedHash, &full, &s.Problem, &problemAt,
		&s.AckedProblem, &ackedAt, &s.AckedBy)
	if err != nil {
		return IntegrityState{}, fmt.Errorf("read integrity state: %w", err)
	}
	s.FullAt, s.ProblemAt, s.AckedAt = fromNanos(full), fromNanos(problemAt), fromNanos(ackedAt)
	return s, nil
}

// IntegrityState reads the state.
func (s *Store) IntegrityState(ctx context.Context) (IntegrityState, error) {
	return scanIntegrity(s.readRow(ctx, `SELECT `+integrityColumns+` FROM integrity WHERE id = 1`))
}

// IntegrityState reads the state inside the transaction.
func (tx *Tx) IntegrityState() (IntegrityState, error) {
	return scanIntegrity(tx.queryRow(`SELECT ` + integrityColumns + ` FROM integrity WHERE id = 1`))
}

// SetIntegrityState replaces the state.
func (tx *Tx) SetIntegrityState(s IntegrityState) error {
	_, err := tx.exec(`UPDATE integrity SET base_seq = ?, base_hash = ?, verified_seq = ?, verified_hash = ?,
		full_at = ?, problem = ?, problem_at = ?, acked_problem = ?, acked_at = ?, acked_by = ? WHERE id = 1`,
		s.BaseSeq, s.BaseHash, s.VerifiedSeq, s.VerifiedHash, nanos(s.FullAt), s.Problem, nanos(s.ProblemAt),
		s.AckedProblem, nanos(s.AckedAt), s.AckedBy)
	if err != nil {
		return fmt.Errorf("write integrity state: %w", err)
	}
	return nil
}

// IntegrityProblem returns the problem for which side effects are refused,
// "" when there is none. It is one indexed read of one row: the arbiter
// asks before every Plan that is not read-only.
func (s *Store) IntegrityProblem(ctx context.Context) (string, error) {
	var p string
	if err := s.readRow(ctx, `SELECT problem FROM integrity WHERE id = 1`).Scan(&p); err != nil {
		return "", fmt.Errorf("read integrity state: %w", err)
	}
	return p, nil
}

// quickCheckCacheKiB is the page cache QuickCheck reads through, as
// PRAGMA cache_size takes it (negative: KiB).
const quickCheckCacheKiB = -64

// QuickCheck runs PRAGMA quick_check (an engine's store: its Check): the b-tree structure of every table
// and index, without comparing indexes with their tables (cheaper than
// Integrity; measured about 40 ms for a 30 MB database). It returns an
// error wrapping ErrCorrupt naming the first problems.
func (s *Store) QuickCheck(ctx context.Context) (err error) {
	if s.eng != nil {
		return s.Integrity(ctx) // an engine has one check
	}
	conn, err := s.reader.Conn(ctx)
	if err != nil {
		return fmt.Errorf("quick check: %w", err)
	}
	defer conn.Close()
	// The check reads every page of the file once. Through the pool's
	// page cache (cache_size, 2 MB by default) those pages would stay in
	// the connection's memory for the life of a mostly idle serve, and the
	// driver's allocator keeps what SQLite frees: a small cache for the
	// check, the connection's own size restored after it.
	var size int64
	if err := conn.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&size); err != nil {
		return fmt.Errorf("quick check: %w", err)
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = %d", quickCheckCacheKiB)); err != nil {
		return fmt.Errorf("quick check: %w", err)
	}
	defer func() {
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA cache_size = %d", size)); rerr != nil && err == nil {
			err = fmt.Errorf("quick check: restore cache_size: %w", rerr)
		}
	}()
	rows, err := conn.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return quickCheckErr(err)
	}
	var problems []string
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			rows.Close()
			return quickCheckErr(err)
		}
		if msg != "ok" && len(problems) < 5 {
			problems = append(problems, msg)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return quickCheckErr(err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}

// quickCheckErr: a check that cannot even run on a damaged file (SQLite
// says "database disk image is malformed") is damage too.
func quickCheckErr(err error) error {
	if strings.Contains(err.Error(), "malformed") || strings.Contains(err.Error(), "not a database") {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return fmt.Errorf("quick check: %w", err)
}

// AuditFrom streams the rows with seq ≥ fromSeq in seq order to fn from
// one consistent snapshot, like AllAudit.
func (s *Store) AuditFrom(ctx context.Context, fromSeq int64, fn func(AuditRow) error) error {
	rows, err := s.reader.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit WHERE seq >= ? ORDER BY seq`, fromSeq)
	if err != nil {
		return fmt.Errorf("read audit: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanAudit(rows)
		if err != nil {
			return fmt.Errorf("read audit: %w", err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read audit: %w", err)
	}
	return nil
}
