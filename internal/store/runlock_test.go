package store

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

// TestOrphanedRuns: a run left running is orphaned only once the store
// (the process) that ran it is gone; a live runner's run — in another
// Store on the same file, as the daemon next to a CLI command, or in this
// one — is never returned. Finished runs and rolled-back inserts leave no
// lock behind. It runs with this platform's locker and with the flock
// locker other Unix systems use.
func TestOrphanedRuns(t *testing.T) {
	lockers := []struct {
		name string
		make func(path string) runLocker
	}{
		{"platform", newRunLocker},
		{"flock", func(path string) runLocker { return newFlockLocks(path) }},
	}
	for _, l := range lockers {
		t.Run(l.name, func(t *testing.T) { testOrphanedRuns(t, l.make) })
	}
}

func testOrphanedRuns(t *testing.T, locker func(path string) runLocker) {
	path := filepath.Join(t.TempDir(), "homard.db")
	open := func() *Store {
		s, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		s.runs = locker(s.path)
		return s
	}
	runner, watcher := open(), open()
	defer watcher.Close()
	insert := func(s *Store, status string) string {
		var id string
		write(t, s, func(tx *Tx) error {
			if err := tx.EnsureSession("s1", "alice", t0); err != nil {
				return err
			}
			var err error
			id, err = tx.InsertToolRun(ToolRun{SessionID: "s1", Owner: "alice", Tool: "write_file", Status: status, CreatedAt: t0})
			return err
		})
		return id
	}
	orphans := func(s *Store) []string {
		var ids []string
		write(t, s, func(tx *Tx) error {
			runs, err := tx.OrphanedRuns(0)
			for _, r := range runs {
				ids = append(ids, r.ID)
			}
			return err
		})
		return ids
	}
	live := insert(runner, RunRunning)
	done := insert(runner, RunRunning)
	write(t, runner, func(tx *Tx) error { return tx.UpdateToolRun(done, RunSucceeded, "ok", false, t0) })
	pending := insert(runner, RunRequested)
	moved := insert(runner, RunRequested)
	write(t, runner, func(tx *Tx) error { return tx.UpdateToolRun(moved, RunRunning, "", false, t0) })
	// A running insert that rolls back releases its lock with the row.
	boom := errors.New("boom")
	err := runner.Write(t.Context(), func(tx *Tx) error {
		if _, err := tx.InsertToolRun(ToolRun{SessionID: "s1", Owner: "alice", Status: RunRunning, CreatedAt: t0}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("rolled-back insert: %v", err)
	}

	if got := orphans(watcher); len(got) != 0 {
		t.Errorf("orphans while the runner lives = %v; want none", got)
	}
	if got := orphans(runner); len(got) != 0 {
		t.Errorf("the runner's own orphans = %v; want none", got)
	}
	// The finished run's lock is free again: marking it is refused as
	// finished, not hidden by a stale lock.
	if err := runner.Close(); err != nil {
		t.Fatal(err)
	}
	got := orphans(watcher)
	if want := []string{live, moved}; !slices.Equal(got, want) {
		t.Fatalf("orphans after the runner closed = %v; want %v (not %s, %s)", got, want, done, pending)
	}
	write(t, watcher, func(tx *Tx) error { return tx.InterruptToolRun(live, "homard stopped while it ran", t0) })
	err = watcher.Write(t.Context(), func(tx *Tx) error { return tx.InterruptToolRun(done, "x", t0) })
	if !errors.Is(err, ErrRunFinished) {
		t.Errorf("InterruptToolRun of a finished run = %v; want ErrRunFinished", err)
	}
	r, err := watcher.GetToolRun(t.Context(), live)
	if err != nil || r.Status != RunFailed || r.Rule != RunInterrupted || !r.IsError || r.Result != "homard stopped while it ran" {
		t.Errorf("interrupted run = %+v, %v; want failed, %s, the reason as result", r, err, RunInterrupted)
	}
	list, err := watcher.InterruptedRuns(t.Context(), t0, 0)
	if err != nil || len(list) != 1 || list[0].ID != live {
		t.Errorf("InterruptedRuns = %v, %v; want [%s]", list, err, live)
	}
	if got := orphans(watcher); !slices.Equal(got, []string{moved}) {
		t.Errorf("orphans after marking one = %v; want [%s]", got, moved)
	}
}

func TestIntegrityStateRoundTrip(t *testing.T) {
	s := openTest(t)
	st, err := s.IntegrityState(t.Context())
	if err != nil || st != (IntegrityState{}) {
		t.Fatalf("fresh IntegrityState = %+v, %v; want zero", st, err)
	}
	want := IntegrityState{BaseSeq: 2, BaseHash: "b", VerifiedSeq: 7, VerifiedHash: "v", FullAt: t0,
		Problem: "audit broken", ProblemAt: t0, AckedProblem: "old", AckedAt: t0, AckedBy: "alice"}
	write(t, s, func(tx *Tx) error { return tx.SetIntegrityState(want) })
	got, err := s.IntegrityState(t.Context())
	if err != nil || got != want {
		t.Errorf("IntegrityState = %+v, %v; want %+v", got, err, want)
	}
	if p, err := s.IntegrityProblem(t.Context()); p != "audit broken" || err != nil {
		t.Errorf("IntegrityProblem = %q, %v", p, err)
	}
	if err := s.QuickCheck(t.Context()); err != nil {
		t.Errorf("QuickCheck of a sound database = %v", err)
	}
}

// TestTryLockAloneOncePerProcess: TryLockAlone refuses a name this
// process holds already (TryLock would grant it again), and grants it
// once released; another name is its own.
func TestTryLockAloneOncePerProcess(t *testing.T) {
	st, err := Open(t.Context(), filepath.Join(t.TempDir(), "homard.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	unlock, ok, err := st.TryLockAlone("outbox:telegram:1")
	if err != nil || !ok {
		t.Fatalf("first taking: %v, %v", ok, err)
	}
	if _, ok, err := st.TryLockAlone("outbox:telegram:1"); err != nil || ok {
		t.Fatalf("second taking in this process: %v, %v; want refused", ok, err)
	}
	other, ok, err := st.TryLockAlone("outbox:telegram:2")
	if err != nil || !ok {
		t.Fatalf("another name: %v, %v", ok, err)
	}
	other()
	unlock()
	again, ok, err := st.TryLockAlone("outbox:telegram:1")
	if err != nil || !ok {
		t.Fatalf("after release: %v, %v", ok, err)
	}
	again()
}
