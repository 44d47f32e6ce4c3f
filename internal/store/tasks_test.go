package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func addTask(t testing.TB, s *Store, id string, next time.Time) {
	t.Helper()
	err := s.Write(context.Background(), func(tx *Tx) error {
		return tx.InsertTask(Task{ID: id, Owner: "owner", Name: "digest " + id, Body: []byte(`{"id":"` + id + `"}`), NextRunAt: next, CreatedAt: t0})
	})
	if err != nil {
		t.Fatalf("InsertTask(%s): %v", id, err)
	}
}

func approve(t testing.TB, s *Store, id string) {
	t.Helper()
	err := s.Write(context.Background(), func(tx *Tx) error {
		return tx.ApproveTask(id, []byte(`{"id":"`+id+`","v":2}`), "mac-"+id, t0, t0.Add(240*time.Hour))
	})
	if err != nil {
		t.Fatalf("ApproveTask(%s): %v", id, err)
	}
}

func TestTaskLifecycle(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	addTask(t, s, "t1", t0)
	got, err := s.Task(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != TaskPending || got.MAC != "" || !got.ApprovedAt.IsZero() || !got.NextRunAt.Equal(t0) || got.Owner != "owner" {
		t.Fatalf("new task = %+v; want pending, no MAC, next run %v", got, t0)
	}
	// A pending task cannot be resumed: it has no approval.
	err = s.Write(ctx, func(tx *Tx) error { return tx.SetTaskStatus("t1", TaskActive) })
	if !errors.Is(err, ErrTaskStatus) {
		t.Errorf("activate unapproved task: %v; want ErrTaskStatus", err)
	}
	approve(t, s, "t1")
	got, _ = s.Task(ctx, "t1")
	if got.Status != TaskActive || got.MAC != "mac-t1" || string(got.Body) != `{"id":"t1","v":2}` || !got.ExpiresAt.Equal(t0.Add(240*time.Hour)) {
		t.Fatalf("approved task = %+v; want active with the new body, MAC and expiry", got)
	}
	for _, c := range []struct {
		to, want string
		err      error
	}{
		{TaskPaused, TaskPaused, nil},
		{TaskActive, TaskActive, nil},
		{"running", TaskActive, ErrTaskStatus},
		{TaskRemoved, TaskRemoved, nil},
		{TaskActive, TaskRemoved, ErrTaskStatus}, // removed is final
	} {
		err := s.Write(ctx, func(tx *Tx) error { return tx.SetTaskStatus("t1", c.to) })
		if !errors.Is(err, c.err) || (c.err == nil && err != nil) {
			t.Errorf("SetTaskStatus(%s) = %v; want %v", c.to, err, c.err)
		}
		if got, _ := s.Task(ctx, "t1"); got.Status != c.want {
			t.Errorf("after SetTaskStatus(%s): status %s; want %s", c.to, got.Status, c.want)
		}
	}
	err = s.Write(ctx, func(tx *Tx) error { return tx.ApproveTask("t1", []byte(`{}`), "m", t0, t0) })
	if !errors.Is(err, ErrTaskStatus) {
		t.Errorf("approve removed task: %v; want ErrTaskStatus", err)
	}
	for name, fn := range map[string]func(*Tx) error{
		"ApproveTask":   func(tx *Tx) error { return tx.ApproveTask("nope", []byte(`{}`), "m", t0, t0) },
		"SetTaskStatus": func(tx *Tx) error { return tx.SetTaskStatus("nope", TaskPaused) },
		"SetNextRun":    func(tx *Tx) error { return tx.SetNextRun("nope", t0) },
	} {
		if err := s.Write(ctx, fn); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s(unknown id) = %v; want ErrNotFound", name, err)
		}
	}
	if _, err := s.Task(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Task(unknown) = %v; want ErrNotFound", err)
	}
}

func TestApprovePausedTaskStaysPaused(t *testing.T) {
	s := openTest(t)
	addTask(t, s, "t1", t0)
	approve(t, s, "t1")
	write(t, s, func(tx *Tx) error { return tx.SetTaskStatus("t1", TaskPaused) })
	approve(t, s, "t1") // renew
	if got, _ := s.Task(t.Context(), "t1"); got.Status != TaskPaused {
		t.Errorf("renewed paused task: status %s; want paused", got.Status)
	}
}

func TestDueTasksOrderAndLimit(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	now := t0.Add(time.Hour)
	// Inserted out of order; b and c tie on their next run.
	for _, c := range []struct {
		id     string
		next   time.Time
		status string
	}{
		{"c", t0.Add(10 * time.Minute), TaskActive},
		{"a", t0.Add(30 * time.Minute), TaskActive},
		{"b", t0.Add(10 * time.Minute), TaskActive},
		{"d", t0, TaskActive},
		{"future", now.Add(time.Nanosecond), TaskActive},
		{"none", time.Time{}, TaskActive},
		{"paused", t0, TaskPaused},
		{"pending", t0, TaskPending},
		{"removed", t0, TaskRemoved},
		{"exact", now, TaskActive},
	} {
		addTask(t, s, c.id, c.next)
		if c.status != TaskPending {
			approve(t, s, c.id)
			if c.status != TaskActive {
				write(t, s, func(tx *Tx) error { return tx.SetTaskStatus(c.id, c.status) })
			}
		}
	}
	for _, c := range []struct {
		limit int
		want  string
	}{
		{0, "d b c a exact"},
		{3, "d b c"},
		{1, "d"},
	} {
		due, err := s.DueTasks(ctx, "owner", now, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(due); got != c.want {
			t.Errorf("DueTasks(now, %d) = %s; want %s", c.limit, got, c.want)
		}
	}
	next, ok, err := s.NextRunAt(ctx, "owner")
	if err != nil || !ok || !next.Equal(t0) {
		t.Errorf("NextRunAt = %v, %v, %v; want %v (d), true", next, ok, err, t0)
	}
	write(t, s, func(tx *Tx) error { return tx.SetNextRun("d", now.Add(time.Hour)) })
	if due, _ := s.DueTasks(ctx, "owner", now, 0); ids(due) != "b c a exact" {
		t.Errorf("after SetNextRun(d, later): DueTasks = %s; want b c a exact", ids(due))
	}
	list, err := s.Tasks(ctx, "owner")
	if err != nil || len(list) != 9 {
		t.Errorf("Tasks(owner) = %d tasks, %v; want 9 (every one but the removed)", len(list), err)
	}
	if list, _ := s.Tasks(ctx, "someone else"); len(list) != 0 {
		t.Errorf("Tasks(someone else) = %s; want none", ids(list))
	}
}

func TestNextRunAtEmpty(t *testing.T) {
	s := openTest(t)
	addTask(t, s, "pending", t0)
	if next, ok, err := s.NextRunAt(t.Context(), "owner"); err != nil || ok {
		t.Errorf("NextRunAt with no active task = %v, %v, %v; want false", next, ok, err)
	}
}

func ids(ts []Task) string {
	var out string
	for i, t := range ts {
		if i > 0 {
			out += " "
		}
		out += t.ID
	}
	return out
}

func claim(t testing.TB, s *Store, task, slot string, at time.Time) (int64, bool) {
	t.Helper()
	var id int64
	var ok bool
	err := s.Write(context.Background(), func(tx *Tx) (err error) {
		id, ok, err = tx.ClaimSlot(task, slot, at, at.Add(time.Second))
		return err
	})
	if err != nil {
		t.Fatalf("ClaimSlot(%s, %s): %v", task, slot, err)
	}
	return id, ok
}

func TestClaimSlotOnce(t *testing.T) {
	s := openTest(t)
	addTask(t, s, "t1", t0)
	addTask(t, s, "t2", t0)
	id, ok := claim(t, s, "t1", "2026-03-01T12:00", t0)
	if !ok || id == 0 {
		t.Fatalf("first claim = %d, %v; want a run id, true", id, ok)
	}
	if id2, ok := claim(t, s, "t1", "2026-03-01T12:00", t0); ok || id2 != 0 {
		t.Errorf("second claim of the same slot = %d, %v; want 0, false", id2, ok)
	}
	// The twins: another slot of the task, and the same slot of another task.
	if _, ok := claim(t, s, "t1", "2026-03-01T13:00", t0.Add(time.Hour)); !ok {
		t.Error("claim of the next slot was refused")
	}
	if _, ok := claim(t, s, "t2", "2026-03-01T12:00", t0); !ok {
		t.Error("claim of the same slot of another task was refused")
	}
	// A finished run's slot is still taken.
	write(t, s, func(tx *Tx) error { return tx.FinishRun(id, TaskRunEnd{Status: TaskRunSucceeded, EndedAt: t0}) })
	if _, ok := claim(t, s, "t1", "2026-03-01T12:00", t0); ok {
		t.Error("a finished slot was claimed again")
	}
	err := s.Write(t.Context(), func(tx *Tx) error {
		_, _, err := tx.ClaimSlot("unknown", "k", t0, t0)
		return err
	})
	if err == nil {
		t.Error("ClaimSlot of an unknown task succeeded; want a foreign key error")
	}
}

// TestClaimSlotTwoStores: two schedulers, each with its own *Store on one
// database file, claim the same slots at once; each slot is claimed once.
func TestClaimSlotTwoStores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "homard.db")
	var stores [2]*Store
	for i := range stores {
		s, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}
	addTask(t, stores[0], "t1", t0)
	const slots = 50
	var claims [2]int
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	start := make(chan struct{}) // both begin together, so they contend
	for i, s := range stores {
		wg.Go(func() {
			<-start
			for k := range slots {
				err := s.Write(context.Background(), func(tx *Tx) error {
					_, ok, err := tx.ClaimSlot("t1", fmt.Sprint("slot-", k), t0.Add(time.Duration(k)*time.Minute), t0)
					if ok {
						claims[i]++
					}
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("ClaimSlot: %v", err)
	}
	if claims[0]+claims[1] != slots {
		t.Errorf("claims: store A %d + store B %d = %d; want exactly %d (each slot once)", claims[0], claims[1], claims[0]+claims[1], slots)
	}
	runs, err := stores[1].RecentRuns(t.Context(), "t1", 1000)
	if err != nil || len(runs) != slots {
		t.Errorf("RecentRuns = %d rows, %v; want %d", len(runs), err, slots)
	}
}
