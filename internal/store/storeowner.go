package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ClaimOwner records owner as the owner of this store unless one is
// recorded already, and returns the one recorded: owner itself, or the
// other owner who claimed the store first. A shared store holds one
// owner's data; app refuses to run another owner's homard on it.
func (s *Store) ClaimOwner(ctx context.Context, owner string, now time.Time) (string, error) {
	if owner == "" {
		return "", errors.New("claim store: no owner")
	}
	var holder string
	err := s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.exec(`INSERT INTO store_owner (id, owner, claimed_at) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING`, owner, nanos(now)); err != nil {
			return err
		}
		return tx.queryRow(`SELECT owner FROM store_owner WHERE id = 1`).Scan(&holder)
	})
	if err != nil {
		return "", fmt.Errorf("claim store: %w", err)
	}
	return holder, nil
}

// StoreOwner is the owner recorded by ClaimOwner, "" when none is.
func (s *Store) StoreOwner(ctx context.Context) (string, error) {
	var owner string
	err := s.readRow(ctx, `SELECT owner FROM store_owner WHERE id = 1`).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store owner: %w", err)
	}
	return owner, nil
}
