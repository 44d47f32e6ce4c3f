package approval

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
)

func TestPatterns(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []string
	}{
		{nil, nil},
		{[]string{}, nil},
		{[]string{"notes/a.md"}, []string{"notes/**"}},
		{[]string{"a.md"}, []string{"a.md"}},
		{[]string{"name:notes/a.md"}, []string{"name:notes/**"}},
		{[]string{"name:a.md"}, []string{"name:a.md"}},
		{[]string{"a/b/c.md", "a/b/d.md", "x.md"}, []string{"a/b/**", "x.md"}},
		{[]string{"*.md"}, []string{`\*.md`}},
		{[]string{"n[1]/a?.md"}, []string{`n\[1\]/**`}},
		{[]string{"**/a.md"}, []string{`\*\*/**`}},
		{[]string{"../etc/passwd"}, []string{"../etc/passwd"}},
		{[]string{"/etc/passwd"}, []string{"/etc/passwd"}},
		{[]string{"https://example.com"}, []string{"https://example.com"}},
		{[]string{"a//b"}, []string{"a//b"}},
		{[]string{"."}, []string{"."}},
	} {
		if got := Patterns(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Patterns(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestPatternsNeverWiden(t *testing.T) {
	// What a grant made from these targets must and must not cover.
	for _, tc := range []struct {
		targets []string
		covers  []string
		refuses []string
	}{
		{[]string{"notes/a.md"}, []string{"notes/a.md", "notes/b.md", "notes/x/y.md"}, []string{"a.md", "other/a.md", "notes", "notes/", "notes//x", "notes/../secret"}},
		{[]string{"a.md"}, []string{"a.md"}, []string{"b.md", "notes/a.md"}},
		{[]string{"*.md"}, []string{"*.md"}, []string{"a.md"}},
		{[]string{"n[1]/a.md"}, []string{"n[1]/b.md"}, []string{"n1/b.md"}},
		{[]string{"https://example.com"}, []string{"https://example.com"}, []string{"https://evil.example", "https://example.com/x"}},
		{[]string{"name:notes/a.md"}, []string{"name:notes/b.md"}, []string{"name:secrets/b.md", "notes/b.md"}},
	} {
		g := Grant{Patterns: Patterns(tc.targets)}
		for _, c := range tc.covers {
			if !g.Covers([]string{c}) {
				t.Errorf("grant from %q (patterns %q) does not cover %q", tc.targets, g.Patterns, c)
			}
		}
		for _, r := range tc.refuses {
			if g.Covers([]string{r}) {
				t.Errorf("grant from %q (patterns %q) covers %q", tc.targets, g.Patterns, r)
			}
		}
	}
}

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		patterns, targets []string
		want              bool
	}{
		{nil, nil, true},
		{nil, []string{"a.md"}, false},
		{[]string{"notes/**"}, nil, false},
		{[]string{"notes/**"}, []string{"notes/a", "notes/b/c"}, true},
		{[]string{"notes/**"}, []string{"notes/a", "other/b"}, false},
		{[]string{"notes/**", "other/**"}, []string{"notes/a", "other/b"}, true},
	} {
		if got := (Grant{Patterns: tc.patterns}).Covers(tc.targets); got != tc.want {
			t.Errorf("Grant{%q}.Covers(%q) = %v; want %v", tc.patterns, tc.targets, got, tc.want)
		}
	}
}

func TestSessionAndAlwaysGrants(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	sess, _ := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
	if _, err := e.svc.Approve(ctx, sess.ID, "alice", ScopeSession); err != nil {
		t.Fatal(err)
	}
	always, _ := e.request(t, "alice", "s1", "docs/x/a.md", policy.RiskHigh)
	if _, err := e.svc.Approve(ctx, always.ID, "alice", ScopeAlways); err != nil {
		t.Fatal(err)
	}
	gs, err := e.svc.Grants(ctx, "alice")
	if err != nil || len(gs) != 2 {
		t.Fatalf("Grants = %d, %v; want 2", len(gs), err)
	}
	byScope := map[Scope]Grant{gs[0].Scope: gs[0], gs[1].Scope: gs[1]}
	if g := byScope[ScopeSession]; g.Session != "s1" || !reflect.DeepEqual(g.Patterns, []string{"notes/**"}) ||
		g.MaxRisk != policy.RiskMedium || !g.ExpiresAt.Equal(t0.Add(12*time.Hour)) || g.ApprovalID != sess.ID {
		t.Errorf("session grant = %+v", g)
	}
	if g := byScope[ScopeAlways]; g.Session != "" || !reflect.DeepEqual(g.Patterns, []string{"docs/x/**"}) ||
		g.MaxRisk != policy.RiskHigh || !g.ExpiresAt.Equal(t0.Add(720*time.Hour)) {
		t.Errorf("always grant = %+v", g)
	}

	type q struct {
		owner, session, tool string
		targets              []string
		risk                 policy.Risk
	}
	match := func(in q) (Grant, bool) {
		t.Helper()
		g, ok, err := e.svc.MatchGrant(ctx, in.owner, in.session, in.tool, in.targets, in.risk)
		if err != nil {
			t.Fatalf("MatchGrant(%+v): %v", in, err)
		}
		return g, ok
	}
	const w = "write_file"
	for _, tc := range []struct {
		name string
		in   q
		want Scope // "" means no match
	}{
		{"session: sibling file", q{"alice", "s1", w, []string{"notes/b.md"}, policy.RiskMedium}, ScopeSession},
		{"session: deeper file", q{"alice", "s1", w, []string{"notes/x/y.md"}, policy.RiskLow}, ScopeSession},
		{"session: other session", q{"alice", "s2", w, []string{"notes/b.md"}, policy.RiskMedium}, ""},
		{"session: outside pattern", q{"alice", "s1", w, []string{"secrets/b.md"}, policy.RiskMedium}, ""},
		{"session: one target outside", q{"alice", "s1", w, []string{"notes/b.md", "b.md"}, policy.RiskMedium}, ""},
		{"session: higher risk", q{"alice", "s1", w, []string{"notes/b.md"}, policy.RiskHigh}, ""},
		{"no targets", q{"alice", "s1", w, nil, policy.RiskLow}, ""},
		{"other tool", q{"alice", "s1", "delete_file", []string{"notes/b.md"}, policy.RiskLow}, ""},
		{"other owner", q{"mallory", "s1", w, []string{"notes/b.md"}, policy.RiskLow}, ""},
		{"critical", q{"alice", "s1", w, []string{"notes/b.md"}, policy.RiskCritical}, ""},
		{"invalid risk", q{"alice", "s1", w, []string{"notes/b.md"}, 0}, ""},
		{"always: any session", q{"alice", "s7", w, []string{"docs/x/b.md"}, policy.RiskHigh}, ScopeAlways},
		{"always: sibling folder", q{"alice", "s7", w, []string{"docs/y/b.md"}, policy.RiskLow}, ""},
	} {
		g, ok := match(tc.in)
		if got := map[bool]Scope{true: g.Scope}[ok]; got != tc.want {
			t.Errorf("%s: MatchGrant = %q (%v); want %q", tc.name, got, ok, tc.want)
		}
	}

	// Expiry: the session grant ends after 12h, the always grant lives on.
	e.clock.Advance(12 * time.Hour)
	if _, ok := match(q{"alice", "s1", w, []string{"notes/b.md"}, policy.RiskLow}); ok {
		t.Error("session grant matched after SessionTTL")
	}
	if _, ok := match(q{"alice", "s1", w, []string{"docs/x/b.md"}, policy.RiskLow}); !ok {
		t.Error("always grant did not match after 12h")
	}
	// Revocation.
	if err := e.svc.RevokeGrant(ctx, byScope[ScopeAlways].ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := match(q{"alice", "s1", w, []string{"docs/x/b.md"}, policy.RiskLow}); ok {
		t.Error("always grant matched after RevokeGrant")
	}
	if err := e.svc.RevokeGrant(ctx, "gr_nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("RevokeGrant(unknown) = %v; want ErrNotFound", err)
	}
}

func TestAlwaysGrantExpires(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	a, _ := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
	if _, err := e.svc.Approve(ctx, a.ID, "alice", ScopeAlways); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(720*time.Hour - time.Nanosecond)
	if _, ok, _ := e.svc.MatchGrant(ctx, "alice", "s2", "write_file", []string{"notes/z"}, policy.RiskMedium); !ok {
		t.Error("always grant did not match just before AlwaysTTL")
	}
	e.clock.Advance(time.Nanosecond)
	if _, ok, _ := e.svc.MatchGrant(ctx, "alice", "s2", "write_file", []string{"notes/z"}, policy.RiskMedium); ok {
		t.Error("always grant matched at AlwaysTTL")
	}
}

func TestTargetlessGrantStaysTargetless(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	plan, hash := planFor(`{"argv":["/usr/bin/date"]}`)
	b := Binding{Tool: "exec", PlanHash: hash, Owner: "alice", Session: "s1"}
	a, err := e.svc.Request(ctx, b, Card{Display: "date", Plan: plan, Risk: policy.RiskMedium})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Approve(ctx, a.ID, "alice", ScopeSession); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := e.svc.MatchGrant(ctx, "alice", "s1", "exec", nil, policy.RiskMedium); !ok {
		t.Error("tool-wide grant does not cover a targetless plan")
	}
	if _, ok, _ := e.svc.MatchGrant(ctx, "alice", "s1", "exec", []string{"secrets/key"}, policy.RiskMedium); ok {
		t.Error("tool-wide grant covers a plan with targets")
	}
}

func TestCriticalNeverMatchesEvenWithAStoredGrant(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	a, _ := e.request(t, "alice", "s1", "notes/a.md", policy.RiskCritical)
	// A grant no Service would create, written straight to the store.
	err := e.st.Write(ctx, func(tx *store.Tx) error {
		return tx.InsertGrant(store.Grant{ID: "gr_forged", Owner: "alice", Tool: "write_file",
			Patterns: []string{"notes/**"}, MaxRisk: int(policy.RiskCritical), Scope: "always",
			ApprovalID: a.ID, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []policy.Risk{policy.RiskCritical, policy.RiskHigh} {
		if _, ok, _ := e.svc.MatchGrant(ctx, "alice", "s1", "write_file", []string{"notes/b.md"}, r); ok {
			t.Errorf("MatchGrant(risk %v) used a grant whose max risk is critical", r)
		}
	}
}

// TestApprovalCovers: what a card says a session or always answer covers
// is what the grant made of it covers: a write's folder, a fetch's exact
// URL, nothing with a path for a plan without targets.
func TestApprovalCovers(t *testing.T) {
	for _, c := range []struct {
		targets []string
		want    string
	}{
		{[]string{"docs/notes.md"}, "docs/**"},
		{[]string{"notes.md"}, "notes.md"},
		{[]string{"b/x", "a/y"}, "a/** b/**"},
		{nil, "calls without a path"},
	} {
		a := Approval{Targets: c.targets}
		if got := a.Covers(); got != c.want {
			t.Errorf("Covers(%q) = %q; want %q", c.targets, got, c.want)
		}
		g := Grant{Patterns: Patterns(c.targets)}
		if len(c.targets) > 0 && !g.Covers(c.targets) {
			t.Errorf("the grant made of %q does not cover them", c.targets)
		}
	}
}
