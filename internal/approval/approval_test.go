package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/store/storetest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is a settable time source shared by goroutines.
type clock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

type env struct {
	svc   *Service
	st    *store.Store
	clock *clock
	path  string // where the store lives (storetest.Where), to reopen it
}

func newEnv(t *testing.T) *env {
	t.Helper()
	path := storetest.Where(t)
	st, err := store.OpenURL(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := &clock{t: t0}
	return &env{svc: New(st, Options{Now: c.Now}), st: st, clock: c, path: path}
}

func planFor(body string) ([]byte, string) {
	p := []byte(`{"body":` + body + `}`)
	sum := sha256.Sum256(p)
	return p, hex.EncodeToString(sum[:])
}

// request makes a pending approval for a write of target in session.
func (e *env) request(t *testing.T, owner, session, target string, risk policy.Risk) (Approval, Binding) {
	t.Helper()
	plan, hash := planFor(`{"path":"` + target + `"}`)
	b := Binding{Tool: "write_file", PlanHash: hash, Owner: owner, Session: session}
	a, err := e.svc.Request(t.Context(), b, Card{Display: "write " + target, Plan: plan, Targets: []string{target}, Risk: risk, Rule: "mode.safe", Reason: "safe mode asks"})
	if err != nil {
		t.Fatalf("Request: %v", err)
	}
	return a, b
}

func TestRequestReusesPendingWithSameBinding(t *testing.T) {
	e := newEnv(t)
	a1, b := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
	if a1.Status != Pending || len(a1.ID) != len("ap_")+16 || !a1.ExpiresAt.Equal(t0.Add(30*time.Minute)) {
		t.Errorf("new approval = %+v; want pending, ap_ + 16 hex, expiring after 30m", a1)
	}
	a2, _ := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
	if a2.ID != a1.ID {
		t.Errorf("second Request = %s; want the pending %s", a2.ID, a1.ID)
	}
	other, _ := e.request(t, "alice", "s1", "notes/b.md", policy.RiskMedium)
	if other.ID == a1.ID {
		t.Error("a different plan reused the approval of another plan")
	}
	otherSession, _ := e.request(t, "alice", "s2", "notes/a.md", policy.RiskMedium)
	if otherSession.ID == a1.ID {
		t.Error("another session reused the approval")
	}
	e.clock.Advance(30 * time.Minute)
	a3, _ := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
	if a3.ID == a1.ID {
		t.Error("an expired pending approval was reused")
	}
	got, err := e.svc.Get(t.Context(), a1.ID)
	if err != nil || got.Status != Expired || got.Binding != b {
		t.Errorf("Get(expired) = %+v, %v; want status expired with the same binding", got, err)
	}
}

func TestRequestValidates(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	plan, hash := planFor(`{"x":1}`)
	good := Binding{Tool: "t", PlanHash: hash, Owner: "alice", Session: "s1"}
	for name, tc := range map[string]struct {
		b    Binding
		plan []byte
		risk policy.Risk
		want error
	}{
		"no session":    {Binding{Tool: "t", PlanHash: hash, Owner: "alice"}, plan, policy.RiskLow, ErrInvalidRequest},
		"no owner":      {Binding{Tool: "t", PlanHash: hash, Session: "s1"}, plan, policy.RiskLow, ErrInvalidRequest},
		"bad risk":      {good, plan, 0, ErrInvalidRequest},
		"hash mismatch": {good, []byte(`{"x":2}`), policy.RiskLow, ErrPlanMismatch},
	} {
		if _, err := e.svc.Request(ctx, tc.b, Card{Plan: tc.plan, Risk: tc.risk}); !errors.Is(err, tc.want) {
			t.Errorf("Request(%s) = %v; want %v", name, err, tc.want)
		}
	}
	if _, err := e.svc.Request(ctx, good, Card{Plan: plan, Risk: policy.RiskLow}); err != nil {
		t.Fatal(err)
	}
	mallory := good
	mallory.Owner = "mallory"
	if _, err := e.svc.Request(ctx, mallory, Card{Plan: plan, Risk: policy.RiskLow}); !errors.Is(err, store.ErrSessionOwner) {
		t.Errorf("Request in alice's session by mallory = %v; want store.ErrSessionOwner", err)
	}
}

func TestApproveThenConsumeOnce(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	a, b := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
	if _, ok, err := e.svc.Consume(ctx, b); ok || err != nil {
		t.Fatalf("Consume(pending) = %v, %v; want false, nil", ok, err)
	}
	e.clock.Advance(29 * time.Minute)
	got, err := e.svc.Approve(ctx, a.ID, "alice", ScopeOnce)
	if err != nil {
		t.Fatalf("Approve: %v", err)
	}
	if got.Status != Approved || got.Scope != ScopeOnce || got.DecidedBy != "alice" || !got.DecidedAt.Equal(e.clock.Now()) {
		t.Errorf("Approve = %+v", got)
	}
	// Consumable for TTL after the decision, past the original expiry.
	e.clock.Advance(2 * time.Minute)
	c, ok, err := e.svc.Consume(ctx, b)
	if err != nil || !ok || c.ID != a.ID || c.Status != Consumed {
		t.Fatalf("Consume = %+v, %v, %v; want %s consumed", c, ok, err, a.ID)
	}
	if _, ok, err := e.svc.Consume(ctx, b); ok || err != nil {
		t.Errorf("second Consume = %v, %v; want false, nil (single use)", ok, err)
	}
	if _, err := e.svc.Approve(ctx, a.ID, "alice", ScopeOnce); !errors.Is(err, ErrAlreadyDecided) {
		t.Errorf("Approve after consume = %v; want ErrAlreadyDecided", err)
	}
}

func TestApprovedExpiresUnconsumed(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	a, b := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
	if _, err := e.svc.Approve(ctx, a.ID, "alice", ScopeOnce); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(30 * time.Minute)
	if _, ok, err := e.svc.Consume(ctx, b); ok || err != nil {
		t.Errorf("Consume after expiry = %v, %v; want false, nil", ok, err)
	}
	if got, _ := e.svc.Get(ctx, a.ID); got.Status != Expired {
		t.Errorf("Get = %s; want expired", got.Status)
	}
}

func TestDecideRefusals(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	replay, _ := e.request(t, "alice", "s1", "a.md", policy.RiskMedium)
	if _, err := e.svc.Approve(ctx, replay.ID, "alice", ScopeOnce); err != nil {
		t.Fatal(err)
	}
	denied, _ := e.request(t, "alice", "s1", "b.md", policy.RiskMedium)
	if got, err := e.svc.Deny(ctx, denied.ID, "alice"); err != nil || got.Status != Denied || got.Scope != "" {
		t.Fatalf("Deny = %+v, %v; want denied", got, err)
	}
	foreign, _ := e.request(t, "alice", "s1", "c.md", policy.RiskMedium)
	critical, _ := e.request(t, "alice", "s1", "d.md", policy.RiskCritical)
	expiring, _ := e.request(t, "alice", "s1", "e.md", policy.RiskMedium)

	for _, tc := range []struct {
		name, id, who string
		scope         Scope
		deny          bool
		want          error
	}{
		{"replayed approve", replay.ID, "alice", ScopeOnce, false, ErrAlreadyDecided},
		{"deny after approve", replay.ID, "alice", "", true, ErrAlreadyDecided},
		{"approve after deny", denied.ID, "alice", ScopeOnce, false, ErrAlreadyDecided},
		{"foreign approve", foreign.ID, "mallory", ScopeOnce, false, ErrForeignOwner},
		{"foreign deny", foreign.ID, "mallory", "", true, ErrForeignOwner},
		{"unknown id", "ap_0000000000000000", "alice", ScopeOnce, false, ErrNotFound},
		{"bad scope", foreign.ID, "alice", "forever", false, ErrInvalidScope},
		{"critical session", critical.ID, "alice", ScopeSession, false, ErrScopeNotAllowed},
		{"critical always", critical.ID, "alice", ScopeAlways, false, ErrScopeNotAllowed},
	} {
		var err error
		if tc.deny {
			_, err = e.svc.Deny(ctx, tc.id, tc.who)
		} else {
			_, err = e.svc.Approve(ctx, tc.id, tc.who, tc.scope)
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v; want %v", tc.name, err, tc.want)
		}
	}
	if got, _ := e.svc.Get(ctx, foreign.ID); got.Status != Pending {
		t.Errorf("after refusals, foreign approval is %s; want still pending", got.Status)
	}
	if got, err := e.svc.Approve(ctx, critical.ID, "alice", ScopeOnce); err != nil || got.Status != Approved {
		t.Errorf("Approve(critical, once) = %+v, %v; want approved", got, err)
	}
	if gs, _ := e.svc.Grants(ctx, "alice"); len(gs) != 0 {
		t.Errorf("refused approvals created %d grants; want 0", len(gs))
	}

	e.clock.Advance(30 * time.Minute)
	if _, err := e.svc.Approve(ctx, expiring.ID, "alice", ScopeOnce); !errors.Is(err, ErrExpired) {
		t.Errorf("Approve after expiry = %v; want ErrExpired", err)
	}
	if _, err := e.svc.Deny(ctx, expiring.ID, "alice"); !errors.Is(err, ErrExpired) {
		t.Errorf("Deny after expiry = %v; want ErrExpired", err)
	}
	list, err := e.svc.List(ctx, Expired)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range list {
		found = found || a.ID == expiring.ID
		if a.Status != Expired {
			t.Errorf("List(expired) returned %s with status %s", a.ID, a.Status)
		}
	}
	if !found {
		t.Errorf("List(expired) does not show %s", expiring.ID)
	}
	if _, err := e.svc.List(ctx, "bogus"); err == nil {
		t.Error("List(bogus) = nil error")
	}
}

func TestConsumeNeedsExactBinding(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	a, b := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
	if _, err := e.svc.Approve(ctx, a.ID, "alice", ScopeOnce); err != nil {
		t.Fatal(err)
	}
	_, changedHash := planFor(`{"path":"notes/a.md","mode":"append"}`)
	for name, wrong := range map[string]Binding{
		"foreign session":  {b.Tool, b.PlanHash, b.Owner, "s2"},
		"changed plan":     {b.Tool, changedHash, b.Owner, b.Session},
		"foreign owner":    {b.Tool, b.PlanHash, "mallory", b.Session},
		"another tool":     {"delete_file", b.PlanHash, b.Owner, b.Session},
		"empty everything": {},
	} {
		if _, ok, err := e.svc.Consume(ctx, wrong); ok || err != nil {
			t.Errorf("Consume(%s) = %v, %v; want false, nil", name, ok, err)
		}
	}
	if _, ok, err := e.svc.Consume(ctx, b); !ok || err != nil {
		t.Errorf("Consume(exact) = %v, %v; want true after the wrong attempts", ok, err)
	}
}

func TestConcurrentApproveExactlyOneWins(t *testing.T) {
	for _, n := range []int{2, 20} {
		e := newEnv(t)
		a, b := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { _, errs[i] = e.svc.Approve(t.Context(), a.ID, "alice", ScopeSession) })
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, ErrAlreadyDecided):
				t.Errorf("n=%d: a losing Approve = %v; want ErrAlreadyDecided", n, err)
			}
		}
		if wins != 1 {
			t.Errorf("n=%d: %d approvers won; want exactly 1", n, wins)
		}
		if gs, _ := e.svc.Grants(t.Context(), "alice"); len(gs) != 1 {
			t.Errorf("n=%d: %d grants; want 1", n, len(gs))
		}
		// And exactly one of n concurrent consumers gets it.
		var mu sync.Mutex
		consumed := 0
		for range n {
			wg.Go(func() {
				_, ok, err := e.svc.Consume(t.Context(), b)
				if err != nil {
					t.Errorf("Consume: %v", err)
				}
				if ok {
					mu.Lock()
					consumed++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if consumed != 1 {
			t.Errorf("n=%d: %d consumers got the approval; want exactly 1", n, consumed)
		}
	}
}

func TestStateSurvivesReopen(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	pending, pb := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
	used, ub := e.request(t, "alice", "s1", "notes/b.md", policy.RiskMedium)
	if _, err := e.svc.Approve(ctx, used.ID, "alice", ScopeAlways); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := e.svc.Consume(ctx, ub); !ok {
		t.Fatal("Consume before reopen = false")
	}
	if err := e.st.Close(); err != nil {
		t.Fatal(err)
	}

	st, err := store.OpenURL(ctx, e.path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := New(st, Options{Now: e.clock.Now})
	if got, err := svc.Get(ctx, pending.ID); err != nil || got.Status != Pending || string(got.Plan) != string(pending.Plan) {
		t.Errorf("after reopen Get(pending) = %+v, %v; want pending with the same plan", got, err)
	}
	again, err := svc.Request(ctx, pb, Card{Display: pending.Display, Plan: pending.Plan, Targets: pending.Targets, Risk: pending.Risk})
	if err != nil || again.ID != pending.ID {
		t.Errorf("after reopen Request = %s, %v; want the pending %s", again.ID, err, pending.ID)
	}
	if got, _ := svc.Get(ctx, used.ID); got.Status != Consumed {
		t.Errorf("after reopen Get(consumed) = %s; want consumed", got.Status)
	}
	if _, ok, err := svc.Consume(ctx, ub); ok || err != nil {
		t.Errorf("after reopen Consume(consumed) = %v, %v; want false, nil", ok, err)
	}
	if _, ok, err := svc.MatchGrant(ctx, "alice", "s9", "write_file", []string{"notes/c.md"}, policy.RiskMedium); !ok || err != nil {
		t.Errorf("after reopen MatchGrant(always) = %v, %v; want true", ok, err)
	}
	if _, err := svc.Approve(ctx, pending.ID, "alice", ScopeOnce); err != nil {
		t.Fatalf("after reopen Approve: %v", err)
	}
	if _, ok, err := svc.Consume(ctx, pb); !ok || err != nil {
		t.Errorf("after reopen Consume = %v, %v; want true", ok, err)
	}
}

// TestTaskRunApprovalsOnlyOnce: a call asked in a scheduled task's run
// session may only be approved once, whatever its risk; the same call in
// an ordinary session may be approved for the session (the twin).
func TestTaskRunApprovalsOnlyOnce(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	run, _ := e.request(t, "alice", TaskSessionPrefix+"task_0123456789abcdef", "a.md", policy.RiskMedium)
	for _, s := range []Scope{ScopeSession, ScopeAlways} {
		if _, err := e.svc.Approve(ctx, run.ID, "alice", s); !errors.Is(err, ErrScopeNotAllowed) {
			t.Errorf("Approve(task run, %s) = %v; want ErrScopeNotAllowed", s, err)
		}
	}
	if got, err := e.svc.Approve(ctx, run.ID, "alice", ScopeOnce); err != nil || got.Status != Approved {
		t.Errorf("Approve(task run, once) = %+v, %v; want approved", got, err)
	}
	chat, _ := e.request(t, "alice", "s1", "a.md", policy.RiskMedium)
	if got, err := e.svc.Approve(ctx, chat.ID, "alice", ScopeSession); err != nil || got.Status != Approved {
		t.Errorf("Approve(ordinary session, session) = %+v, %v; want approved", got, err)
	}
}

// TestWaitWokenByAnotherReplica: on a shared database an answer recorded
// by another replica wakes a waiter at once — its poll here is an hour,
// so only the announcement can. Its twin on SQLite (one machine) is
// TestStateSurvivesReopen and the app's answers from the command line,
// which the poll serves.
func TestWaitWokenByAnotherReplica(t *testing.T) {
	e := newEnv(t)
	if !e.st.Shared() {
		t.Skip("SQLite: no other machine to hear from; scripts/pg-test runs this against PostgreSQL")
	}
	a, _ := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
	other, err := store.OpenURL(t.Context(), e.path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	replica := New(other, Options{Now: e.clock.Now})
	done := make(chan Waited, 1)
	go func() {
		_, w, err := e.svc.Wait(t.Context(), a.ID, time.Hour, time.Hour)
		if err != nil {
			t.Error(err)
		}
		done <- w
	}()
	// The first read (at once) finds it pending; then only a wake-up
	// ends the wait before the hour.
	time.Sleep(100 * time.Millisecond)
	if _, err := replica.Approve(t.Context(), a.ID, "alice", ScopeOnce); err != nil {
		t.Fatal(err)
	}
	select {
	case w := <-done:
		if w != Answered {
			t.Errorf("Wait = %v; want Answered", w)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not hear of the answer recorded by the other replica")
	}
}
