package approval

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/homard/homard/internal/policy"
)

// approveN approves, once, a write of each target in turn.
func (e *env) approveN(t *testing.T, owner string, risk policy.Risk, targets ...string) {
	t.Helper()
	for _, target := range targets {
		a, _ := e.request(t, owner, "s-"+owner, target, risk)
		if _, err := e.svc.Approve(t.Context(), a.ID, owner, ScopeOnce); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Minute)
	}
}

// TestSuggestFromRepeatedApprovals: three once-approvals of writes into
// notes/ in a week make one suggestion — a grant on notes/** no riskier
// than they were — and accepting it makes an expiring always grant that
// covers the next write there, after which it is no longer suggested.
// Not suggested: two approvals, critical calls, denials, another owner's
// approvals, and approvals older than the window.
func TestSuggestFromRepeatedApprovals(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	e.approveN(t, "alice", policy.RiskMedium, "notes/a.md", "notes/b.md")
	e.approveN(t, "alice", policy.RiskHigh, "notes/c.md")
	e.approveN(t, "alice", policy.RiskMedium, "src/a.go", "src/b.go") // two: not enough
	e.approveN(t, "alice", policy.RiskCritical, "bin/a", "bin/b", "bin/c")
	e.approveN(t, "bob", policy.RiskMedium, "src/c.go") // another owner's
	for _, target := range []string{"tmp/a", "tmp/b", "tmp/c"} {
		a, _ := e.request(t, "alice", "s-alice", target, policy.RiskLow)
		if _, err := e.svc.Deny(ctx, a.ID, "alice"); err != nil {
			t.Fatal(err)
		}
	}
	list, err := e.svc.Suggest(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Tool != "write_file" || !reflect.DeepEqual(list[0].Patterns, []string{"notes/**"}) ||
		list[0].Count != 3 || list[0].MaxRisk != policy.RiskHigh {
		t.Fatalf("suggestions %+v; want one: write_file on notes/**, 3 approvals, up to high", list)
	}
	if _, err := e.svc.AcceptSuggestion(ctx, "alice", "2"); !errors.Is(err, ErrNoSuggestion) {
		t.Errorf("accept 2 of 1: %v; want ErrNoSuggestion", err)
	}
	if _, err := e.svc.AcceptSuggestion(ctx, "bob", list[0].ID); !errors.Is(err, ErrNoSuggestion) {
		t.Errorf("bob accepting alice's suggestion: %v; want ErrNoSuggestion", err)
	}
	g, err := e.svc.AcceptSuggestion(ctx, "alice", "1")
	if err != nil {
		t.Fatal(err)
	}
	if g.Scope != ScopeAlways || !g.ExpiresAt.Equal(e.clock.Now().Add(SuggestTTL)) || g.MaxRisk != policy.RiskHigh {
		t.Errorf("grant %+v; want always, expiring in %v, up to high", g, SuggestTTL)
	}
	if _, ok, err := e.svc.MatchGrant(ctx, "alice", "another", "write_file", []string{"notes/d.md"}, policy.RiskMedium); err != nil || !ok {
		t.Errorf("the accepted grant does not cover the next write into notes/: %v, %v", ok, err)
	}
	if _, ok, _ := e.svc.MatchGrant(ctx, "alice", "another", "write_file", []string{"src/d.go"}, policy.RiskMedium); ok {
		t.Error("the accepted grant covers src/")
	}
	if list, _ := e.svc.Suggest(ctx, "alice"); len(list) != 0 {
		t.Errorf("after accepting, suggestions %+v; want none (the grant covers it)", list)
	}
	e.approveN(t, "alice", policy.RiskMedium, "src/c.go") // the third src/ approval, a week later
	e.clock.Advance(SuggestWindow)
	if list, _ := e.svc.Suggest(ctx, "alice"); len(list) != 0 {
		t.Errorf("a week on: %+v; want none (the older src/ approvals aged out)", list)
	}
}
