package owner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/store/storetest"
)

var t0 = time.Date(2026, 12, 5, 18, 0, 0, 0, time.UTC)

type env struct {
	st  *store.Store
	ap  *approval.Service
	o   *Actions
	now time.Time
}

func newEnv(t *testing.T, lock func(string) (func(), error)) *env {
	t.Helper()
	st := storetest.Open(t)
	e := &env{st: st, now: t0}
	clock := func() time.Time { return e.now }
	e.ap = approval.New(st, approval.Options{Now: clock})
	e.o = New(Deps{Owner: "alice", Store: st, Approvals: e.ap, Now: clock, LockSession: lock})
	return e
}

// ask makes a pending approval of owner for a write of target.
func (e *env) ask(t *testing.T, owner, target string, risk policy.Risk) approval.Approval {
	t.Helper()
	plan := []byte(`{"path":"` + target + `"}`)
	sum := sha256.Sum256(plan)
	a, err := e.ap.Request(t.Context(), approval.Binding{Tool: "write_file", PlanHash: hex.EncodeToString(sum[:]), Owner: owner, Session: "s-" + owner},
		approval.Card{Display: "write " + target, Plan: plan, Targets: []string{target}, Risk: risk, Rule: "mode.smart", Reason: "asks"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Every answer maps to one scope; what approves nothing records nothing.
func TestAnswerScopes(t *testing.T) {
	e := newEnv(t, nil)
	for _, c := range []channel.Choice{channel.Leave, channel.Recorded, channel.Lapsed, "sometimes"} {
		a := e.ask(t, "alice", "notes/"+string(c)+".md", policy.RiskMedium)
		if _, err := e.o.Answer(t.Context(), a.ID, c); !errors.Is(err, channel.ErrBadChoice) {
			t.Errorf("Answer(%q) = %v; want ErrBadChoice", c, err)
		}
		if got, _ := e.o.Approval(t.Context(), a.ID); got.Status != approval.Pending {
			t.Errorf("after Answer(%q) the approval is %s; want still pending", c, got.Status)
		}
	}
	a := e.ask(t, "alice", "notes/s.md", policy.RiskMedium)
	got, err := e.o.Answer(t.Context(), a.ID, channel.Session)
	if err != nil || got.Status != approval.Approved || got.Scope != approval.ScopeSession {
		t.Fatalf("Answer(session) = %s %s, %v; want approved for the session", got.Status, got.Scope, err)
	}
	d := e.ask(t, "alice", "notes/d.md", policy.RiskMedium)
	if err := e.o.Deny(t.Context(), d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.o.Approve(t.Context(), e.ask(t, "alice", "notes/x.md", policy.RiskMedium).ID, "forever"); !errors.Is(err, ErrBadRequest) {
		t.Errorf("Approve(scope forever) = %v; want ErrBadRequest", err)
	}
}

// Another owner's approval is not found through the channel view, and
// cannot be answered there; the owner's own is (the twin).
func TestAdminHidesAnotherOwnersApproval(t *testing.T) {
	e := newEnv(t, nil)
	theirs := e.ask(t, "bob", "notes/b.md", policy.RiskMedium)
	mine := e.ask(t, "alice", "notes/a.md", policy.RiskMedium)
	adm := e.o.Admin()
	if _, err := adm.Approval(t.Context(), theirs.ID); !errors.Is(err, channel.ErrNotFound) {
		t.Errorf("Approval(bob's) = %v; want ErrNotFound", err)
	}
	if _, err := adm.Answer(t.Context(), theirs.ID, channel.Once, ""); !errors.Is(err, channel.ErrNotFound) {
		t.Errorf("Answer(bob's) = %v; want ErrNotFound", err)
	}
	list, err := adm.Approvals(t.Context(), "pending")
	if err != nil || len(list) != 1 || list[0].ID != mine.ID {
		t.Errorf("Approvals = %+v, %v; want only alice's", list, err)
	}
	got, err := adm.Answer(t.Context(), mine.ID, channel.Once, "")
	if err != nil || got.Status != "approved" || got.Owner != "alice" || got.DecidedBy != "alice" {
		t.Fatalf("Answer(alice's) = %+v, %v; want approved by alice", got, err)
	}
	if _, err := adm.Answer(t.Context(), mine.ID, channel.Once, ""); !errors.Is(err, channel.ErrNotPending) {
		t.Errorf("second Answer = %v; want ErrNotPending", err)
	}
}

// A grant is revoked by id; an unknown id is ErrGrantNotFound.
func TestRevokeGrant(t *testing.T) {
	e := newEnv(t, nil)
	a := e.ask(t, "alice", "notes/g.md", policy.RiskMedium)
	if _, err := e.o.Answer(t.Context(), a.ID, channel.Session); err != nil {
		t.Fatal(err)
	}
	gs, err := e.o.Grants(t.Context(), false)
	if err != nil || len(gs) != 1 {
		t.Fatalf("Grants = %v, %v; want one", gs, err)
	}
	if _, err := e.o.RevokeGrant(t.Context(), "gr_0000000000000000"); !errors.Is(err, ErrGrantNotFound) {
		t.Errorf("RevokeGrant(unknown) = %v; want ErrGrantNotFound", err)
	}
	g, err := e.o.RevokeGrant(t.Context(), gs[0].ID)
	if err != nil || g.RevokedAt.IsZero() {
		t.Fatalf("RevokeGrant = %+v, %v", g, err)
	}
	if active, _ := e.o.Grants(t.Context(), false); len(active) != 0 {
		t.Errorf("active grants after revoke = %v; want none", active)
	}
	if all, _ := e.o.Grants(t.Context(), true); len(all) != 1 {
		t.Errorf("all grants after revoke = %v; want the revoked one", all)
	}
}

// A session another process runs a turn in is not deleted (busy); once
// free it is.
func TestDeleteSessionBusy(t *testing.T) {
	busy := true
	e := newEnv(t, func(string) (func(), error) {
		if busy {
			return nil, channel.ErrSessionBusy
		}
		return func() {}, nil
	})
	if err := e.st.Write(t.Context(), func(tx *store.Tx) error { return tx.EnsureSession("s9", "alice", t0) }); err != nil {
		t.Fatal(err)
	}
	if err := e.o.DeleteSession(t.Context(), "s9"); !errors.Is(err, channel.ErrSessionBusy) {
		t.Fatalf("DeleteSession(busy) = %v; want ErrSessionBusy", err)
	}
	busy = false
	if err := e.o.DeleteSession(t.Context(), "s9"); err != nil {
		t.Fatalf("DeleteSession = %v", err)
	}
	if err := e.o.DeleteSession(t.Context(), "s9"); !errors.Is(err, channel.ErrNotFound) {
		t.Errorf("DeleteSession(deleted) = %v; want ErrNotFound", err)
	}
}

// Await ends Recorded once the owner answers through the facade.
func TestAwaitRecorded(t *testing.T) {
	e := newEnv(t, nil)
	a := e.ask(t, "alice", "notes/w.md", policy.RiskMedium)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	done := make(chan channel.Choice, 1)
	go func() {
		c, _ := e.o.Await(ctx, a.ID, time.Hour, time.Hour)
		done <- c
	}()
	time.Sleep(20 * time.Millisecond)
	if _, err := e.o.Answer(t.Context(), a.ID, channel.Once); err != nil {
		t.Fatal(err)
	}
	if c := <-done; c != channel.Recorded {
		t.Errorf("Await = %q; want recorded", c)
	}
}
