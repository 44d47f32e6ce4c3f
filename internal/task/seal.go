package task

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/homard/homard/internal/store"
)

// KeyPurpose is the purpose to pass to secrets.Vault.DerivedKey for the
// key that seals task bodies.
const KeyPurpose = "tasks"

// minKey is the shortest sealing key accepted: a derived key has 32 bytes.
const minKey = 32

// Seal returns the hex HMAC-SHA-256 of the body's canonical form under
// key. The body must Validate: an invalid body is never approved.
func Seal(key []byte, b Body) (string, error) {
	if err := b.Validate(); err != nil {
		return "", err
	}
	c, err := b.Canonical()
	if err != nil {
		return "", err
	}
	return mac(key, c)
}

func mac(key, canonical []byte) (string, error) {
	if len(key) < minKey {
		return "", fmt.Errorf("seal task body: the key has %d bytes; want %d (secrets.Vault.DerivedKey)", len(key), minKey)
	}
	m := hmac.New(sha256.New, key)
	m.Write(canonical)
	return hex.EncodeToString(m.Sum(nil)), nil
}

// Verify reports whether sealed is the body's seal under key, comparing in
// constant time: ErrNotApproved when there is no seal, ErrBodyChanged
// when it does not match.
func Verify(key []byte, b Body, sealed string) error {
	if sealed == "" {
		return ErrNotApproved
	}
	c, err := b.Canonical()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBodyChanged, err)
	}
	return verify(key, c, sealed)
}

func verify(key, canonical []byte, sealed string) error {
	want, err := mac(key, canonical)
	if err != nil {
		return err
	}
	if !hmac.Equal([]byte(want), []byte(sealed)) {
		return fmt.Errorf("%w: the seal does not match the body", ErrBodyChanged)
	}
	return nil
}

// Hash is the SHA-256 of the body's canonical form, in hex: the "body
// hash" shown when a task is added and approved, so the owner can tell
// two versions apart. Unlike the seal it is not secret and proves nothing.
func Hash(b Body) (string, error) {
	c, err := b.Canonical()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// Check is the check made before every run of the task in row, with key
// from the vault: the task is approved; its stored body decodes, is in
// canonical form byte for byte, names this row's id, owner and name, and
// carries a seal that holds; and its sealed expiry is after now. It
// returns the body to run, or an error wrapping ErrNotApproved,
// ErrBodyChanged or ErrExpired with the reason for the audit.
func Check(key []byte, row store.Task, now time.Time) (Body, error) {
	if row.Status == store.TaskPending || row.Status == store.TaskRemoved || row.MAC == "" {
		return Body{}, fmt.Errorf("check task %s: %w: it is %s", row.ID, ErrNotApproved, row.Status)
	}
	b, err := Decode(row.Body)
	if err != nil {
		return Body{}, fmt.Errorf("check task %s: %w: %v", row.ID, ErrBodyChanged, err)
	}
	c, err := b.Canonical()
	if err != nil {
		return Body{}, fmt.Errorf("check task %s: %w: %v", row.ID, ErrBodyChanged, err)
	}
	if !bytes.Equal(c, row.Body) {
		return Body{}, fmt.Errorf("check task %s: %w: the stored body is not in canonical form", row.ID, ErrBodyChanged)
	}
	if err := verify(key, c, row.MAC); err != nil {
		return Body{}, fmt.Errorf("check task %s: %w", row.ID, err)
	}
	// The seal holds: the body is what the owner approved. The row's
	// own columns must agree with it, or a sealed body was moved.
	if b.ID != row.ID || b.Owner != row.Owner || b.Name != row.Name {
		return Body{}, fmt.Errorf("check task %s: %w: the body belongs to task %s of %s", row.ID, ErrBodyChanged, b.ID, b.Owner)
	}
	if err := b.Validate(); err != nil {
		return Body{}, fmt.Errorf("check task %s: %w: %v", row.ID, ErrBodyChanged, err)
	}
	if !now.Before(b.Expires) {
		return Body{}, fmt.Errorf("check task %s: %w: on %s", row.ID, ErrExpired, b.Expires.Format(time.RFC3339))
	}
	return b, nil
}
