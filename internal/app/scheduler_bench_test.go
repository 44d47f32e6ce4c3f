package app

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

// BenchmarkTaskAdd is `homard task add` after its flags, in the runtime:
// the body built and checked against the config (mode ceiling, tools,
// delivery, the schedule's closest gap over a year, daylight-saving
// changes included), its canonical form, the row and its audit record in
// one transaction, and the answer shown (hash, seal-if-approved, next
// runs). "every" and "cron" differ in the gap check: a cron expression in
// a zone is walked slot by slot.
func BenchmarkTaskAdd(b *testing.B) {
	for _, c := range []struct {
		name string
		spec TaskSpec
	}{
		{"every", TaskSpec{Every: "6h"}},
		{"cron", TaskSpec{Cron: "30 7 * * 1-5", TZ: "Europe/Paris"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := newTestRuntime(b, "smart")
			ctx := context.Background()
			spec := c.spec
			spec.Name, spec.Prompt, spec.Tools = "digest", "Summarise the new files in inbox/ for me.", []string{"read_file", "list_dir"}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.AddTask(ctx, spec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
