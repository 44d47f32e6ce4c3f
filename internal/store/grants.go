package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Grant is a stored standing permission created by a session or always
// approval. The approval package decides what a grant covers.
type Grant struct {
	ID         string
	Owner      string
	SessionID  string // empty for scope always (any session)
	Tool       string
	Patterns   []string // empty: a tool-wide grant
	MaxRisk    int
	Scope      string // session or always
	ApprovalID string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	RevokedAt  time.Time // zero while not revoked
	// Template is a command grant's argv template as JSON (migration
	// 0011); empty for other tools.
	Template string
}

const grantColumns = `id, owner, coalesce(session_id, ''), tool, patterns, max_risk, scope, approval_id,
	created_at, expires_at, revoked_at, template`

func scanGrant(sc interface{ Scan(...any) error }) (Grant, error) {
	var g Grant
	var patterns string
	var created, expires, revoked sql.NullInt64
	err := sc.Scan(&g.ID, &g.Owner, &g.SessionID, &g.Tool, &patterns, &g.MaxRisk, &g.Scope, &g.ApprovalID,
		&created, &expires, &revoked, &g.Template)
	if err != nil {
		return Grant{}, err
	}
	if g.Patterns, err = decodeStrings(patterns); err != nil {
		return Grant{}, fmt.Errorf("grant %s patterns: %w", g.ID, err)
	}
	g.CreatedAt, g.ExpiresAt, g.RevokedAt = fromNanos(created), fromNanos(expires), fromNanos(revoked)
	return g, nil
}

// InsertGrant stores a new grant.
func (tx *Tx) InsertGrant(g Grant) error {
	_, err := tx.exec(`INSERT INTO grants (id, owner, session_id, tool, patterns, max_risk, scope, approval_id,
		created_at, expires_at, revoked_at, template) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		g.ID, g.Owner, nullString(g.SessionID), g.Tool, encodeStrings(g.Patterns), g.MaxRisk, g.Scope,
		g.ApprovalID, nanos(g.CreatedAt), nanos(g.ExpiresAt), nanos(g.RevokedAt), g.Template)
	if err != nil {
		return fmt.Errorf("insert grant %s: %w", g.ID, err)
	}
	return nil
}

// RevokeGrant marks a grant revoked at now. Revoking a revoked grant keeps
// the first revocation time and succeeds; an unknown id is ErrNotFound.
func (tx *Tx) RevokeGrant(id string, now time.Time) error {
	res, err := tx.exec(`UPDATE grants SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?`, nanos(now), id)
	if err != nil {
		return fmt.Errorf("revoke grant %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("revoke grant %s: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("revoke grant %s: %w", id, ErrNotFound)
	}
	return nil
}

// ActiveGrants returns the grants of owner for tool that are unrevoked,
// unexpired at now, cover at least minRisk and apply to session (grants
// without a session apply to every session), oldest first.
func (s *Store) ActiveGrants(ctx context.Context, owner, session, tool string, minRisk int, now time.Time) ([]Grant, error) {
	return readAll(ctx, s, "find grants", scanGrant, `SELECT `+grantColumns+` FROM grants
		WHERE owner = ? AND tool = ? AND revoked_at IS NULL AND expires_at > ? AND max_risk >= ?
			AND (session_id IS NULL OR session_id = ?)
		ORDER BY created_at, rowid`, owner, tool, nanos(now), minRisk, session)
}

// ListGrants returns every grant of owner, revoked and expired ones
// included, newest first (at most 1000).
func (s *Store) ListGrants(ctx context.Context, owner string) ([]Grant, error) {
	return readAll(ctx, s, "list grants", scanGrant, `SELECT `+grantColumns+` FROM grants WHERE owner = ?
		ORDER BY created_at DESC, rowid DESC LIMIT 1000`, owner)
}

// GetGrant returns one grant or ErrNotFound.
func (s *Store) GetGrant(ctx context.Context, id string) (Grant, error) {
	g, err := scanGrant(s.readRow(ctx, `SELECT `+grantColumns+` FROM grants WHERE id = ?`, id))
	return one(g, err, "get grant", id)
}
