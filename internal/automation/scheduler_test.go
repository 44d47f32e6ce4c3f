package automation

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/schedule"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/task"
)

// TestSchedulerTimeRules runs at, every and cron tasks in
// America/New_York across both 2025 clock changes: each slot runs once,
// exactly at its instant.
func TestSchedulerTimeRules(t *testing.T) {
	springAt, err := schedule.ParseAt("2025-03-09T02:30", newYork)
	if err != nil {
		t.Fatal(err)
	}
	const ny = "America/New_York"
	tests := []struct {
		name         string
		sched        task.Schedule
		start, until string
		want         []string // slots, UTC
	}{
		{"cron 02:30 daily: spring forward runs at the jump", cronIn("30 2 * * *", ny), "2025-03-08T12:00:00Z", "2025-03-10T12:00:00Z",
			[]string{"2025-03-09T07:00:00Z", "2025-03-10T06:30:00Z"}},
		{"cron 01:30 daily: the repeated hour runs once", cronIn("30 1 * * *", ny), "2025-11-01T12:00:00Z", "2025-11-03T12:00:00Z",
			[]string{"2025-11-02T05:30:00Z", "2025-11-03T06:30:00Z"}},
		{"cron hourly: spring forward", cronIn("0 * * * *", ny), "2025-03-09T05:30:00Z", "2025-03-09T08:30:00Z",
			[]string{"2025-03-09T06:00:00Z", "2025-03-09T07:00:00Z", "2025-03-09T08:00:00Z"}},
		{"cron hourly: fall back, no second 01:00", cronIn("0 * * * *", ny), "2025-11-02T03:30:00Z", "2025-11-02T07:30:00Z",
			[]string{"2025-11-02T04:00:00Z", "2025-11-02T05:00:00Z", "2025-11-02T07:00:00Z"}},
		{"every 1h counts UTC across spring forward", everySched(time.Hour, mustUTC(t, "2025-03-09T00:00:00Z")), "2025-03-09T05:30:00Z", "2025-03-09T08:30:00Z",
			[]string{"2025-03-09T06:00:00Z", "2025-03-09T07:00:00Z", "2025-03-09T08:00:00Z"}},
		{"every 1h counts UTC across fall back", everySched(time.Hour, mustUTC(t, "2025-11-02T00:00:00Z")), "2025-11-02T04:30:00Z", "2025-11-02T08:30:00Z",
			[]string{"2025-11-02T05:00:00Z", "2025-11-02T06:00:00Z", "2025-11-02T07:00:00Z", "2025-11-02T08:00:00Z"}},
		{"at 02:30 local on the spring-forward day", task.Schedule{Kind: task.KindAt, Expr: task.AtExpr(springAt)}, "2025-03-09T00:00:00Z", "2025-03-11T00:00:00Z",
			[]string{"2025-03-09T07:00:00Z"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := dbPath(t)
			synctest.Test(t, func(t *testing.T) {
				sleepUntil(mustUTC(t, tc.start))
				s := openSchedStore(t, path)
				tk := schedAddTask(t, s, schedTask{name: "t", sched: tc.sched})
				var rec schedRecorder
				_, stop := startSched(t, rec.deps(t, s, testAuto()))
				sleepUntil(mustUTC(t, tc.until))
				stop()
				var want []string
				for _, w := range tc.want {
					want = append(want, "t@"+w)
				}
				if got := rec.slots(t, false); !slices.Equal(got, want) {
					t.Errorf("runs = %q; want %q", got, want)
				}
				row, err := s.Task(t.Context(), tk.ID)
				if err != nil {
					t.Fatal(err)
				}
				if tc.sched.Kind == task.KindAt && !row.NextRunAt.IsZero() {
					t.Errorf("an at task that ran has next run %v; want none", row.NextRunAt)
				}
			})
		})
	}
}

// TestSchedulerCatchUp stops homard across three hourly slots: skip
// records the latest as missed and runs none; once runs only the latest,
// and only within the window.
func TestSchedulerCatchUp(t *testing.T) {
	const missed = "t@2025-06-01T03:00:00Z skipped: missed: homard was not running at 03:00 UTC on 2025-06-01"
	tests := []struct {
		catchUp  string
		window   time.Duration
		wantRuns []string
		wantRows []string
	}{
		{task.CatchUpSkip, 6 * time.Hour, nil, []string{missed}},
		{task.CatchUpOnce, 6 * time.Hour, []string{"t@2025-06-01T03:00:00Z"}, []string{"t@2025-06-01T03:00:00Z succeeded"}},
		{task.CatchUpOnce, 30 * time.Minute, nil, []string{missed}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s within %v", tc.catchUp, tc.window), func(t *testing.T) {
			path := dbPath(t)
			synctest.Test(t, func(t *testing.T) {
				sleepUntil(mustUTC(t, "2025-06-01T00:10:00Z"))
				s := openSchedStore(t, path)
				tk := schedAddTask(t, s, schedTask{name: "t", catchUp: tc.catchUp, sched: everySched(time.Hour, mustUTC(t, "2025-06-01T00:00:00Z"))})
				auto := testAuto()
				auto.CatchUpWindow = config.Duration(tc.window)
				var rec schedRecorder
				_, stop := startSched(t, rec.deps(t, s, auto))
				sleepUntil(mustUTC(t, "2025-06-01T00:30:00Z"))
				stop() // down for 01:00, 02:00 and 03:00
				sleepUntil(mustUTC(t, "2025-06-01T03:40:00Z"))
				_, stop = startSched(t, rec.deps(t, s, auto))
				sleepUntil(mustUTC(t, "2025-06-01T03:50:00Z"))
				stop()
				if got := rec.slots(t, true); !slices.Equal(got, tc.wantRuns) {
					t.Errorf("runs = %q; want %q", got, tc.wantRuns)
				}
				if got := ledgerRows(t, s); !slices.Equal(got, tc.wantRows) {
					t.Errorf("ledger = %q; want %q", got, tc.wantRows)
				}
				row, err := s.Task(t.Context(), tk.ID)
				if err != nil {
					t.Fatal(err)
				}
				if want := mustUTC(t, "2025-06-01T04:00:00Z"); !row.NextRunAt.Equal(want) {
					t.Errorf("next run = %v; want %v", row.NextRunAt, want)
				}
			})
		})
	}
}

// TestSchedulerInterruptedRun: a run left running by a process that died
// is marked interrupted when the scheduler starts, and its slot is not
// run again; the next slot runs.
func TestSchedulerInterruptedRun(t *testing.T) {
	path := dbPath(t)
	synctest.Test(t, func(t *testing.T) {
		sleepUntil(mustUTC(t, "2025-06-01T09:30:00Z"))
		s := openSchedStore(t, path)
		tk := schedAddTask(t, s, schedTask{name: "t", sched: everySched(time.Hour, mustUTC(t, "2025-06-01T00:00:00Z"))})
		sleepUntil(mustUTC(t, "2025-06-01T10:00:00Z"))

		// The "crashed" process claimed 10:00 and started it, but died
		// before advancing the task's next run time or finishing.
		crashed, err := store.OpenURL(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		slot := mustUTC(t, "2025-06-01T10:00:00Z")
		err = crashed.Write(t.Context(), func(tx *store.Tx) error {
			id, ok, err := tx.ClaimSlot(tk.ID, "2025-06-01T10:00:00Z", slot, time.Now())
			if err != nil || !ok {
				return fmt.Errorf("claim: %v %v", ok, err)
			}
			return tx.StartRun(id)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := crashed.Close(); err != nil { // drops its run locks, as death would
			t.Fatal(err)
		}

		sleepUntil(mustUTC(t, "2025-06-01T10:00:30Z"))
		var rec schedRecorder
		_, stop := startSched(t, rec.deps(t, s, testAuto()))
		sleepUntil(mustUTC(t, "2025-06-01T10:00:31Z"))
		// The taken slot is passed over at once: the next run is 11:00.
		if row, err := s.Task(t.Context(), tk.ID); err != nil || !row.NextRunAt.Equal(mustUTC(t, "2025-06-01T11:00:00Z")) {
			t.Errorf("next run after the interrupted slot = %v, %v; want 11:00 UTC", row.NextRunAt, err)
		}
		sleepUntil(mustUTC(t, "2025-06-01T11:30:00Z"))
		stop()
		if got, want := rec.slots(t, false), []string{"t@2025-06-01T11:00:00Z"}; !slices.Equal(got, want) {
			t.Errorf("runs = %q; want %q", got, want)
		}
		want := []string{
			"t@2025-06-01T10:00:00Z interrupted: homard stopped during the run; the slot is not run again",
			"t@2025-06-01T11:00:00Z succeeded",
		}
		if got := ledgerRows(t, s); !slices.Equal(got, want) {
			t.Errorf("ledger = %q; want %q", got, want)
		}
	})
}

// TestSchedulerTwoSchedulersOneDatabase: two schedulers on two Stores of
// one file tick together over 50 slots; each slot runs exactly once.
func TestSchedulerTwoSchedulersOneDatabase(t *testing.T) {
	path := dbPath(t)
	synctest.Test(t, func(t *testing.T) {
		sleepUntil(mustUTC(t, "2025-06-01T00:00:30Z"))
		a, b := openSchedStore(t, path), openSchedStore(t, path)
		schedAddTask(t, a, schedTask{name: "t", sched: everySched(time.Minute, mustUTC(t, "2025-06-01T00:00:00Z"))})
		auto := testAuto()
		auto.MaxRunsPerDay = 1000
		var rec schedRecorder
		_, stopA := startSched(t, rec.deps(t, a, auto))
		_, stopB := startSched(t, rec.deps(t, b, auto))
		sleepUntil(mustUTC(t, "2025-06-01T00:50:30Z"))
		stopA()
		stopB()
		checkEachSlotOnce(t, rec.slots(t, false), mustUTC(t, "2025-06-01T00:01:00Z"), time.Minute, 50)
		if rows := ledgerRows(t, a); len(rows) != 50 {
			t.Errorf("ledger has %d rows; want 50: %q", len(rows), rows)
		}
	})
}

// TestSchedulerRunsOnlyItsOwnersTasks (issue 27 point 2): two owners'
// homards on one shared store each run their own owner's tasks, never the
// other's — run by the wrong one, a task would use that owner's home,
// config and key. Each twin: the owner's own task runs every slot.
func TestSchedulerRunsOnlyItsOwnersTasks(t *testing.T) {
	path := dbPath(t)
	synctest.Test(t, func(t *testing.T) {
		sleepUntil(mustUTC(t, "2025-06-01T00:00:30Z"))
		a, b := openSchedStore(t, path), openSchedStore(t, path)
		anchor := mustUTC(t, "2025-06-01T00:00:00Z")
		schedAddTask(t, a, schedTask{name: "alices", owner: "alice", sched: everySched(time.Minute, anchor)})
		schedAddTask(t, a, schedTask{name: "bobs", owner: "bob", sched: everySched(time.Minute, anchor)})
		var alice, bob schedRecorder
		da, db := alice.deps(t, a, testAuto()), bob.deps(t, b, testAuto())
		da.Owner, db.Owner = "alice", "bob"
		_, stopA := startSched(t, da)
		_, stopB := startSched(t, db)
		sleepUntil(mustUTC(t, "2025-06-01T00:05:30Z"))
		stopA()
		stopB()
		for who, rec := range map[string]*schedRecorder{"alice": &alice, "bob": &bob} {
			slots := rec.slots(t, true) // when is TestSchedulerTimeRules'
			if len(slots) != 5 {
				t.Errorf("%s's scheduler ran %q; want her or his own task's 5 slots", who, slots)
			}
			for _, s := range slots {
				if !strings.HasPrefix(s, who[:3]) {
					t.Errorf("%s's scheduler ran %s, another owner's task", who, s)
				}
			}
		}
	})
}

// TestSchedulerRestart stops and starts the scheduler mid-day, on a slot's
// instant and with a new Store: no slot runs twice and none is lost.
func TestSchedulerRestart(t *testing.T) {
	path := dbPath(t)
	synctest.Test(t, func(t *testing.T) {
		sleepUntil(mustUTC(t, "2025-06-01T00:00:00Z"))
		s := openSchedStore(t, path)
		schedAddTask(t, s, schedTask{name: "t", sched: everySched(10*time.Minute, mustUTC(t, "2025-06-01T00:00:00Z"))})
		auto := testAuto()
		auto.MaxRunsPerDay = 1000
		var rec schedRecorder
		_, stop := startSched(t, rec.deps(t, s, auto))
		for _, at := range []string{"2025-06-01T03:00:00Z", "2025-06-01T06:00:00Z"} {
			// Stop on a slot's instant, racing its tick, and start
			// again at once: the slot runs once, whoever takes it.
			time.Sleep(time.Until(mustUTC(t, at)))
			stop()
			_, stop = startSched(t, rec.deps(t, s, auto))
		}
		sleepUntil(mustUTC(t, "2025-06-01T09:05:00Z"))
		stop()
		s2 := openSchedStore(t, path) // a new process, as after a restart
		_, stop = startSched(t, rec.deps(t, s2, auto))
		sleepUntil(mustUTC(t, "2025-06-01T12:00:30Z"))
		stop()
		checkEachSlotOnce(t, rec.slots(t, true), mustUTC(t, "2025-06-01T00:10:00Z"), 10*time.Minute, 72)
	})
}

// checkEachSlotOnce fails unless runs are exactly the n slots first,
// first+step, …, each once.
func checkEachSlotOnce(t *testing.T, runs []string, first time.Time, step time.Duration, n int) {
	t.Helper()
	count := make(map[string]int)
	for _, r := range runs {
		count[r]++
	}
	for i := range n {
		slot := "t@" + first.Add(time.Duration(i)*step).UTC().Format(time.RFC3339)
		if count[slot] != 1 {
			t.Errorf("slot %s ran %d times; want once", slot, count[slot])
		}
		delete(count, slot)
	}
	for r, c := range count {
		t.Errorf("unexpected run %s (%d times)", r, c)
	}
}

// TestSchedulerPreviousRunStillRunning: a slot due while the task's
// previous run still runs is recorded skipped; the next one runs.
func TestSchedulerPreviousRunStillRunning(t *testing.T) {
	path := dbPath(t)
	synctest.Test(t, func(t *testing.T) {
		sleepUntil(mustUTC(t, "2025-06-01T00:30:00Z"))
		s := openSchedStore(t, path)
		tk := schedAddTask(t, s, schedTask{name: "t", sched: everySched(time.Hour, mustUTC(t, "2025-06-01T00:00:00Z"))})
		release := make(chan struct{})
		rec := schedRecorder{block: map[string]chan struct{}{tk.ID: release}}
		_, stop := startSched(t, rec.deps(t, s, testAuto()))
		sleepUntil(mustUTC(t, "2025-06-01T02:30:00Z"))
		rec.mu.Lock()
		delete(rec.block, tk.ID) // later runs do not wait
		rec.mu.Unlock()
		close(release)
		sleepUntil(mustUTC(t, "2025-06-01T03:30:00Z"))
		stop()
		if got, want := rec.slots(t, false), []string{"t@2025-06-01T01:00:00Z", "t@2025-06-01T03:00:00Z"}; !slices.Equal(got, want) {
			t.Errorf("runs = %q; want %q", got, want)
		}
		want := []string{
			"t@2025-06-01T01:00:00Z succeeded",
			"t@2025-06-01T02:00:00Z skipped: the previous run was still running",
			"t@2025-06-01T03:00:00Z succeeded",
		}
		if got := ledgerRows(t, s); !slices.Equal(got, want) {
			t.Errorf("ledger = %q; want %q", got, want)
		}
	})
}

// TestSchedulerTimer: with nothing due for 3 hours the loop wakes once a
// minute (the capped timer) and runs nothing; the slot then runs on
// time. Wake makes a task added meanwhile run on time, not up to a
// minute late.
func TestSchedulerTimer(t *testing.T) {
	path := dbPath(t)
	synctest.Test(t, func(t *testing.T) {
		t0 := mustUTC(t, "2025-06-01T00:00:00Z")
		sleepUntil(t0)
		s := openSchedStore(t, path)
		at := func(d time.Duration) task.Schedule {
			return task.Schedule{Kind: task.KindAt, Expr: task.AtExpr(t0.Add(d))}
		}
		schedAddTask(t, s, schedTask{name: "late", sched: at(3 * time.Hour)})
		var rec schedRecorder
		sc, stop := startSched(t, rec.deps(t, s, testAuto()))
		sleepUntil(t0.Add(3*time.Hour - time.Second))
		if got := sc.ticks.Load(); got != 180 {
			t.Errorf("%d ticks in 3 h with nothing due; want 180 (one at start, then one a minute)", got)
		}
		if got := rec.slots(t, false); len(got) != 0 {
			t.Errorf("runs before anything was due: %q", got)
		}
		sleepUntil(t0.Add(3*time.Hour + 10*time.Second))
		schedAddTask(t, s, schedTask{name: "woken", sched: at(3*time.Hour + 20*time.Second)})
		sc.Wake()
		sleepUntil(t0.Add(4 * time.Hour))
		stop()
		want := []string{"late@2025-06-01T03:00:00Z", "woken@2025-06-01T03:00:20Z"}
		if got := rec.slots(t, false); !slices.Equal(got, want) {
			t.Errorf("runs = %q; want %q", got, want)
		}
	})
}

// TestSchedulerRefusesUndecodableBody: a task whose stored body does not
// decode is refused, never run; a good task next to it still runs.
func TestSchedulerRefusesUndecodableBody(t *testing.T) {
	path := dbPath(t)
	synctest.Test(t, func(t *testing.T) {
		sleepUntil(mustUTC(t, "2025-06-01T00:30:00Z"))
		s := openSchedStore(t, path)
		schedAddTask(t, s, schedTask{name: "good", sched: everySched(time.Hour, mustUTC(t, "2025-06-01T00:00:00Z"))})
		addBrokenTask(t, s, "broken", mustUTC(t, "2025-06-01T01:00:00Z"))
		var rec schedRecorder
		_, stop := startSched(t, rec.deps(t, s, testAuto()))
		sleepUntil(mustUTC(t, "2025-06-01T01:30:00Z"))
		stop()
		if got, want := rec.slots(t, false), []string{"good@2025-06-01T01:00:00Z"}; !slices.Equal(got, want) {
			t.Errorf("runs = %q; want %q", got, want)
		}
		if len(rec.refusals) != 1 || !strings.HasPrefix(rec.refusals[0], "broken: decode task body") {
			t.Errorf("refusals = %q; want one of task broken, saying its body does not decode", rec.refusals)
		}
	})
}

// addBrokenTask stores an approved task whose body is not JSON, due at
// next: a row edited behind homard's back.
func addBrokenTask(t *testing.T, s *store.Store, name string, next time.Time) {
	t.Helper()
	now := time.Now()
	err := s.Write(t.Context(), func(tx *store.Tx) error {
		row := store.Task{ID: task.NewID(), Owner: "owner", Name: name, Body: []byte("{not json"), NextRunAt: next, CreatedAt: now}
		if err := tx.InsertTask(row); err != nil {
			return err
		}
		return tx.ApproveTask(row.ID, row.Body, "00", now, now.Add(24*time.Hour))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSchedulerPlan: Plan says run, skip or refuse with the reason for
// each due task, leaves out the ones not due, and writes nothing.
func TestSchedulerPlan(t *testing.T) {
	path := dbPath(t)
	synctest.Test(t, func(t *testing.T) {
		sleepUntil(mustUTC(t, "2025-06-01T00:30:00Z"))
		s := openSchedStore(t, path)
		hourly := everySched(time.Hour, mustUTC(t, "2025-06-01T00:00:00Z"))
		schedAddTask(t, s, schedTask{name: "due", sched: everySched(time.Hour, mustUTC(t, "2025-06-01T00:30:00Z"))})
		schedAddTask(t, s, schedTask{name: "caught-up", sched: hourly, catchUp: task.CatchUpOnce})
		schedAddTask(t, s, schedTask{name: "missed", sched: hourly})
		schedAddTask(t, s, schedTask{name: "later", sched: everySched(24*time.Hour, mustUTC(t, "2025-06-01T00:00:00Z"))})
		addBrokenTask(t, s, "broken", mustUTC(t, "2025-06-01T01:00:00Z"))
		sleepUntil(mustUTC(t, "2025-06-01T03:30:00Z"))
		// "due" ran on time until now (its slot 03:30 is due this very
		// second); the others were left since 01:00.
		for _, tk := range mustTasks(t, s) {
			if tk.Name == "due" {
				if err := s.Write(t.Context(), func(tx *store.Tx) error { return tx.SetNextRun(tk.ID, mustUTC(t, "2025-06-01T03:30:00Z")) }); err != nil {
					t.Fatal(err)
				}
			}
		}
		before := dumpTables(t, path)
		var rec schedRecorder
		sc := newScheduler(rec.deps(t, s, testAuto()))
		plans, err := sc.Plan(t.Context(), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		got := make(map[string]string)
		for _, p := range plans {
			got[p.Name] = fmt.Sprintf("%s %s: %s", p.Action, p.SlotKey, p.Why)
		}
		want := map[string]string{
			"caught-up": "run 2025-06-01T03:00:00Z: due at 03:00 UTC on 2025-06-01, caught up 30m0s late (catch-up once)",
			"due":       "run 2025-06-01T03:30:00Z: due at 03:30 UTC on 2025-06-01",
			"missed":    "skip 2025-06-01T03:00:00Z: missed: homard was not running at 03:00 UTC on 2025-06-01",
		}
		const refused = "refuse : decode task body: "
		if b := got["broken"]; strings.HasPrefix(b, refused) {
			want["broken"] = b
		} else {
			want["broken"] = refused + "…"
		}
		if !maps.Equal(got, want) {
			t.Errorf("Plan = %q\nwant %q", got, want)
		}
		if after := dumpTables(t, path); after != before {
			t.Errorf("Plan wrote to the database:\nbefore\n%s\nafter\n%s", before, after)
		}
		if len(rec.runs)+len(rec.notices)+len(rec.refusals) != 0 {
			t.Errorf("Plan ran, refused or notified: %v %q %q", rec.runs, rec.notices, rec.refusals)
		}
	})
}

func mustTasks(t *testing.T, s *store.Store) []store.Task {
	t.Helper()
	ts, err := s.Tasks(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestBuiltInSchedulerOnSQLite: serve's scheduler on a SQLite store is the
// built-in one, in every build (river is for a shared PostgreSQL store:
// TestRiverChosenOnPostgres is its twin).
func TestBuiltInSchedulerOnSQLite(t *testing.T) {
	s := openSchedStore(t, filepath.Join(t.TempDir(), "homard.db"))
	sc := New(Options{Store: s, Config: &config.Config{Automation: testAuto()}}).Scheduler(nil)
	if _, ok := sc.(*sqliteScheduler); !ok {
		t.Errorf("Scheduler on SQLite is a %T; want the built-in one", sc)
	}
}
