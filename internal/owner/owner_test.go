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

// TestOwnersNeverSeeEachOther (issue 27 point 2): two owners' actions on
// one store (two homes on one shared database). Bob neither lists, reads,
// answers nor awaits alice's approval, and neither lists, revokes nor
// authenticates with her API token; each twin — alice doing the same to
// her own — works.
func TestOwnersNeverSeeEachOther(t *testing.T) {
	e := newEnv(t, nil)
	bob := New(Deps{Owner: "bob", Store: e.st, Approvals: e.ap, Now: func() time.Time { return e.now }})
	ctx := t.Context()
	hers := e.ask(t, "alice", "notes/diary.md", policy.RiskMedium)

	if list, err := bob.Approvals(ctx, ""); err != nil || len(list) != 0 {
		t.Errorf("bob's Approvals = %+v, %v; want none of alice's", list, err)
	}
	if _, err := bob.Approval(ctx, hers.ID); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("bob's Approval(alice's) = %v; want ErrNotFound", err)
	}
	for _, c := range []channel.Choice{channel.Once, channel.Always, channel.Deny} {
		if _, err := bob.Answer(ctx, hers.ID, c); !errors.Is(err, approval.ErrNotFound) {
			t.Errorf("bob's Answer(alice's, %s) = %v; want ErrNotFound", c, err)
		}
	}
	if _, err := bob.Await(ctx, hers.ID, time.Millisecond, time.Millisecond); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("bob's Await(alice's) = %v; want ErrNotFound", err)
	}
	if list, err := e.o.Approvals(ctx, "pending"); err != nil || len(list) != 1 || list[0].ID != hers.ID {
		t.Errorf("alice's Approvals = %+v, %v; want her pending one", list, err)
	}
	if a, err := e.o.Answer(ctx, hers.ID, channel.Once); err != nil || a.Status != approval.Approved {
		t.Errorf("alice answering her own = %+v, %v", a, err)
	}

	tok, rec, err := e.o.TokenCreate(ctx, "laptop")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := bob.TokenVerify(ctx, tok); err != nil || ok {
		t.Errorf("bob's gateway accepting alice's token = %v, %v; want refused (it would act as bob)", ok, err)
	}
	if list, err := bob.TokenList(ctx); err != nil || len(list) != 0 {
		t.Errorf("bob's TokenList = %+v, %v; want none of alice's", list, err)
	}
	if err := bob.TokenRevoke(ctx, rec.ID); !errors.Is(err, ErrNoToken) {
		t.Errorf("bob revoking alice's token = %v; want ErrNoToken", err)
	}
	if ok, err := e.o.TokenVerify(ctx, tok); err != nil || !ok {
		t.Errorf("alice's gateway accepting her token = %v, %v; want accepted", ok, err)
	}
	if list, err := e.o.TokenList(ctx); err != nil || len(list) != 1 || list[0].Owner != "alice" {
		t.Errorf("alice's TokenList = %+v, %v; want her token", list, err)
	}
}

// TestTokenMadeBeforeOwnersIsClaimed: a token stored before owners were
// recorded (an empty owner) is accepted by the first gateway it is presented to
// and becomes that owner's; another owner's gateway refuses it after.
func TestTokenMadeBeforeOwnersIsClaimed(t *testing.T) {
	ctx := t.Context()
	where := storetest.Where(t)
	st, err := store.OpenURL(ctx, where)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := &env{st: st, now: t0}
	e.ap = approval.New(st, approval.Options{Now: func() time.Time { return e.now }})
	e.o = New(Deps{Owner: "alice", Store: st, Approvals: e.ap, Now: func() time.Time { return e.now }})
	tok, rec, err := e.o.TokenCreate(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storetest.Raw(t, where).ExecContext(ctx, `UPDATE api_tokens SET owner = '' WHERE id = ?`, rec.ID); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.o.TokenVerify(ctx, tok); err != nil || !ok {
		t.Fatalf("alice's gateway accepting the old token = %v, %v; want accepted", ok, err)
	}
	if got, err := e.st.APIToken(ctx, rec.ID); err != nil || got.Owner != "alice" {
		t.Errorf("the old token after its use = %+v, %v; want alice's", got, err)
	}
	bob := New(Deps{Owner: "bob", Store: e.st, Approvals: e.ap, Now: func() time.Time { return e.now }})
	if ok, err := bob.TokenVerify(ctx, tok); err != nil || ok {
		t.Errorf("bob's gateway accepting the token alice claimed = %v, %v; want refused", ok, err)
	}
}
