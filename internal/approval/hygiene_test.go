package approval

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/homard/homard/internal/policy"
)

// TestPendingCap: a session holds at most MaxPending waiting cards; one
// more is refused with ErrTooManyPending, while the same Plan again still
// gets its existing card, another session is not affected, and answering
// a card makes room.
func TestPendingCap(t *testing.T) {
	e := newEnv(t)
	e.svc = New(e.st, Options{Now: e.clock.Now, MaxPending: 3})
	var first Approval
	for i := range 3 {
		a, _ := e.request(t, "alice", "s1", fmt.Sprintf("n/%d.md", i), policy.RiskMedium)
		if i == 0 {
			first = a
		}
	}
	req := func(session, target string) (Approval, error) {
		plan, hash := planFor(`{"path":"` + target + `"}`)
		return e.svc.Request(t.Context(), Binding{Tool: "write_file", PlanHash: hash, Owner: "alice", Session: session},
			Card{Display: "write " + target, Plan: plan, Risk: policy.RiskMedium})
	}
	for _, tc := range []struct {
		name, session, target string
		wantErr               error
		wantID                string
	}{
		{"fourth card", "s1", "n/3.md", ErrTooManyPending, ""},
		{"identical plan shares its card", "s1", "n/0.md", nil, first.ID},
		{"another session", "s2", "n/3.md", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := req(tc.session, tc.target)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Request(%s, %s) = %v; want %v", tc.session, tc.target, err, tc.wantErr)
			}
			if tc.wantID != "" && a.ID != tc.wantID {
				t.Errorf("Request(%s, %s) = %s; want the existing card %s", tc.session, tc.target, a.ID, tc.wantID)
			}
		})
	}
	if _, err := e.svc.Deny(t.Context(), first.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := req("s1", "n/3.md"); err != nil {
		t.Errorf("Request after one card was answered = %v; want a new card", err)
	}
	e.clock.Advance(31 * time.Minute) // every card expired
	if _, err := req("s1", "n/4.md"); err != nil {
		t.Errorf("Request after the cards expired = %v; want a new card", err)
	}
}

// TestConsumeUnchanged: an approval created before the workspace changed
// lapses (expired, reported, never consumed); one created after it, or
// with no change, is consumed once.
func TestConsumeUnchanged(t *testing.T) {
	for _, tc := range []struct {
		name       string
		changed    time.Duration // after t0; the card is drawn at t0
		wantOK     bool
		wantLapsed bool
	}{
		{"no change", 0, true, false},
		{"changed before the card", -time.Minute, true, false},
		{"changed after the card", time.Second, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			a, b := e.request(t, "alice", "s1", "build", policy.RiskMedium)
			e.clock.Advance(2 * time.Second)
			if _, err := e.svc.Approve(t.Context(), a.ID, "alice", ScopeOnce); err != nil {
				t.Fatal(err)
			}
			var changed time.Time
			if tc.changed != 0 {
				changed = t0.Add(tc.changed)
			}
			got, ok, err := e.svc.ConsumeUnchanged(t.Context(), b, changed)
			if err != nil || ok != tc.wantOK || (got.ID == a.ID) != (tc.wantOK || tc.wantLapsed) {
				t.Fatalf("ConsumeUnchanged = %+v, %v, %v; want ok %v, lapsed %v", got, ok, err, tc.wantOK, tc.wantLapsed)
			}
			if tc.wantLapsed && got.Status != Expired {
				t.Errorf("lapsed approval status = %s; want expired", got.Status)
			}
			stored, _ := e.svc.Get(t.Context(), a.ID)
			want := Consumed
			if tc.wantLapsed {
				want = Expired
			}
			if stored.Status != want {
				t.Errorf("stored status = %s; want %s", stored.Status, want)
			}
			if _, ok, _ := e.svc.ConsumeUnchanged(t.Context(), b, time.Time{}); ok {
				t.Error("a second consume succeeded")
			}
		})
	}
}

// TestLapseOrphans: when a turn ends with its cards unanswered and no one
// can use them, Lapse expires the pending approvals the turn asked, which
// then can be neither approved nor consumed. Twins: one an earlier turn
// asked too (created before the turn started) stays pending and can be
// approved; a decided one is not touched.
func TestLapseOrphans(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	earlier, _ := e.request(t, "alice", "s1", "old.md", policy.RiskMedium)
	e.clock.Advance(time.Minute)
	turnStart := e.clock.Now()
	orphan, b := e.request(t, "alice", "s1", "a.md", policy.RiskMedium)
	denied, _ := e.request(t, "alice", "s1", "b.md", policy.RiskMedium)
	if _, err := e.svc.Deny(ctx, denied.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	n, err := e.svc.Lapse(ctx, []string{earlier.ID, orphan.ID, denied.ID, "ap_nosuch"}, turnStart)
	if err != nil || n != 1 {
		t.Fatalf("Lapse = %d, %v; want 1 (only the turn's own pending card)", n, err)
	}
	got, _ := e.svc.Get(ctx, orphan.ID)
	if got.Status != Expired || !got.Lapsed {
		t.Errorf("orphan = %s lapsed %v; want expired, lapsed", got.Status, got.Lapsed)
	}
	if _, err := e.svc.Approve(ctx, orphan.ID, "alice", ScopeOnce); !errors.Is(err, ErrExpired) {
		t.Errorf("Approve(lapsed) = %v; want ErrExpired", err)
	}
	if _, ok, _ := e.svc.Consume(ctx, b); ok {
		t.Error("a lapsed approval was consumed")
	}
	if got, _ := e.svc.Get(ctx, denied.ID); got.Status != Denied || got.Lapsed {
		t.Errorf("denied = %s lapsed %v; want denied, untouched", got.Status, got.Lapsed)
	}
	if _, err := e.svc.Approve(ctx, earlier.ID, "alice", ScopeOnce); err != nil {
		t.Errorf("Approve(an earlier turn's card) = %v; want it still pending", err)
	}
	// Time-expired is not lapsed.
	late, _ := e.request(t, "alice", "s1", "c.md", policy.RiskMedium)
	e.clock.Advance(time.Hour)
	if got, _ := e.svc.Get(ctx, late.ID); got.Status != Expired || got.Lapsed {
		t.Errorf("timed-out = %s lapsed %v; want expired, not lapsed", got.Status, got.Lapsed)
	}
}
