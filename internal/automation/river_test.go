//go:build postgres

package automation

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/schedule"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/store/storetest"
	"github.com/homard/homard/internal/task"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
)

// river's tests run in real time on the PostgreSQL of scripts/pg-test,
// each in a schema of its own (river's tables too): river's client polls
// and elects its leader on real clocks, outside any synctest bubble.

// riverTest is river's timing shortened for tests.
var riverTest = riverTuning{poll: 50 * time.Millisecond, slack: time.Second, recheck: 100 * time.Millisecond, stopWait: 10 * time.Second, testOnly: true}

// riverWhere is a new PostgreSQL schema for a river test; the test is
// skipped on SQLite (and fails under CI, which runs it through pg-test).
func riverWhere(t *testing.T) string {
	t.Helper()
	where := storetest.Where(t)
	if !storetest.Postgres(where) {
		if os.Getenv("CI") != "" {
			t.Fatal("river's tests need PostgreSQL: CI runs them through scripts/pg-test")
		}
		t.Skip("river's tests need PostgreSQL: run scripts/pg-test ./internal/automation -run River")
	}
	return where
}

// startRiver runs river's scheduler over d until the returned stop is
// called (or the test ends); stop waits for Run to return.
func startRiver(t *testing.T, d schedulerDeps) (*riverScheduler, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := newRiver(newScheduler(d), riverTest)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	stop := sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(stop)
	return r, stop
}

// riverDueTask adds an approved task that runs every hour, whose slot ten
// seconds ago is due now (its next run time set back to it), and returns
// it with that slot and its key.
func riverDueTask(t *testing.T, s *store.Store, name string) (store.Task, time.Time, string) {
	t.Helper()
	return ownedDueTask(t, s, "", name)
}

// ownedDueTask is riverDueTask of owner's ("" for "owner").
func ownedDueTask(t *testing.T, s *store.Store, owner, name string) (store.Task, time.Time, string) {
	t.Helper()
	slot := time.Now().Add(-10 * time.Second).Truncate(time.Second)
	tk := schedAddTask(t, s, schedTask{owner: owner, name: name, sched: everySched(time.Hour, slot)})
	body, err := task.Decode(tk.Body)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := body.Spec()
	if err != nil {
		t.Fatal(err)
	}
	key, ok := schedule.SlotKey(spec, slot)
	if !ok {
		t.Fatalf("slot %s has no key", slot)
	}
	if err := s.Write(t.Context(), func(tx *store.Tx) error { return tx.SetNextRun(tk.ID, slot) }); err != nil {
		t.Fatal(err)
	}
	tk.NextRunAt = slot
	return tk, slot, key
}

// waitFor polls cond until it holds, failing the test after within.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// plainDB is s's plain pool (river's).
func plainDB(t *testing.T, s *store.Store) *sql.DB {
	t.Helper()
	db, ok, err := s.PlainDB(t.Context())
	if err != nil || !ok {
		t.Fatalf("PlainDB = %v, %v", ok, err)
	}
	return db
}

// slotJobs counts river's jobs of a task.
func slotJobs(t *testing.T, db *sql.DB, taskID string) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM river_job WHERE kind = $1 AND args->>'task_id' = $2`,
		slotArgs{}.Kind(), taskID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// slotStatus is the ledger's status of a task's slot, "" when it has no run.
func slotStatus(t *testing.T, s *store.Store, taskID, key string) string {
	t.Helper()
	r, err := s.SlotRun(t.Context(), taskID, key)
	if err != nil {
		return ""
	}
	return r.Status
}

// TestRiverSlotRunsOnceAcrossReplicas: two replicas (two stores on one
// schema, each with river's scheduler) tick together over one due slot:
// it is queued as one job, runs once on one of them and is recorded
// once. Its twin: a replica whose tick read the task before the other
// moved its next run time queues the same slot again — still one job,
// no second run.
func TestRiverSlotRunsOnceAcrossReplicas(t *testing.T) {
	where := riverWhere(t)
	a, b := openSchedStore(t, where), openSchedStore(t, where)
	tk, slot, key := riverDueTask(t, a, "both")
	var recA, recB schedRecorder
	startRiver(t, recA.deps(t, a, testAuto()))
	rb, _ := startRiver(t, recB.deps(t, b, testAuto()))
	waitFor(t, 30*time.Second, "the slot to be run and recorded, and b to tick", func() bool {
		// b's first tick comes after its client is set (Run), so
		// rb.enqueue below may use it.
		return slotStatus(t, a, tk.ID, key) == store.TaskRunSucceeded && rb.core.ticks.Load() > 0
	})
	db := plainDB(t, b)
	if n := slotJobs(t, db, tk.ID); n != 1 {
		t.Errorf("%d river jobs for the slot; want 1", n)
	}
	// A late tick on b queues the slot again, as one that read the task
	// due before a's tick moved it on would — and with another catch-up
	// reach (and so another StartBy): only the task and the slot key
	// make a job.
	body, err := task.Decode(tk.Body)
	if err != nil {
		t.Fatal(err)
	}
	body.CatchUp = task.CatchUpOnce
	late := decision{plan: SlotPlan{TaskID: tk.ID, Name: tk.Name, Slot: slot, SlotKey: key, Action: PlanRun}, body: body, next: slot.Add(time.Hour)}
	if err := rb.enqueue(t.Context(), tk, late); err != nil {
		t.Fatal(err)
	}
	if n := slotJobs(t, db, tk.ID); n != 1 {
		t.Errorf("%d river jobs for the slot after it was queued again; want 1", n)
	}
	// Give a second job, had there been one, time to be fetched.
	time.Sleep(20 * riverTest.poll)
	runs := append(recA.slots(t, true), recB.slots(t, true)...)
	if want := []string{"both@" + slot.UTC().Format(time.RFC3339)}; !slices.Equal(runs, want) {
		t.Errorf("Run called for %q across both replicas; want once: %q", runs, want)
	}
	if rows := ledgerRows(t, b); len(rows) != 1 || !strings.HasSuffix(rows[0], store.TaskRunSucceeded) {
		t.Errorf("ledger = %q; want the one slot, succeeded", rows)
	}
}

// TestRiverOwnersWorkTheirOwnQueues (issue 27 point 2): two owners'
// homards on one schema each queue and run only their own owner's slots;
// a job fetched by the other owner's worker would run with that home's
// config and key (the worker cancels it instead, and the slot would
// never run). Each twin: the owner's own slot runs once.
func TestRiverOwnersWorkTheirOwnQueues(t *testing.T) {
	where := riverWhere(t)
	a, b := openSchedStore(t, where), openSchedStore(t, where)
	alices, _, aKey := ownedDueTask(t, a, "alice", "alices")
	bobs, _, bKey := ownedDueTask(t, a, "bob", "bobs")
	var alice, bob schedRecorder
	da, db := alice.deps(t, a, testAuto()), bob.deps(t, b, testAuto())
	da.Owner, db.Owner = "alice", "bob"
	startRiver(t, da)
	startRiver(t, db)
	waitFor(t, 30*time.Second, "both owners' slots run", func() bool {
		return slotStatus(t, a, alices.ID, aKey) == store.TaskRunSucceeded && slotStatus(t, a, bobs.ID, bKey) == store.TaskRunSucceeded
	})
	for who, rec := range map[string]*schedRecorder{"alice": &alice, "bob": &bob} {
		runs := rec.slots(t, true)
		if len(runs) != 1 || !strings.HasPrefix(runs[0], who[:3]) {
			t.Errorf("%s's replica ran %q; want only her or his own slot", who, runs)
		}
	}
}

// TestRiverDeadReplicaRunRescued: replica a claimed a slot and started
// its run as river's worker, and its job looks stuck (attempted an hour
// ago, still running). Replica b's river rescues the job; while a still
// holds the run (its run lock: a is alive), the rescued attempt waits and
// never runs the slot again; once a is gone (its store closed, as its
// process's sessions end when it dies), the attempt records the run
// interrupted and the job completes. Run is never called on b.
func TestRiverDeadReplicaRunRescued(t *testing.T) {
	where := riverWhere(t)
	a, b := openSchedStore(t, where), openSchedStore(t, where)
	ctx := t.Context()
	tk, slot, key := riverDueTask(t, a, "stuck")
	// a ran the slot's job: claimed, started, then stopped answering.
	dbA := plainDB(t, a)
	if err := migrateRiver(ctx, a, dbA, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &slotWorker{})
	insert, err := river.NewClient(riverdatabasesql.New(dbA), &river.Config{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	args := slotArgs{TaskID: tk.ID, SlotKey: key, Slot: slot, StartBy: slot.Add(schedule.Grace), Budget: time.Minute}
	res, err := insert.Insert(ctx, args, &river.InsertOpts{Queue: queueOf("owner")})
	if err != nil {
		t.Fatal(err)
	}
	job := res.Job.ID
	if _, err := dbA.ExecContext(ctx, `UPDATE river_job SET state = 'running', attempt = 1,
		attempted_at = now() - interval '1 hour', attempted_by = ARRAY['replica-a'] WHERE id = $1`, job); err != nil {
		t.Fatal(err)
	}
	err = a.Write(ctx, func(tx *store.Tx) error {
		id, claimed, err := tx.ClaimSlot(tk.ID, key, slot, time.Now())
		if err != nil || !claimed {
			return fmt.Errorf("claim = %v, %v", claimed, err)
		}
		return tx.StartRun(id)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The next run time moved on when the slot was queued.
	if err := a.Write(ctx, func(tx *store.Tx) error { return tx.SetNextRun(tk.ID, slot.Add(time.Hour)) }); err != nil {
		t.Fatal(err)
	}

	var recB schedRecorder
	startRiver(t, recB.deps(t, b, testAuto()))
	dbB := plainDB(t, b)
	jobState := func() (state string, attempt, snoozes int, firstErr string) {
		t.Helper()
		err := dbB.QueryRowContext(ctx, `SELECT state, attempt, coalesce((metadata->>'snoozes')::int, 0),
			coalesce(errors[1]->>'error', '') FROM river_job WHERE id = $1`, job).Scan(&state, &attempt, &snoozes, &firstErr)
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	waitFor(t, 60*time.Second, "the rescued job to find a's run still held", func() bool {
		_, _, snoozes, _ := jobState()
		return snoozes >= 2
	})
	if st := slotStatus(t, b, tk.ID, key); st != store.TaskRunRunning {
		t.Errorf("while a holds the run, its status is %q; want running (left alone)", st)
	}
	// a dies: its sessions end, and its run lock with them.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the rescued job to complete", func() bool {
		state, _, _, _ := jobState()
		return state == "completed"
	})
	state, attempt, _, firstErr := jobState()
	if attempt != 2 || !strings.Contains(firstErr, "Stuck job rescued") {
		t.Errorf("job %s after attempt %d, first error %q; want completed by the rescued second attempt", state, attempt, firstErr)
	}
	want := []string{"stuck@" + slot.UTC().Format(time.RFC3339) + " interrupted: homard stopped during the run; the slot is not run again"}
	if rows := ledgerRows(t, b); !slices.Equal(rows, want) {
		t.Errorf("ledger = %q; want %q", rows, want)
	}
	if runs := recB.slots(t, true); len(runs) != 0 {
		t.Errorf("b ran %q; want no run: a slot is never run twice", runs)
	}
}

// TestRiverChosenOnPostgres: serve's scheduler on a PostgreSQL store is
// river's; its twin on SQLite (TestBuiltInSchedulerOnSQLite) is not.
func TestRiverChosenOnPostgres(t *testing.T) {
	s := openSchedStore(t, riverWhere(t))
	sc := New(Options{Store: s, Config: &config.Config{Automation: testAuto()}}).Scheduler(nil)
	if _, ok := sc.(*riverScheduler); !ok {
		t.Errorf("Scheduler on PostgreSQL is a %T; want river's", sc)
	}
}

// TestRiverRunsOfATaskNeverOverlapAcrossReplicas: while a run of a task
// goes on on replica a, replica b cannot start one of the same task (its
// worker records the slot skipped, as a's own tick would), and can once
// a's run ends; the twin: b runs another task meanwhile. Before, each
// replica knew only its own runs, and two slots of one task could run at
// once on two replicas.
func TestRiverRunsOfATaskNeverOverlapAcrossReplicas(t *testing.T) {
	where := riverWhere(t)
	a, b := openSchedStore(t, where), openSchedStore(t, where)
	var recA, recB schedRecorder
	ra := newRiver(newScheduler(recA.deps(t, a, testAuto())), riverTest)
	rb := newRiver(newScheduler(recB.deps(t, b, testAuto())), riverTest)
	releaseA, ok, err := ra.hold("t1")
	if err != nil || !ok {
		t.Fatalf("a's hold of t1 = %v, %v; want it held", ok, err)
	}
	if _, ok, err := ra.hold("t1"); err != nil || ok {
		t.Errorf("a's second hold of t1 = %v, %v; want refused (a run is in progress here)", ok, err)
	}
	if _, ok, err := rb.hold("t1"); err != nil || ok {
		t.Errorf("b's hold of t1 while a runs it = %v, %v; want refused", ok, err)
	}
	releaseB2, ok, err := rb.hold("t2")
	if err != nil || !ok {
		t.Fatalf("b's hold of another task = %v, %v; want it held", ok, err)
	}
	releaseB2()
	releaseA()
	releaseB, ok, err := rb.hold("t1")
	if err != nil || !ok {
		t.Fatalf("b's hold of t1 after a's run ended = %v, %v; want it held", ok, err)
	}
	releaseB()
}

// TestRiverQueuedSlotsCarried: a tick on PostgreSQL queues a slot as a
// river job and moves its task's next run on at once; a copy of the
// store (homard store migrate) has no river tables, so the slot queued
// and not yet run would never run there. CarryQueuedSlots sets the
// task's next run in the copy back to that slot. The twin: a task with
// nothing queued keeps its next run.
func TestRiverQueuedSlotsCarried(t *testing.T) {
	ctx := t.Context()
	src := openSchedStore(t, riverWhere(t))
	dst := openSchedStore(t, filepath.Join(t.TempDir(), "homard.db"))
	queued, slot, key := riverDueTask(t, src, "queued")
	idle, _, _ := riverDueTask(t, src, "idle")
	next := slot.Add(time.Hour)
	db := plainDB(t, src)
	if err := migrateRiver(ctx, src, db, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	client, err := river.NewClient(riverdatabasesql.New(db), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Insert(ctx, slotArgs{TaskID: queued.ID, SlotKey: key, Slot: slot, StartBy: next}, &river.InsertOpts{Queue: "q"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{queued.ID, idle.ID} {
		if err := src.Write(ctx, func(tx *store.Tx) error { return tx.SetNextRun(id, next) }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Copy(ctx, dst, src); err != nil {
		t.Fatal(err)
	}
	n, err := CarryQueuedSlots(ctx, src, dst)
	if err != nil || n != 1 {
		t.Fatalf("CarryQueuedSlots = %d, %v; want 1 task set back", n, err)
	}
	for id, want := range map[string]time.Time{queued.ID: slot, idle.ID: next} {
		got, err := dst.Task(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !got.NextRunAt.Equal(want) {
			t.Errorf("task %s's next run in the copy = %v; want %v", got.Name, got.NextRunAt, want)
		}
	}
	// Carried once: a second carry finds the copy's next run already there.
	if n, err := CarryQueuedSlots(ctx, src, dst); err != nil || n != 0 {
		t.Errorf("a second CarryQueuedSlots = %d, %v; want 0", n, err)
	}
}
