package automation

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/task"
)

// BenchmarkSchedulerTickIdle is one tick of the scheduler with 10,000
// approved tasks and none due: what homard serve pays at most once a
// minute while nothing happens. "timer" is a tick between expiry scans
// (one indexed query); "expiry-scan" adds the scan done once a minute.
func BenchmarkSchedulerTickIdle(b *testing.B) {
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(b.TempDir(), "homard.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC().Truncate(time.Second)
	err = s.Write(ctx, func(tx *store.Tx) error {
		for i := range 10_000 {
			body := task.Body{
				ID: task.NewID(), Owner: "owner", Name: "t", Prompt: "say hello",
				Sched:   task.Schedule{Kind: task.KindEvery, Expr: task.EveryExpr(24*time.Hour, now.Add(time.Duration(i)*time.Second+time.Hour))},
				CatchUp: task.CatchUpSkip, Mode: policy.ModeSafe, Deliver: "web", Expires: now.Add(10 * 24 * time.Hour),
			}
			mac, err := task.Seal(schedKey, body)
			if err != nil {
				return err
			}
			canon, err := body.Canonical()
			if err != nil {
				return err
			}
			row := store.Task{ID: body.ID, Owner: body.Owner, Name: body.Name, Body: canon, CreatedAt: now,
				NextRunAt: now.Add(time.Duration(i)*time.Second + time.Hour)}
			if err := tx.InsertTask(row); err != nil {
				return err
			}
			if err := tx.ApproveTask(row.ID, canon, mac, now, body.Expires); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	var rec schedRecorder
	for _, bc := range []struct {
		name   string
		expiry bool
	}{{"timer", false}, {"expiry-scan", true}} {
		b.Run(bc.name, func(b *testing.B) {
			d := rec.deps(b, s, testAuto())
			d.Run = func(context.Context, store.Task, int64, time.Time) { b.Fatal("a run started with nothing due") }
			sc := newScheduler(d)
			b.ReportAllocs()
			for b.Loop() {
				if bc.expiry {
					sc.lastExpiry = time.Time{}
				} else {
					sc.lastExpiry = now
				}
				if _, err := sc.tick(ctx, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
