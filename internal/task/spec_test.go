package task

import (
	"testing"
	"time"

	"github.com/homard/homard/internal/schedule"
)

// TestSpecReadsTheSealedExpression: each kind's sealed expression gives
// the schedule it names, and a malformed one is an error, not a default.
func TestSpecReadsTheSealedExpression(t *testing.T) {
	anchor := time.Date(2026, 12, 1, 21, 0, 7, 0, time.UTC)
	b := Body{ID: "task_x", Sched: Schedule{Kind: KindEvery, Expr: EveryExpr(90*time.Minute, anchor)}}
	if b.Sched.Expr != "1h30m0s from 2026-12-01T21:00:07Z" {
		t.Fatalf("EveryExpr = %q", b.Sched.Expr)
	}
	s, err := b.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := schedule.Next(s, anchor); !got.Equal(anchor.Add(90 * time.Minute)) {
		t.Errorf("every: next after the anchor = %v; want %v", got, anchor.Add(90*time.Minute))
	}
	at := time.Date(2026, 12, 24, 7, 0, 0, 0, time.UTC)
	b = Body{ID: "task_x", Sched: Schedule{Kind: KindAt, Expr: AtExpr(at.In(time.FixedZone("x", 3600)))}}
	if s, err = b.Spec(); err != nil {
		t.Fatal(err)
	}
	if got, ok := schedule.Next(s, at.Add(-time.Hour)); !ok || !got.Equal(at) {
		t.Errorf("at: next = %v %v; want %v", got, ok, at)
	}
	b = Body{ID: "task_x", Sched: Schedule{Kind: KindCron, Expr: "30 1 * * *", TZ: "America/New_York"}}
	if s, err = b.Spec(); err != nil {
		t.Fatal(err)
	}
	// The repeated hour: 01:30 runs once, at its first occurrence (EDT).
	got, _ := schedule.Next(s, time.Date(2025, 11, 2, 4, 0, 0, 0, time.UTC))
	if want := time.Date(2025, 11, 2, 5, 30, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("cron: next = %v; want %v", got.UTC(), want)
	}
	for _, bad := range []Schedule{
		{Kind: KindEvery, Expr: "1h"},
		{Kind: KindEvery, Expr: "1h from yesterday"},
		{Kind: KindEvery, Expr: "10s from 2026-12-01T21:00:00Z"},
		{Kind: KindAt, Expr: "tomorrow"},
		{Kind: KindCron, Expr: "0 9 * * *"},
		{Kind: KindCron, Expr: "0 9 * *", TZ: "UTC"},
		{Kind: "hourly", Expr: "x"},
	} {
		if _, err := (Body{ID: "task_x", Sched: bad}).Spec(); err == nil {
			t.Errorf("Spec(%+v) = nil error; want one", bad)
		}
	}
}
