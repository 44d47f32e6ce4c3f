package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// APIToken is a stored API token. The token itself is never stored, only
// the SHA-256 of its secret part.
type APIToken struct {
	ID         string
	Name       string
	SecretHash []byte // SHA-256 of the secret part, 32 bytes
	CreatedAt  time.Time
	LastUsedAt time.Time // zero until first used
	RevokedAt  time.Time // zero while valid
	// Owner is the owner the token acts as; "" for a token made before
	// owners were recorded, not yet claimed (ClaimAPIToken).
	Owner string
}

const tokenColumns = `id, name, secret_hash, created_at, last_used_at, revoked_at, owner`

func scanToken(sc interface{ Scan(...any) error }) (APIToken, error) {
	var t APIToken
	var created, used, revoked sql.NullInt64
	if err := sc.Scan(&t.ID, &t.Name, &t.SecretHash, &created, &used, &revoked, &t.Owner); err != nil {
		return APIToken{}, err
	}
	t.CreatedAt, t.LastUsedAt, t.RevokedAt = fromNanos(created), fromNanos(used), fromNanos(revoked)
	return t, nil
}

// InsertAPIToken stores a new token of t.Owner (not empty). Its ID must
// be new.
func (tx *Tx) InsertAPIToken(t APIToken) error {
	if len(t.SecretHash) != 32 {
		return fmt.Errorf("insert api token %s: secret hash must be 32 bytes", t.ID)
	}
	if t.Owner == "" {
		return fmt.Errorf("insert api token %s: no owner", t.ID)
	}
	_, err := tx.exec(`INSERT INTO api_tokens (id, name, secret_hash, created_at, owner) VALUES (?, ?, ?, ?, ?)`,
		t.ID, t.Name, t.SecretHash, nanos(t.CreatedAt), t.Owner)
	if err != nil {
		return fmt.Errorf("insert api token %s: %w", t.ID, err)
	}
	return nil
}

// RevokeAPIToken marks owner's valid token (or an unclaimed one) revoked
// at now. It returns ErrNotFound when there is no such token, it is
// another owner's, or it was already revoked.
func (tx *Tx) RevokeAPIToken(id, owner string, now time.Time) error {
	res, err := tx.exec(`UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL AND owner IN (?, '')`, nanos(now), id, owner)
	if err != nil {
		return fmt.Errorf("revoke api token %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("revoke api token %s: %w", id, ErrNotFound)
	}
	return nil
}

// TouchAPIToken records that owner used a token at now; an unclaimed
// token (made before owners were recorded) becomes owner's.
func (tx *Tx) TouchAPIToken(id, owner string, now time.Time) error {
	if _, err := tx.exec(`UPDATE api_tokens SET last_used_at = ?, owner = CASE WHEN owner = '' THEN ? ELSE owner END WHERE id = ?`, nanos(now), owner, id); err != nil {
		return fmt.Errorf("touch api token %s: %w", id, err)
	}
	return nil
}

// APIToken returns one token (revoked ones included) or ErrNotFound.
func (s *Store) APIToken(ctx context.Context, id string) (APIToken, error) {
	t, err := scanToken(s.readRow(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE id = ?`, id))
	return one(t, err, "get api token", id)
}

// APITokens returns owner's tokens and the unclaimed ones, newest first.
func (s *Store) APITokens(ctx context.Context, owner string) ([]APIToken, error) {
	return readAll(ctx, s, "list api tokens", scanToken, `SELECT `+tokenColumns+` FROM api_tokens WHERE owner IN (?, '') ORDER BY created_at DESC, rowid DESC`, owner)
}
