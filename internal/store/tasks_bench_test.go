package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchBody is the size of a real task body: a canonical body with a
// short prompt and a few tools is about 500 bytes.
var benchBody = []byte(`{"budgets":{"max_calls":20,"max_runtime":"5m0s","max_tokens":50000,"max_turns":10},"catch_up":"skip",` +
	`"deliver":"web","expires":"2026-03-11T07:00:00Z","id":"task_0123456789abcdef","mode":"safe","name":"morning digest",` +
	`"owner":"owner","prompt":"` + strings.Repeat("Summarise the new files in ~/inbox. ", 6) + `",` +
	`"schedule":{"expr":"30 7 * * 1-5","kind":"cron","tz":"Europe/Paris"},"tools":["list_files","read_file"],"v":1}`)

// benchTasks opens a database in b.TempDir holding n approved, active
// tasks whose next runs are one per second from t0, task i at t0+i s.
func benchTasks(b *testing.B, n int) *Store {
	b.Helper()
	s, err := Open(b.Context(), filepath.Join(b.TempDir(), "homard.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	err = s.Write(b.Context(), func(tx *Tx) error {
		for i := range n {
			id := fmt.Sprintf("task_%016x", i)
			t := Task{ID: id, Owner: "owner", Name: "digest", Body: benchBody, NextRunAt: t0.Add(time.Duration(i) * time.Second), CreatedAt: t0}
			if err := tx.InsertTask(t); err != nil {
				return err
			}
			if err := tx.ApproveTask(id, benchBody, strings.Repeat("a", 64), t0, t0.Add(240*time.Hour)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkDueTasks10k is the scheduler's query with 10,000 active tasks:
// none due yet (the common case: a timer fired early or nothing is due),
// one due, and ten due.
func BenchmarkDueTasks10k(b *testing.B) {
	s := benchTasks(b, 10_000)
	for _, c := range []struct {
		name string
		now  time.Time
		want int
	}{
		{"none", t0.Add(-time.Second), 0},
		{"one", t0, 1},
		{"ten", t0.Add(9 * time.Second), 10},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				due, err := s.DueTasks(ctx, "owner", c.now, 10)
				if err != nil || len(due) != c.want {
					b.Fatalf("DueTasks = %d tasks, %v; want %d", len(due), err, c.want)
				}
			}
		})
	}
}

// BenchmarkNextRunAt10k is the query the scheduler arms its timer with.
func BenchmarkNextRunAt10k(b *testing.B) {
	s := benchTasks(b, 10_000)
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		if _, ok, err := s.NextRunAt(ctx, "owner"); err != nil || !ok {
			b.Fatalf("NextRunAt = %v, %v", ok, err)
		}
	}
}

// BenchmarkClaimSlot10k claims a new slot of one of 10,000 tasks in its
// own write transaction (BEGIN IMMEDIATE … COMMIT), as the scheduler does.
// "new" claims back to back; "after-finish" ends each claimed run, untimed,
// before the next claim, as runs do (the WAL then fills twice as fast, so
// more checkpoints land in the timed claims); "taken" claims a slot
// already claimed (the second scheduler's case).
func BenchmarkClaimSlot10k(b *testing.B) {
	s := benchTasks(b, 10_000)
	ctx := context.Background()
	i := 0 // counts across the runs: every slot key is new
	claim := func(b *testing.B) int64 {
		i++
		task := fmt.Sprintf("task_%016x", i%10_000)
		slot := fmt.Sprintf("new-%d", i)
		var id int64
		err := s.Write(ctx, func(tx *Tx) error {
			var ok bool
			var err error
			id, ok, err = tx.ClaimSlot(task, slot, t0, t0)
			if err == nil && !ok {
				err = fmt.Errorf("slot %s of %s was not claimed", slot, task)
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		return id
	}
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			claim(b)
		}
	})
	b.Run("after-finish", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			id := claim(b)
			b.StopTimer()
			if err := s.Write(ctx, func(tx *Tx) error {
				return tx.FinishRun(id, TaskRunEnd{Status: TaskRunSkipped, EndedAt: t0})
			}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
	b.Run("taken", func(b *testing.B) {
		if err := s.Write(ctx, func(tx *Tx) error {
			_, _, err := tx.ClaimSlot("task_0000000000000007", "taken", t0, t0)
			return err
		}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			err := s.Write(ctx, func(tx *Tx) error {
				_, ok, err := tx.ClaimSlot("task_0000000000000007", "taken", t0, t0)
				if err == nil && ok {
					err = fmt.Errorf("a taken slot was claimed")
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInsertTask stores one new task with a real-sized body in its
// own write transaction, next to 10,000 others (what `homard task add`
// writes; sealing is measured in package task).
func BenchmarkInsertTask(b *testing.B) {
	s := benchTasks(b, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		t := Task{ID: fmt.Sprintf("new_%d", i), Owner: "owner", Name: "digest", Body: benchBody, NextRunAt: t0, CreatedAt: t0}
		if err := s.Write(ctx, func(tx *Tx) error { return tx.InsertTask(t) }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClaimSlotBatch10k claims ten new slots per write transaction
// (a scheduler catching up on several tasks at once); ns/claim is the
// statement's own cost with the commit shared.
func BenchmarkClaimSlotBatch10k(b *testing.B) {
	s := benchTasks(b, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		err := s.Write(ctx, func(tx *Tx) error {
			for range 10 {
				i++
				task, slot := fmt.Sprintf("task_%016x", i%10_000), fmt.Sprintf("batch-%d", i)
				if _, ok, err := tx.ClaimSlot(task, slot, t0, t0); err != nil || !ok {
					return fmt.Errorf("claim %s of %s = %v, %v", slot, task, ok, err)
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(10*b.N), "ns/claim")
}
