// Package totp is the owner's second factor: a time-based one-time code
// (RFC 6238: 6 digits, 30 seconds, HMAC-SHA-1, as every authenticator app
// reads it) asked for before approvals above a blast level, so that a
// stolen API token or an open terminal is not enough to approve what the
// owner set aside for themselves.
//
// Setup prints the secret once, as an otpauth:// URI and a QR code; it is
// stored sealed under a key derived from the vault key and is never shown
// again. It becomes active when the owner types a first code from the app
// (Confirm). A code is accepted once: never again, and never for an
// older time step than one already used. Five wrong codes in 15 minutes
// refuse every code for the rest of those 15 minutes.
//
// Codes come from github.com/pquerna/otp and the terminal QR code from
// github.com/skip2/go-qrcode.
package totp

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"github.com/skip2/go-qrcode"

	"github.com/homard/homard/internal/store"
)

// Errors a person sees; each says what to do next.
var (
	ErrNotSetUp     = errors.New("no authenticator is set up: run `homard totp setup`")
	ErrPending      = errors.New("the authenticator is not confirmed yet: type a code from your app with `homard totp confirm CODE`")
	ErrAlreadySetUp = errors.New("an authenticator is already set up: `homard totp setup --force` replaces it (codes from the old one stop working)")
	ErrBadCode      = errors.New("wrong code: type the 6 digits your authenticator app shows now")
	ErrCodeUsed     = errors.New("this code was already used: wait for the next one (30 seconds)")
	ErrTooManyTries = errors.New("too many wrong codes: wait 15 minutes")
)

const (
	period    = 30 * time.Second
	digits    = otp.DigitsSix
	maxWrong  = 5
	wrongSpan = 15 * time.Minute
	// purpose is the vault-derived key's purpose.
	purpose = "totp"
)

// Service keeps owners' authenticators in the store.
type Service struct {
	Store *store.Store
	// Key returns the 32-byte key the secrets are sealed with
	// (secrets.Vault.DerivedKey("totp")).
	Key func(purpose string) ([]byte, error)
	// Issuer names homard in the app ("homard"; "homard (host)" helps
	// an owner with several).
	Issuer string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Enrollment is what setup shows once: never stored in clear, never shown
// again.
type Enrollment struct {
	URI string // otpauth://totp/…
	QR  string // the URI as a QR code of half-block characters
}

// Status is an owner's authenticator as `homard totp status` shows it.
type Status struct {
	State     string    `json:"state"` // "none", "pending" or "active"
	Created   time.Time `json:"created,omitzero"`
	Activated time.Time `json:"activated,omitzero"`
	LastUsed  time.Time `json:"last_used,omitzero"`
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Setup makes a new secret for owner, stored pending, and returns it to
// show once. An active one is replaced only with force.
func (s *Service) Setup(ctx context.Context, owner string, force bool) (Enrollment, error) {
	cur, _, err := s.Store.GetTOTP(ctx, owner)
	switch {
	case err == nil && cur.Active && !force:
		return Enrollment{}, ErrAlreadySetUp
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return Enrollment{}, err
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: s.Issuer, AccountName: owner, Period: uint(period / time.Second),
		Digits: digits, Algorithm: otp.AlgorithmSHA1, Rand: rand.Reader})
	if err != nil {
		return Enrollment{}, fmt.Errorf("totp: make a secret: %w", err)
	}
	nonce, box, err := s.seal(owner, key.Secret())
	if err != nil {
		return Enrollment{}, err
	}
	if err := s.Store.Write(ctx, func(tx *store.Tx) error {
		return tx.PutTOTP(store.TOTP{Owner: owner, Nonce: nonce, Box: box, Created: s.now()})
	}); err != nil {
		return Enrollment{}, err
	}
	qr, err := qrcode.New(key.URL(), qrcode.Medium)
	if err != nil {
		return Enrollment{}, fmt.Errorf("totp: QR code: %w", err)
	}
	return Enrollment{URI: key.URL(), QR: qr.ToSmallString(false)}, nil
}

// Confirm activates owner's pending authenticator with a first code.
func (s *Service) Confirm(ctx context.Context, owner, code string) error {
	return s.check(ctx, owner, code, false)
}

// Verify accepts code for owner's active authenticator once.
func (s *Service) Verify(ctx context.Context, owner, code string) error {
	return s.check(ctx, owner, code, true)
}

// Remove deletes owner's authenticator; an active one needs a valid code.
func (s *Service) Remove(ctx context.Context, owner, code string) error {
	cur, _, err := s.Store.GetTOTP(ctx, owner)
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotSetUp
	}
	if err != nil {
		return err
	}
	if cur.Active {
		if err := s.Verify(ctx, owner, code); err != nil {
			return err
		}
	}
	return s.Store.Write(ctx, func(tx *store.Tx) error { return tx.DeleteTOTP(owner) })
}

// Status reports owner's authenticator, never its secret.
func (s *Service) Status(ctx context.Context, owner string) (Status, error) {
	cur, used, err := s.Store.GetTOTP(ctx, owner)
	if errors.Is(err, store.ErrNotFound) {
		return Status{State: "none"}, nil
	}
	if err != nil {
		return Status{}, err
	}
	st := Status{State: "pending", Created: cur.Created, LastUsed: used}
	if cur.Active {
		st.State, st.Activated = "active", cur.Activated
	}
	return st, nil
}

// Active reports whether owner has an active authenticator.
func (s *Service) Active(ctx context.Context, owner string) (bool, error) {
	st, err := s.Status(ctx, owner)
	return st.State == "active", err
}

// check verifies code against owner's secret, active (or pending, to
// confirm it), and records its step; a wrong code is counted.
func (s *Service) check(ctx context.Context, owner, code string, active bool) error {
	cur, _, err := s.Store.GetTOTP(ctx, owner)
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotSetUp
	}
	if err != nil {
		return err
	}
	if active && !cur.Active {
		return ErrPending
	}
	now := s.now()
	if n, err := s.Store.WrongTOTPSince(ctx, owner, now.Add(-wrongSpan)); err != nil {
		return err
	} else if n >= maxWrong {
		return ErrTooManyTries
	}
	secret, err := s.open(owner, cur)
	if err != nil {
		return err
	}
	step, ok := match(secret, code, now)
	if !ok {
		// Counted in its own transaction: a refusal must not roll it back.
		if err := s.Store.Write(ctx, func(tx *store.Tx) error {
			_, err := tx.WrongTOTP(owner, now, now.Add(-wrongSpan))
			return err
		}); err != nil {
			return err
		}
		return ErrBadCode
	}
	return s.Store.Write(ctx, func(tx *store.Tx) error {
		if err := tx.UseTOTPStep(owner, step, now); errors.Is(err, store.ErrTOTPStepUsed) {
			return ErrCodeUsed
		} else if err != nil {
			return err
		}
		if !cur.Active {
			return tx.ActivateTOTP(owner, now)
		}
		return nil
	})
}

// match returns the time step code is valid for: the current one or its
// neighbours (a clock 30 seconds off either way still works).
func match(secret, code string, now time.Time) (int64, bool) {
	if len(code) != int(digits) {
		return 0, false
	}
	step := now.Unix() / int64(period/time.Second)
	for _, s := range []int64{step, step - 1, step + 1} {
		want, err := totp.GenerateCodeCustom(secret, time.Unix(s*int64(period/time.Second), 0), totp.ValidateOpts{
			Period: uint(period / time.Second), Digits: digits, Algorithm: otp.AlgorithmSHA1})
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return s, true
		}
	}
	return 0, false
}

// seal encrypts secret for owner with the derived key (AES-256-GCM, the
// owner as associated data: a box moved to another owner fails to open).
func (s *Service) seal(owner, secret string) (nonce, box []byte, err error) {
	aead, err := s.aead()
	if err != nil {
		return nil, nil, err
	}
	nonce = make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, nil, fmt.Errorf("totp: %w", err)
	}
	return nonce, aead.Seal(nil, nonce, []byte(secret), []byte("totp:"+owner)), nil
}

func (s *Service) open(owner string, t store.TOTP) (string, error) {
	aead, err := s.aead()
	if err != nil {
		return "", err
	}
	plain, err := aead.Open(nil, t.Nonce, t.Box, []byte("totp:"+owner))
	if err != nil {
		return "", errors.New("totp: the stored secret does not open with this vault's key; set it up again with `homard totp setup --force`")
	}
	return string(plain), nil
}

func (s *Service) aead() (cipher.AEAD, error) {
	k, err := s.Key(purpose)
	if err != nil {
		return nil, fmt.Errorf("totp: key: %w", err)
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, fmt.Errorf("totp: key: %w", err)
	}
	return cipher.NewGCM(block)
}
