package store

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestTaskRunLifecycle(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	addTask(t, s, "t1", t0)
	id, _ := claim(t, s, "t1", "a", t0)
	write(t, s, func(tx *Tx) error { return tx.StartRun(id) })
	if err := s.Write(ctx, func(tx *Tx) error { return tx.StartRun(id) }); !errors.Is(err, ErrTaskRunEnded) {
		t.Errorf("StartRun of a running run = %v; want ErrTaskRunEnded", err)
	}
	end := TaskRunEnd{Status: TaskRunSucceeded, Summary: "3 new mails", Usage: []byte(`{"calls":2}`), Tokens: 1234, EndedAt: t0.Add(time.Minute)}
	write(t, s, func(tx *Tx) error { return tx.FinishRun(id, end) })
	runs, err := s.RecentRuns(ctx, "t1", 3)
	if err != nil || len(runs) != 1 {
		t.Fatalf("RecentRuns = %v, %v; want one run", runs, err)
	}
	r := runs[0]
	if r.ID != id || r.Status != TaskRunSucceeded || r.Summary != end.Summary || string(r.Usage) != `{"calls":2}` ||
		r.Tokens != 1234 || !r.EndedAt.Equal(end.EndedAt) || !r.SlotAt.Equal(t0) || r.SlotKey != "a" || !r.StartedAt.Equal(t0.Add(time.Second)) {
		t.Errorf("run = %+v; want what FinishRun recorded", r)
	}
	for _, c := range []struct {
		name string
		id   int64
		end  TaskRunEnd
		want error
	}{
		{"finish twice", id, TaskRunEnd{Status: TaskRunFailed}, ErrTaskRunEnded},
		{"unknown run", id + 100, TaskRunEnd{Status: TaskRunFailed}, ErrNotFound},
	} {
		if err := s.Write(ctx, func(tx *Tx) error { return tx.FinishRun(c.id, c.end) }); !errors.Is(err, c.want) {
			t.Errorf("%s: FinishRun = %v; want %v", c.name, err, c.want)
		}
	}
	for _, st := range []string{TaskRunClaimed, TaskRunRunning, "done", ""} {
		id2, _ := claim(t, s, "t1", "b-"+st, t0)
		if err := s.Write(ctx, func(tx *Tx) error { return tx.FinishRun(id2, TaskRunEnd{Status: st}) }); err == nil {
			t.Errorf("FinishRun(status %q) succeeded; want an error (not a final status)", st)
		}
	}
	// Usage defaults to an empty object.
	id3, _ := claim(t, s, "t1", "c", t0)
	write(t, s, func(tx *Tx) error {
		return tx.FinishRun(id3, TaskRunEnd{Status: TaskRunRefused, Error: "body changed"})
	})
	if runs, _ := s.RecentRuns(ctx, "t1", 1); len(runs) != 1 || string(runs[0].Usage) != "{}" {
		t.Errorf("run without usage: %+v; want usage {}", runs)
	}
}

// TestSlotRun: a slot's run is found by its task and key, as it was
// recorded; a slot without one, or another task's same key, is not found.
func TestSlotRun(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	addTask(t, s, "t1", t0)
	addTask(t, s, "t2", t0)
	id, _ := claim(t, s, "t1", "a", t0)
	write(t, s, func(tx *Tx) error { return tx.StartRun(id) })
	r, err := s.SlotRun(ctx, "t1", "a")
	if err != nil || r.ID != id || r.Status != TaskRunRunning || r.SlotKey != "a" || !r.SlotAt.Equal(t0) {
		t.Errorf("SlotRun(t1, a) = %+v, %v; want run %d, running", r, err, id)
	}
	for _, c := range [][2]string{{"t1", "b"}, {"t2", "a"}} {
		if r, err := s.SlotRun(ctx, c[0], c[1]); !errors.Is(err, ErrNotFound) {
			t.Errorf("SlotRun(%s, %s) = %+v, %v; want ErrNotFound", c[0], c[1], r, err)
		}
	}
}

// TestMarkInterrupted: runs left claimed or running by a Store that is
// gone (closed: its run locks dropped, as when a process dies) are marked
// interrupted and never claimed again; the runs of a live Store on the
// same file — another scheduler, a run-now next to the daemon, or the
// caller itself — are left alone. With the platform's locker and flock.
func TestMarkInterrupted(t *testing.T) {
	for _, l := range []struct {
		name string
		make func(path string) runLocker
	}{
		{"platform", newRunLocker},
		{"flock", func(path string) runLocker { return newFlockLocks(path) }},
	} {
		t.Run(l.name, func(t *testing.T) { testMarkInterrupted(t, l.make) })
	}
}

func testMarkInterrupted(t *testing.T, locker func(string) runLocker) {
	path := filepath.Join(t.TempDir(), "homard.db")
	open := func() *Store {
		s, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		s.runs = locker(s.path)
		t.Cleanup(func() { s.Close() })
		return s
	}
	crashed, live, restarted := open(), open(), open()
	addTask(t, crashed, "t1", t0)
	claimed, _ := claim(t, crashed, "t1", "claimed", t0)
	running, _ := claim(t, crashed, "t1", "running", t0.Add(time.Minute))
	done, _ := claim(t, crashed, "t1", "done", t0.Add(2*time.Minute))
	write(t, crashed, func(tx *Tx) error { return tx.StartRun(running) })
	write(t, crashed, func(tx *Tx) error { return tx.FinishRun(done, TaskRunEnd{Status: TaskRunSucceeded, EndedAt: t0}) })
	other, _ := claim(t, live, "t1", "live", t0.Add(3*time.Minute))
	own, _ := claim(t, restarted, "t1", "own", t0.Add(4*time.Minute))
	crashed.Close()

	restart := t0.Add(time.Hour)
	var n int64
	write(t, restarted, func(tx *Tx) (err error) { n, err = tx.MarkInterrupted(restart); return err })
	if n != 2 {
		t.Errorf("MarkInterrupted = %d; want 2 (the crashed store's claimed and running runs)", n)
	}
	runs, err := restarted.RecentRuns(t.Context(), "t1", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{claimed: TaskRunInterrupted, running: TaskRunInterrupted, done: TaskRunSucceeded, other: TaskRunClaimed, own: TaskRunClaimed}
	for _, r := range runs {
		if r.Status != want[r.ID] {
			t.Errorf("run %s: status %s; want %s", r.SlotKey, r.Status, want[r.ID])
		}
		if r.Status == TaskRunInterrupted && (!r.EndedAt.Equal(restart) || r.Error == "") {
			t.Errorf("interrupted run %s: ended %v, error %q; want %v and a reason", r.SlotKey, r.EndedAt, r.Error, restart)
		}
	}
	// The interrupted slot is not run again.
	if _, ok := claim(t, restarted, "t1", "running", t0.Add(time.Minute)); ok {
		t.Error("an interrupted slot was claimed again")
	}
	// The live runs finish normally; then nothing is left to interrupt,
	// even once the live store is gone.
	write(t, live, func(tx *Tx) error { return tx.FinishRun(other, TaskRunEnd{Status: TaskRunSucceeded, EndedAt: restart}) })
	write(t, restarted, func(tx *Tx) error { return tx.FinishRun(own, TaskRunEnd{Status: TaskRunFailed, EndedAt: restart}) })
	live.Close()
	write(t, restarted, func(tx *Tx) (err error) { n, err = tx.MarkInterrupted(restart); return err })
	if n != 0 {
		t.Errorf("second MarkInterrupted = %d; want 0", n)
	}
}

// TestClaimRolledBackLeavesNoLock: a claim whose transaction rolls back
// holds no lock, and its slot is free.
func TestClaimRolledBackLeavesNoLock(t *testing.T) {
	s := openTest(t)
	addTask(t, s, "t1", t0)
	var id int64
	err := s.Write(t.Context(), func(tx *Tx) (err error) {
		id, _, err = tx.ClaimSlot("t1", "k", t0, t0)
		if err != nil {
			return err
		}
		return errors.New("rolled back")
	})
	if err == nil || id == 0 {
		t.Fatalf("Write = %v, run %d; want the rollback error and a run id", err, id)
	}
	free, done, err := s.runs.probe()
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if ok, err := free(taskRunLock(id)); err != nil || !ok {
		t.Errorf("lock of the rolled-back claim: free = %v, %v; want free", ok, err)
	}
	if _, ok := claim(t, s, "t1", "k", t0); !ok {
		t.Error("the slot of a rolled-back claim could not be claimed")
	}
}

func TestRecentRunsNewestFirst(t *testing.T) {
	s := openTest(t)
	addTask(t, s, "t1", t0)
	addTask(t, s, "t2", t0)
	for i, k := range []string{"1", "2", "3", "4", "5"} {
		claim(t, s, "t1", k, t0.Add(time.Duration(i)*time.Hour))
	}
	claim(t, s, "t2", "6", t0.Add(9*time.Hour))
	for _, c := range []struct {
		n    int
		want string
	}{{3, "5 4 3"}, {0, "5 4 3"}, {10, "5 4 3 2 1"}, {1, "5"}} {
		runs, err := s.RecentRuns(t.Context(), "t1", c.n)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for i, r := range runs {
			if i > 0 {
				got += " "
			}
			got += r.SlotKey
		}
		if got != c.want {
			t.Errorf("RecentRuns(t1, %d) = %s; want %s", c.n, got, c.want)
		}
	}
}

func TestRunsPerDayAndTokensToday(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	addTask(t, s, "t1", t0)
	addTask(t, s, "t2", t0)
	// 2025-11-02 is 25 hours long in New York.
	day := time.Date(2025, 11, 2, 12, 0, 0, 0, ny)
	run := func(task, key string, at time.Time, status string, tokens int64) {
		t.Helper()
		write(t, s, func(tx *Tx) error {
			id, ok, err := tx.ClaimSlot(task, key, at, at)
			if err != nil || !ok {
				t.Fatalf("ClaimSlot(%s, %s) = %v, %v", task, key, ok, err)
			}
			if status == TaskRunClaimed {
				return nil
			}
			return tx.FinishRun(id, TaskRunEnd{Status: status, Tokens: tokens, EndedAt: at})
		})
	}
	run("t1", "before", time.Date(2025, 11, 1, 23, 59, 59, 0, ny), TaskRunSucceeded, 1000)
	run("t1", "midnight", time.Date(2025, 11, 2, 0, 0, 0, 0, ny), TaskRunSucceeded, 10)
	run("t1", "repeated-hour", time.Date(2025, 11, 2, 1, 30, 0, 0, ny).Add(time.Hour), TaskRunFailed, 20) // the second 01:30
	run("t1", "skipped", time.Date(2025, 11, 2, 9, 0, 0, 0, ny), TaskRunSkipped, 0)
	run("t1", "refused", time.Date(2025, 11, 2, 10, 0, 0, 0, ny), TaskRunRefused, 0)
	run("t1", "open", time.Date(2025, 11, 2, 11, 0, 0, 0, ny), TaskRunClaimed, 0)
	run("t1", "late", time.Date(2025, 11, 2, 23, 59, 59, 0, ny), TaskRunInterrupted, 30)
	run("t2", "other", time.Date(2025, 11, 2, 8, 0, 0, 0, ny), TaskRunSucceeded, 400)
	run("t1", "after", time.Date(2025, 11, 3, 0, 0, 0, 0, ny), TaskRunSucceeded, 5000)

	if n, err := s.RunsPerDay(ctx, "t1", day); err != nil || n != 4 {
		t.Errorf("RunsPerDay(t1, 2025-11-02 New York) = %d, %v; want 4 (midnight, repeated-hour, open, late)", n, err)
	}
	if n, err := s.RunsPerDay(ctx, "t2", day); err != nil || n != 1 {
		t.Errorf("RunsPerDay(t2) = %d, %v; want 1", n, err)
	}
	if n, err := s.TaskTokensToday(ctx, "owner", day); err != nil || n != 460 {
		t.Errorf("TaskTokensToday(2025-11-02 New York) = %d, %v; want 460 (10+20+30+400)", n, err)
	}
	// The same instant's day in UTC is another window: 04:00Z to 04:00Z
	// the next day is New York's day, so "before" is in and "late" out.
	if n, err := s.TaskTokensToday(ctx, "owner", day.UTC()); err != nil || n != 1430 {
		t.Errorf("TaskTokensToday(2025-11-02 UTC) = %d, %v; want 1430 (1000+10+20+400)", n, err)
	}
}
