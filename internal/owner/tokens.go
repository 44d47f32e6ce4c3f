package owner

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/homard/homard/internal/store"
)

// tokenPrefix starts every API token, so a leaked one is recognisable (and
// a secret scanner can match it).
const tokenPrefix = "hmd_"

// TokenCreate makes a new API token named name and returns it with its
// record. Only the SHA-256 of its secret part is stored: print the token
// now, it cannot be shown again.
func (o *Actions) TokenCreate(ctx context.Context, name string) (string, store.APIToken, error) {
	if strings.ContainsFunc(name, func(c rune) bool { return c < ' ' || c == 0x7f }) || len(name) > 64 {
		return "", store.APIToken{}, fmt.Errorf("%w: --name must be at most 64 characters without control characters", ErrBadRequest)
	}
	var idb [6]byte
	var secret [32]byte
	rand.Read(idb[:]) // never fails (crypto/rand)
	rand.Read(secret[:])
	id := hex.EncodeToString(idb[:])
	sec := base64.RawURLEncoding.EncodeToString(secret[:])
	sum := sha256.Sum256([]byte(sec))
	t := store.APIToken{ID: id, Name: name, SecretHash: sum[:], CreatedAt: o.d.Now(), Owner: o.d.Owner}
	if err := o.d.Store.Write(ctx, func(tx *store.Tx) error { return tx.InsertAPIToken(t) }); err != nil {
		return "", store.APIToken{}, err
	}
	return tokenPrefix + id + "_" + sec, t, nil
}

// TokenList lists the owner's API tokens, revoked ones included, newest
// first; another owner's (on a shared store) are never listed.
func (o *Actions) TokenList(ctx context.Context) ([]store.APIToken, error) {
	return o.d.Store.APITokens(ctx, o.d.Owner)
}

// TokenRevoke revokes a token at once: a running `homard serve` refuses
// it on the next request.
func (o *Actions) TokenRevoke(ctx context.Context, id string) error {
	err := o.d.Store.Write(ctx, func(tx *store.Tx) error { return tx.RevokeAPIToken(id, o.d.Owner, o.d.Now()) })
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("revoke %s: %w", id, ErrNoToken)
	}
	return err
}

// TokenVerify reports whether token is a valid, unrevoked API token of
// the owner. The id part finds the row; the secret part's hash is
// compared in constant time. Another owner's token (several owners on one
// shared store) is refused: it would act as this owner. A valid token's
// last use is recorded, and a token made before owners were recorded
// becomes this owner's at its first use here.
func (o *Actions) TokenVerify(ctx context.Context, token string) (bool, error) {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return false, nil
	}
	id, sec, ok := strings.Cut(rest, "_")
	if !ok || len(id) != 12 || sec == "" {
		return false, nil
	}
	t, err := o.d.Store.APIToken(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	sum := sha256.Sum256([]byte(sec))
	if subtle.ConstantTimeCompare(sum[:], t.SecretHash) != 1 || !t.RevokedAt.IsZero() || (t.Owner != o.d.Owner && t.Owner != "") {
		return false, nil
	}
	// Record the use at most once a minute: it is a write, and a busy
	// client sends many requests. An unclaimed token is claimed now.
	if now := o.d.Now(); now.Sub(t.LastUsedAt) > time.Minute || t.Owner == "" {
		_ = o.d.Store.Write(ctx, func(tx *store.Tx) error { return tx.TouchAPIToken(id, o.d.Owner, now) }) // best effort
	}
	return true, nil
}
