package owner

import (
	"crypto/sha256"
	"encoding/hex"
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
	return withCodesFor(t, e, "high")
}

// withCodesFor is withCodes with permissions.totp = setting.
func withCodesFor(t *testing.T, e *env, setting string) func(time.Time) string {
	t.Helper()
	risk, reach, err := ParseCodeFrom(setting)
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	svc := &totpsvc.Service{Store: e.st, Key: func(string) ([]byte, error) { return key, nil }, Issuer: "homard", Now: func() time.Time { return e.now }}
	e.o = New(Deps{Owner: "alice", Store: e.st, Approvals: e.ap, Now: func() time.Time { return e.now }, TOTP: svc, CodeFrom: risk, CodeFromReach: reach})
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

// TestBlastClassApprovalNeedsACode: with permissions.totp = "network"
// the code follows the call's blast class, not its risk: a high-risk
// write is approved without a code (the twin), a low-risk fetch and a
// send need one, and a card stored without a class (before migration
// 0028) is read as the highest class and needs one too.
func TestBlastClassApprovalNeedsACode(t *testing.T) {
	e := newEnv(t, nil)
	code := withCodesFor(t, e, "network")
	ctx := t.Context()
	card := func(target string, risk policy.Risk, reach policy.Reach) approval.Approval {
		t.Helper()
		plan := []byte(`{"url":"` + target + `"}`)
		sum := sha256.Sum256(plan)
		a, err := e.ap.Request(ctx, approval.Binding{Tool: "http_get", PlanHash: hex.EncodeToString(sum[:]), Owner: "alice", Session: "s-alice"},
			approval.Card{Display: "fetch " + target, Plan: plan, Targets: []string{target}, Risk: risk, Reach: reach, Rule: "mode.smart", Reason: "asks"})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	write := card("notes/w.md", policy.RiskHigh, policy.ReachWrite)
	if e.o.NeedsCode(write) {
		t.Error("a high-risk write needs a code under totp = network")
	}
	if got, err := e.o.Answer(ctx, write.ID, channel.Once); err != nil || got.Status != approval.Approved {
		t.Fatalf("write without a code: %s, %v; want approved", got.Status, err)
	}
	for _, c := range []struct {
		name  string
		reach policy.Reach
	}{{"fetch", policy.ReachNetwork}, {"send", policy.ReachSend}, {"unrecorded", policy.ReachNone}} {
		a := card("https://example.com/"+c.name, policy.RiskLow, c.reach)
		if got, _ := e.o.Approval(ctx, a.ID); got.Reach != c.reach {
			t.Fatalf("%s: stored reach %v; want %v", c.name, got.Reach, c.reach)
		}
		if !e.o.NeedsCode(a) {
			t.Errorf("%s: a low-risk card of class %v needs no code under totp = network", c.name, c.reach)
		}
		if _, err := e.o.Answer(ctx, a.ID, channel.Once); !errors.Is(err, channel.ErrCodeNeeded) {
			t.Errorf("%s without a code: %v; want ErrCodeNeeded", c.name, err)
		}
		e.now = e.now.Add(30 * time.Second)
		if got, err := e.o.AnswerCode(ctx, a.ID, channel.Once, code(e.now)); err != nil || got.Status != approval.Approved {
			t.Fatalf("%s with a right code: %s, %v; want approved", c.name, got.Status, err)
		}
	}
}

// TestParseCodeFrom: permissions.totp takes off, a risk above low or a
// class above read, and nothing else.
func TestParseCodeFrom(t *testing.T) {
	for in, want := range map[string]struct {
		risk  policy.Risk
		reach policy.Reach
	}{"off": {}, "medium": {risk: policy.RiskMedium}, "critical": {risk: policy.RiskCritical},
		"write": {reach: policy.ReachWrite}, "network": {reach: policy.ReachNetwork}, "send": {reach: policy.ReachSend}} {
		risk, reach, err := ParseCodeFrom(in)
		if err != nil || risk != want.risk || reach != want.reach {
			t.Errorf("ParseCodeFrom(%q) = %v, %v, %v; want %v, %v", in, risk, reach, err, want.risk, want.reach)
		}
	}
	for _, in := range []string{"low", "read", "Network", "always"} {
		if _, _, err := ParseCodeFrom(in); err == nil {
			t.Errorf("ParseCodeFrom(%q) accepted", in)
		}
	}
}
