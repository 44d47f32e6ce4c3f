package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/policy"
)

// TestGrantRevokeOnlyTheOwnersGrants: the owner lists and revokes their
// own grants; another owner's grant (a chat user sharing the database) is
// neither listed nor revocable — it is "no such grant", like an unknown
// id — and stays active.
func TestGrantRevokeOnlyTheOwnersGrants(t *testing.T) {
	r := newTestRuntime(t, "smart")
	ctx := context.Background()
	grant := func(owner, session string) string {
		t.Helper()
		plan := []byte(`{"plan":"` + owner + `"}`)
		sum := sha256.Sum256(plan)
		a, err := r.Approvals.Request(ctx, approval.Binding{Tool: "write_file", PlanHash: hex.EncodeToString(sum[:]), Owner: owner, Session: session},
			approval.Card{Display: "write notes/a.md", Plan: plan, Targets: []string{"notes/a.md"}, Risk: policy.RiskMedium})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Approvals.Approve(ctx, a.ID, owner, approval.ScopeSession); err != nil {
			t.Fatal(err)
		}
		gs, err := r.Approvals.Grants(ctx, owner)
		if err != nil || len(gs) != 1 {
			t.Fatalf("grants of %s: %v, %v; want one", owner, gs, err)
		}
		return gs[0].ID
	}
	mine, theirs := grant(r.Config.Owner, "s-mine"), grant("mallory", "s-theirs")

	list, err := r.Owner.Grants(ctx, false)
	if err != nil || len(list) != 1 || list[0].ID != mine {
		t.Fatalf("GrantList = %v, %v; want only %s", list, err, mine)
	}
	if _, err := r.Owner.RevokeGrant(ctx, theirs); !errors.Is(err, ErrGrantNotFound) {
		t.Errorf("revoke another owner's grant: %v; want ErrGrantNotFound", err)
	}
	if gs, _ := r.Approvals.Grants(ctx, "mallory"); len(gs) != 1 || !gs[0].RevokedAt.IsZero() {
		t.Errorf("the other owner's grant after a refused revoke: %+v; want it active", gs)
	}
	g, err := r.Owner.RevokeGrant(ctx, mine)
	if err != nil || g.ID != mine || g.RevokedAt.IsZero() {
		t.Fatalf("revoke own grant = %+v, %v; want it revoked", g, err)
	}
	if list, _ := r.Owner.Grants(ctx, false); len(list) != 0 {
		t.Errorf("active grants after revoke: %v; want none", list)
	}
	if list, _ := r.Owner.Grants(ctx, true); len(list) != 1 || list[0].RevokedAt.IsZero() {
		t.Errorf("all grants after revoke: %v; want the revoked one", list)
	}
	if _, err := r.Owner.RevokeGrant(ctx, mine); err != nil {
		t.Errorf("revoking twice: %v; want success", err)
	}
}

// TestRecordAnswerMapsEveryChoice: the owner's answer is recorded through
// the one mapping to approval scopes; an answer that approves nothing
// (leave, recorded, lapsed, an unknown word) records nothing and leaves
// the card pending.
func TestRecordAnswerMapsEveryChoice(t *testing.T) {
	r := newTestRuntime(t, "smart")
	ctx := context.Background()
	for i, tc := range []struct {
		choice channel.Choice
		status approval.Status
		scope  approval.Scope
		bad    bool
	}{
		{channel.Once, approval.Approved, approval.ScopeOnce, false},
		{channel.Session, approval.Approved, approval.ScopeSession, false},
		{channel.Always, approval.Approved, approval.ScopeAlways, false},
		{channel.Deny, approval.Denied, "", false},
		{channel.Leave, approval.Pending, "", true},
		{channel.Recorded, approval.Pending, "", true},
		{channel.Lapsed, approval.Pending, "", true},
		{"forever", approval.Pending, "", true},
	} {
		t.Run(string(tc.choice), func(t *testing.T) {
			plan := []byte(fmt.Sprintf(`{"plan":%d}`, i))
			sum := sha256.Sum256(plan)
			a, err := r.Approvals.Request(ctx, approval.Binding{Tool: "write_file", PlanHash: hex.EncodeToString(sum[:]), Owner: r.Config.Owner, Session: "s"},
				approval.Card{Display: "write notes/a.md", Plan: plan, Targets: []string{"notes/a.md"}, Risk: policy.RiskMedium})
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.recordAnswer(ctx, a.ID, tc.choice)
			if tc.bad != errors.Is(err, channel.ErrBadChoice) || (!tc.bad && err != nil) {
				t.Fatalf("recordAnswer(%q) = %v; want ErrBadChoice: %v", tc.choice, err, tc.bad)
			}
			got, err := r.Owner.Approval(ctx, a.ID)
			if err != nil || got.Status != tc.status || got.Scope != tc.scope {
				t.Errorf("after recordAnswer(%q): status %s, scope %q (%v); want %s, %q", tc.choice, got.Status, got.Scope, err, tc.status, tc.scope)
			}
		})
	}
}
