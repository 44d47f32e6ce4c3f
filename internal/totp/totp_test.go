package totp

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/homard/homard/internal/store/storetest"
)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newService(t *testing.T) (*Service, *clock) {
	t.Helper()
	st := storetest.Open(t)
	c := &clock{time.Unix(1_800_000_000, 0)}
	key := make([]byte, 32)
	return &Service{Store: st, Key: func(string) ([]byte, error) { return key, nil }, Issuer: "homard", Now: c.now}, c
}

// codeAt is what the owner's app shows at t for the enrollment's URI.
func codeAt(t *testing.T, e Enrollment, at time.Time) string {
	t.Helper()
	u, err := url.Parse(e.URI)
	if err != nil {
		t.Fatal(err)
	}
	code, err := totp.GenerateCodeCustom(u.Query().Get("secret"), at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return code
}

func setUp(t *testing.T, s *Service, c *clock) Enrollment {
	t.Helper()
	ctx := context.Background()
	e, err := s.Setup(ctx, "alice", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Confirm(ctx, "alice", codeAt(t, e, c.t)); err != nil {
		t.Fatalf("confirm: %v", err)
	}
	c.t = c.t.Add(30 * time.Second) // the next code
	return e
}

// TestSetupShowsTheSecretOnce: setup returns an otpauth URI and a QR code,
// the stored row holds no clear secret, status never shows it, and a
// second setup is refused without --force.
func TestSetupShowsTheSecretOnce(t *testing.T) {
	s, c := newService(t)
	ctx := context.Background()
	e := setUp(t, s, c)
	u, _ := url.Parse(e.URI)
	secret := u.Query().Get("secret")
	if u.Scheme != "otpauth" || u.Host != "totp" || len(secret) < 16 || !strings.Contains(e.QR, "█") {
		t.Fatalf("enrollment %q / QR %d bytes; want an otpauth://totp URI and a QR code", e.URI, len(e.QR))
	}
	row, _, err := s.Store.GetTOTP(ctx, "alice")
	if err != nil || strings.Contains(string(row.Box), secret) || !row.Active {
		t.Fatalf("stored %+v, %v: want active, the secret sealed", row, err)
	}
	st, err := s.Status(ctx, "alice")
	if err != nil || st.State != "active" || st.Activated.IsZero() || st.LastUsed.IsZero() {
		t.Fatalf("status %+v, %v", st, err)
	}
	if _, err := s.Setup(ctx, "alice", false); !errors.Is(err, ErrAlreadySetUp) {
		t.Fatalf("second setup: %v; want ErrAlreadySetUp", err)
	}
	e2, err := s.Setup(ctx, "alice", true)
	if err != nil || e2.URI == e.URI {
		t.Fatalf("forced setup: %v (same URI: %v)", err, e2.URI == e.URI)
	}
	if err := s.Verify(ctx, "alice", codeAt(t, e2, c.t)); !errors.Is(err, ErrPending) {
		t.Fatalf("verify before confirming the new one: %v; want ErrPending", err)
	}
}

// TestCodesAcceptedOnce: a right code is accepted once; the same code
// again, and an older step's code after a newer one, are refused; a wrong
// code is refused; the twin, the next step's code, is accepted.
func TestCodesAcceptedOnce(t *testing.T) {
	s, c := newService(t)
	ctx := context.Background()
	e := setUp(t, s, c)
	now := codeAt(t, e, c.t)
	if err := s.Verify(ctx, "alice", now); err != nil {
		t.Fatalf("a right code: %v", err)
	}
	if err := s.Verify(ctx, "alice", now); !errors.Is(err, ErrCodeUsed) {
		t.Fatalf("the same code again: %v; want ErrCodeUsed", err)
	}
	c.t = c.t.Add(30 * time.Second)
	if err := s.Verify(ctx, "alice", codeAt(t, e, c.t.Add(-60*time.Second))); !errors.Is(err, ErrBadCode) {
		t.Fatalf("a code two steps old: %v; want ErrBadCode", err)
	}
	next := codeAt(t, e, c.t)
	if err := s.Verify(ctx, "alice", next); err != nil {
		t.Fatalf("the next step's code: %v", err)
	}
	c.t = c.t.Add(30 * time.Second)
	// One step behind is within the skew, but older than the step used.
	if err := s.Verify(ctx, "alice", codeAt(t, e, c.t.Add(-30*time.Second))); !errors.Is(err, ErrCodeUsed) {
		t.Fatalf("an older step after a newer one: %v; want ErrCodeUsed", err)
	}
	for _, bad := range []string{"", "12345", "1234567", "abcdef"} {
		if err := s.Verify(ctx, "alice", bad); !errors.Is(err, ErrBadCode) {
			t.Errorf("code %q: %v; want ErrBadCode", bad, err)
		}
	}
}

// TestWrongCodesLockOut: five wrong codes in 15 minutes refuse even the
// right one; 15 minutes later it works.
func TestWrongCodesLockOut(t *testing.T) {
	s, c := newService(t)
	ctx := context.Background()
	e := setUp(t, s, c)
	for range maxWrong {
		if err := s.Verify(ctx, "alice", "000000"); !errors.Is(err, ErrBadCode) && !errors.Is(err, ErrCodeUsed) {
			t.Fatalf("wrong code: %v", err)
		}
	}
	if err := s.Verify(ctx, "alice", codeAt(t, e, c.t)); !errors.Is(err, ErrTooManyTries) {
		t.Fatalf("right code after five wrong: %v; want ErrTooManyTries", err)
	}
	c.t = c.t.Add(wrongSpan + time.Minute)
	if err := s.Verify(ctx, "alice", codeAt(t, e, c.t)); err != nil {
		t.Fatalf("right code after the wait: %v", err)
	}
}

// TestNotSetUpAndRemove: with nothing set up every check says how to set
// it up; removing an active one needs a right code.
func TestNotSetUpAndRemove(t *testing.T) {
	s, c := newService(t)
	ctx := context.Background()
	if err := s.Verify(ctx, "alice", "123456"); !errors.Is(err, ErrNotSetUp) {
		t.Fatalf("verify with none: %v", err)
	}
	if st, err := s.Status(ctx, "alice"); err != nil || st.State != "none" {
		t.Fatalf("status with none: %+v, %v", st, err)
	}
	e := setUp(t, s, c)
	if err := s.Remove(ctx, "alice", "000000"); !errors.Is(err, ErrBadCode) && !errors.Is(err, ErrCodeUsed) {
		t.Fatalf("remove with a wrong code: %v", err)
	}
	if err := s.Remove(ctx, "alice", codeAt(t, e, c.t)); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if st, _ := s.Status(ctx, "alice"); st.State != "none" {
		t.Fatalf("after remove: %+v", st)
	}
}
