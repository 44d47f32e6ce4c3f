package owner

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/policy"
	totpsvc "github.com/homard/homard/internal/totp"
)

// withCodes turns permissions.totp = "high" on for e, with an
// authenticator set up and confirmed; it returns what the owner's app
// shows at a time.
func withCodes(t *testing.T, e *env) func(time.Time) string {
	t.Helper()
	key := make([]byte, 32)
	svc := &totpsvc.Service{Store: e.st, Key: func(string) ([]byte, error) { return key, nil }, Issuer: "homard", Now: func() time.Time { return e.now }}
	e.o = New(Deps{Owner: "alice", Store: e.st, Approvals: e.ap, Now: func() time.Time { return e.now }, TOTP: svc, CodeFrom: policy.RiskHigh})
	en, err := svc.Setup(t.Context(), "alice", false)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(en.URI)
	code := func(at time.Time) string {
		c, err := totp.GenerateCodeCustom(u.Query().Get("secret"), at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if err := svc.Confirm(t.Context(), "alice", code(e.now)); err != nil {
		t.Fatal(err)
	}
	e.now = e.now.Add(30 * time.Second)
	return code
}

// TestHighRiskApprovalNeedsACode: with permissions.totp = "high", a high
// or critical card is approved only with a right, unused code — missing,
// wrong and reused codes are refused and leave it pending, on the facade
// and through the channel view (web); Deny needs none; a medium card (the
// twin) is approved without one.
func TestHighRiskApprovalNeedsACode(t *testing.T) {
	e := newEnv(t, nil)
	code := withCodes(t, e)
	ctx := t.Context()
	high := e.ask(t, "alice", "notes/high.md", policy.RiskHigh)
	if !e.o.NeedsCode(high) {
		t.Fatal("a high card does not need a code")
	}
	for _, c := range []string{"", "000000"} {
		if _, err := e.o.AnswerCode(ctx, high.ID, channel.Once, c); !errors.Is(err, channel.ErrCodeNeeded) {
			t.Errorf("code %q: %v; want ErrCodeNeeded", c, err)
		}
		if got, _ := e.o.Approval(ctx, high.ID); got.Status != approval.Pending {
			t.Fatalf("after code %q the card is %s; want pending", c, got.Status)
		}
	}
	right := code(e.now)
	if got, err := e.o.AnswerCode(ctx, high.ID, channel.Once, right); err != nil || got.Status != approval.Approved {
		t.Fatalf("right code: %s, %v; want approved", got.Status, err)
	}
	critical := e.ask(t, "alice", "notes/critical.md", policy.RiskCritical)
	if _, err := e.o.Admin().Answer(ctx, critical.ID, channel.Once, right); !errors.Is(err, channel.ErrCodeNeeded) || !errors.Is(err, totpsvc.ErrCodeUsed) {
		t.Errorf("the same code on another card: %v; want ErrCodeNeeded (code used)", err)
	}
	e.now = e.now.Add(30 * time.Second)
	if got, err := e.o.Admin().Answer(ctx, critical.ID, channel.Once, code(e.now)); err != nil || got.Status != string(approval.Approved) {
		t.Fatalf("next code through the channel view: %+v, %v; want approved", got, err)
	}
	deny := e.ask(t, "alice", "notes/deny.md", policy.RiskCritical)
	if err := e.o.Deny(ctx, deny.ID); err != nil {
		t.Errorf("deny without a code: %v", err)
	}
	medium := e.ask(t, "alice", "notes/medium.md", policy.RiskMedium)
	if e.o.NeedsCode(medium) {
		t.Error("a medium card needs a code")
	}
	if got, err := e.o.Answer(ctx, medium.ID, channel.Once); err != nil || got.Status != approval.Approved {
		t.Fatalf("medium card without a code: %s, %v; want approved", got.Status, err)
	}
}

// TestCodeNeededWithoutAuthenticator: permissions.totp on with no
// authenticator set up refuses the approval (fails closed) and says how
// to set one up.
func TestCodeNeededWithoutAuthenticator(t *testing.T) {
	e := newEnv(t, nil)
	svc := &totpsvc.Service{Store: e.st, Key: func(string) ([]byte, error) { return make([]byte, 32), nil }, Now: func() time.Time { return e.now }}
	e.o = New(Deps{Owner: "alice", Store: e.st, Approvals: e.ap, Now: func() time.Time { return e.now }, TOTP: svc, CodeFrom: policy.RiskHigh})
	a := e.ask(t, "alice", "notes/h.md", policy.RiskHigh)
	if _, err := e.o.AnswerCode(t.Context(), a.ID, channel.Once, "123456"); !errors.Is(err, channel.ErrCodeNeeded) || !errors.Is(err, totpsvc.ErrNotSetUp) {
		t.Fatalf("approve with no authenticator: %v; want ErrCodeNeeded (not set up)", err)
	}
}
