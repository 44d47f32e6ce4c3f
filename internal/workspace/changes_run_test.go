package workspace

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAppliedBy: a change set applied for a run is listed for that run,
// line for line as the effects of the call that applied it, and only for
// it: not for another run, not before its time, not when a crash left it
// half-applied (recovery rolls that back); once rolled back it is listed
// as such.
func TestAppliedBy(t *testing.T) {
	f := newFixture(t)
	editTree(t, f.root)
	long := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	res, err := f.ws.ApplyChanges(context.Background(), "main", editUpper().read(t), sinceNow(t),
		ApplyOptions{Grade: GradeOptions{RunsCode: true}, Approved: GradeCritical, Run: "run_7"})
	if err != nil {
		t.Fatalf("ApplyChanges: %v", err)
	}
	want := append([]string{"applied as checkpoint " + res.CheckpointID + ":"}, res.Graded.Paths()...)

	got, err := f.ws.AppliedBy("run_7", long)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("AppliedBy(run_7) = %v, %v;\nwant the call's effects %v", got, err, want)
	}
	for _, c := range []struct {
		run   string
		since time.Time
	}{
		{"run_8", long},
		{"", long},
		{"run_7", time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}, // a newer database's run_7
	} {
		if got, err := f.ws.AppliedBy(c.run, c.since); err != nil || len(got) != 0 {
			t.Errorf("AppliedBy(%q, %v) = %v, %v; want nothing", c.run, c.since, got, err)
		}
	}

	// A crash in the middle: nothing listed, before or after recovery.
	f.ws.changesHook = func(i int) error {
		if i == 2 {
			return errors.New("simulated crash")
		}
		return nil
	}
	editTree(t, f.docs)
	f.ws.ApplyChanges(context.Background(), "docs", editUpper().read(t), sinceNow(t),
		ApplyOptions{Grade: GradeOptions{RunsCode: true}, Approved: GradeCritical, Run: "run_9"})
	f.ws.changesHook = nil
	if got, err := f.ws.AppliedBy("run_9", long); err != nil || len(got) != 0 {
		t.Errorf("AppliedBy(run_9) of a half-applied change set = %v, %v; want nothing", got, err)
	}
	if rec, err := f.ws.RecoverChanges(context.Background()); err != nil || len(rec.RolledBack) != 1 {
		t.Fatalf("RecoverChanges = %+v, %v; want one rolled back", rec, err)
	}
	if got, err := f.ws.AppliedBy("run_9", long); err != nil || len(got) != 0 {
		t.Errorf("AppliedBy(run_9) after recovery = %v, %v; want nothing", got, err)
	}

	// Rolled back by the owner: still listed, saying so.
	pv, err := f.ws.RollbackPreview(res.CheckpointID)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ws.RollbackCheckpoint(res.CheckpointID, pv.SavedSHA256()); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	got, err = f.ws.AppliedBy("run_7", long)
	if err != nil || len(got) != len(want) || !strings.Contains(got[0], "(rolled back since)") || !slices.Equal(got[1:], want[1:]) {
		t.Errorf("AppliedBy(run_7) after rollback = %v, %v; want the same lines, headed as rolled back", got, err)
	}
}
