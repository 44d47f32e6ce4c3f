package app

import (
	"context"
	"testing"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/config"
)

// TestApprovalAnsweredOnAnotherReplica (issue 27): two `homard serve`
// replicas share one PostgreSQL database but nothing else — each has its
// own home. A turn waits on its card on one; the owner answers on the
// other; the waiting turn notices and runs the write. On SQLite there is
// no second machine (TestGatewayApprovalAnsweredOnTheCommandLine is the
// same on one home); this runs in scripts/pg-test.
func TestApprovalAnsweredOnAnotherReplica(t *testing.T) {
	r, _, _, s, card := approvalTurn(t, "replica")
	if r.Config.Store.URL == "" {
		t.Skip("SQLite: one machine; scripts/pg-test runs this against PostgreSQL")
	}
	paths, err := config.ResolvePaths(t.TempDir(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Init(context.Background(), paths, config.InitOptions{StoreURL: r.Config.Store.URL, Mode: "smart"}); err != nil {
		t.Fatal(err)
	}
	other, err := Open(context.Background(), paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if other.Paths.DataDir == r.Paths.DataDir {
		t.Fatal("the second replica shares the first's home")
	}
	// Its twin first: the other replica sees the card pending.
	if a, err := other.Owner.Approval(context.Background(), card.ApprovalID); err != nil || a.Status != approval.Pending {
		t.Fatalf("the other replica's view of the card = %+v, %v; want pending", a, err)
	}
	if _, err := other.Owner.Approve(context.Background(), card.ApprovalID, "once"); err != nil {
		t.Fatal(err)
	}
	done, _ := s.until("done")
	if d := decode[doneJSON](t, done.data); d.Text != "Done." || len(d.Pending) != 0 {
		t.Errorf("done %s; want Done. with nothing pending", done.data)
	}
	if got := todo(t, r); got != "- tea\n" {
		t.Errorf("todo.md = %q; want the write approved on the other replica", got)
	}
}
