package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// TOTP is an owner's authenticator as stored: its secret sealed (Nonce,
// Box), never in clear.
type TOTP struct {
	Owner     string
	Nonce     []byte
	Box       []byte
	Active    bool // false: set up, no code typed yet
	Created   time.Time
	Activated time.Time
}

// ErrTOTPStepUsed: a code was already accepted for this time step or a
// later one.
var ErrTOTPStepUsed = errors.New("a code was already accepted for this time or a later one")

// PutTOTP stores owner's authenticator, pending, replacing any other and
// forgetting the steps and wrong codes of the one it replaces.
func (tx *Tx) PutTOTP(t TOTP) error {
	for _, q := range []string{`DELETE FROM totp_used WHERE owner = ?`, `DELETE FROM totp_wrong WHERE owner = ?`} {
		if _, err := tx.exec(q, t.Owner); err != nil {
			return fmt.Errorf("store totp of %s: %w", t.Owner, err)
		}
	}
	_, err := tx.exec(`INSERT INTO totp (owner, nonce, box, state, created_at) VALUES (?, ?, ?, 'pending', ?)
		ON CONFLICT (owner) DO UPDATE SET nonce = excluded.nonce, box = excluded.box, state = 'pending',
		created_at = excluded.created_at, activated_at = NULL`, t.Owner, t.Nonce, t.Box, nanos(t.Created))
	if err != nil {
		return fmt.Errorf("store totp of %s: %w", t.Owner, err)
	}
	return nil
}

// ActivateTOTP makes owner's pending authenticator active.
func (tx *Tx) ActivateTOTP(owner string, now time.Time) error {
	if _, err := tx.exec(`UPDATE totp SET state = 'active', activated_at = ? WHERE owner = ? AND state = 'pending'`, nanos(now), owner); err != nil {
		return fmt.Errorf("activate totp of %s: %w", owner, err)
	}
	return nil
}

// DeleteTOTP removes owner's authenticator and its history.
func (tx *Tx) DeleteTOTP(owner string) error {
	for _, q := range []string{`DELETE FROM totp WHERE owner = ?`, `DELETE FROM totp_used WHERE owner = ?`, `DELETE FROM totp_wrong WHERE owner = ?`} {
		if _, err := tx.exec(q, owner); err != nil {
			return fmt.Errorf("delete totp of %s: %w", owner, err)
		}
	}
	return nil
}

// UseTOTPStep records that a code for step was accepted, or returns
// ErrTOTPStepUsed when one was already accepted for step or a later one.
// In one transaction with the check, so two processes cannot both accept
// one code.
func (tx *Tx) UseTOTPStep(owner string, step int64, now time.Time) error {
	var latest sql.NullInt64
	if err := tx.queryRow(`SELECT max(step) FROM totp_used WHERE owner = ?`, owner).Scan(&latest); err != nil {
		return fmt.Errorf("totp steps of %s: %w", owner, err)
	}
	if latest.Valid && latest.Int64 >= step {
		return ErrTOTPStepUsed
	}
	if _, err := tx.exec(`INSERT INTO totp_used (owner, step, at) VALUES (?, ?, ?)`, owner, step, nanos(now)); err != nil {
		return fmt.Errorf("totp steps of %s: %w", owner, err)
	}
	return nil
}

// WrongTOTP records a wrong code and returns how many were recorded for
// owner since since, this one included.
func (tx *Tx) WrongTOTP(owner string, now, since time.Time) (int, error) {
	if _, err := tx.exec(`INSERT INTO totp_wrong (owner, at) VALUES (?, ?)`, owner, nanos(now)); err != nil {
		return 0, fmt.Errorf("totp wrong codes of %s: %w", owner, err)
	}
	if _, err := tx.exec(`DELETE FROM totp_wrong WHERE owner = ? AND at < ?`, owner, nanos(since)); err != nil {
		return 0, fmt.Errorf("totp wrong codes of %s: %w", owner, err)
	}
	var n int
	if err := tx.queryRow(`SELECT count(*) FROM totp_wrong WHERE owner = ?`, owner).Scan(&n); err != nil {
		return 0, fmt.Errorf("totp wrong codes of %s: %w", owner, err)
	}
	return n, nil
}

// WrongTOTPSince counts owner's wrong codes since since.
func (s *Store) WrongTOTPSince(ctx context.Context, owner string, since time.Time) (int, error) {
	var n int
	if err := s.readRow(ctx, `SELECT count(*) FROM totp_wrong WHERE owner = ? AND at >= ?`, owner, nanos(since)).Scan(&n); err != nil {
		return 0, fmt.Errorf("totp wrong codes of %s: %w", owner, err)
	}
	return n, nil
}

// GetTOTP returns owner's authenticator, ErrNotFound when none is set up,
// and the last time a code was accepted (zero when never).
func (s *Store) GetTOTP(ctx context.Context, owner string) (TOTP, time.Time, error) {
	t := TOTP{Owner: owner}
	var state string
	var created, activated, used sql.NullInt64
	err := s.readRow(ctx, `SELECT nonce, box, state, created_at, activated_at,
		(SELECT max(at) FROM totp_used WHERE owner = totp.owner) FROM totp WHERE owner = ?`, owner).
		Scan(&t.Nonce, &t.Box, &state, &created, &activated, &used)
	if err != nil {
		return TOTP{}, time.Time{}, rowErr(err, "get totp", owner)
	}
	t.Active, t.Created, t.Activated = state == "active", fromNanos(created), fromNanos(activated)
	return t, fromNanos(used), nil
}
