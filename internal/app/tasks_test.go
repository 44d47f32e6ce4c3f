package app

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/automation"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/task"
)

// addApproved adds a task from s and approves the body it shows.
func addApproved(t *testing.T, r *Runtime, s TaskSpec) TaskInfo {
	t.Helper()
	ctx := context.Background()
	in, err := r.Tasks.Add(ctx, s)
	if err != nil {
		t.Fatalf("AddTask(%+v): %v", s, err)
	}
	if in.Status != store.TaskPending || in.Problem == "" || in.Seal != "" {
		t.Fatalf("added task = %+v; want pending, unsealed, with a problem", in)
	}
	out, err := r.Tasks.Approve(ctx, in.ID, in.Hash)
	if err != nil {
		t.Fatalf("ApproveTask: %v", err)
	}
	if out.Status != store.TaskActive || out.Seal == "" || out.Seal != out.SealIfApproved || out.Problem != "" {
		t.Fatalf("approved task = %+v; want active, sealed, no problem", out)
	}
	return out
}

func taskAudit(t *testing.T, r *Runtime) []string {
	t.Helper()
	recs, err := audit.List(context.Background(), r.Store, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rec := range recs {
		out = append(out, rec.Tool+" "+string(rec.Decision)+" "+rec.Rule)
	}
	return out
}

// TestRunNowReadsAFileAndCompletes: an approved task's run reads a file in
// its profile, ends with complete_task, and its summary is the run's and
// is delivered to the web.
func TestRunNowReadsAFileAndCompletes(t *testing.T) {
	r := newTestRuntime(t, "smart")
	writeWorkspaceFile(t, r, "inbox.txt", "two letters\n")
	srv := runServer(t, r,
		openAI(toolCall("c1", "read_file", `{"path":"inbox.txt"}`)),
		openAI(toolCall("c2", "complete_task", `{"summary":"The inbox holds two letters."}`)),
	)
	in := addApproved(t, r, TaskSpec{Name: "digest", Prompt: "Summarise inbox.txt", Every: "1h", Tools: []string{"read_file"}})
	run, err := r.Tasks.RunNow(context.Background(), in.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != store.TaskRunSucceeded || run.Summary != "The inbox holds two letters." || run.Delivery != "web" {
		t.Fatalf("run = %+v; want succeeded with the summary, delivered to web", run)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d model calls; want 2 (complete_task ends the run)", n)
	}
	got := strings.Join(taskAudit(t, r), "\n")
	for _, want := range []string{"task ran task.added", "task ran task.approved", "read_file ran mode.safe.read", "task ran task.completed"} {
		if !strings.Contains(got, want) {
			t.Errorf("audit lacks %q:\n%s", want, got)
		}
	}
}

// TestRunNowRefusedUntilApproved: run-now refuses a pending task and one
// whose approval expired, and records nothing; approved, it runs (twin).
func TestRunNowRefusedUntilApproved(t *testing.T) {
	r := newTestRuntime(t, "smart")
	ctx := context.Background()
	in, err := r.Tasks.Add(ctx, TaskSpec{Name: "d", Prompt: "p", Every: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Tasks.RunNow(ctx, in.ID, nil); !errors.Is(err, task.ErrNotApproved) {
		t.Fatalf("run-now of a pending task: %v; want ErrNotApproved", err)
	}
	if _, err := r.Tasks.Approve(ctx, in.ID, "0000000000000000"); !errors.Is(err, automation.ErrTaskChanged) {
		t.Fatalf("approve with another hash: %v; want ErrTaskChanged", err)
	}
	if _, err := r.Tasks.Approve(ctx, in.ID, in.Hash[:12]); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	r.now = func() time.Time { return now.Add(11 * 24 * time.Hour) }
	if _, err := r.Tasks.RunNow(ctx, in.ID, nil); !errors.Is(err, task.ErrExpired) {
		t.Fatalf("run-now after the expiry: %v; want ErrExpired", err)
	}
	if runs, _ := r.Tasks.Runs(ctx, in.ID, 10); len(runs) != 0 {
		t.Errorf("refused run-now recorded %d runs; want none", len(runs))
	}
	if _, err := r.Tasks.Renew(ctx, in.ID, 0); err != nil {
		t.Fatalf("renew: %v", err)
	}
	runServer(t, r, openAI(toolCall("c1", "complete_task", `{"summary":"ok"}`)))
	run, err := r.Tasks.RunNow(ctx, in.ID, nil)
	if err != nil || run.Status != store.TaskRunSucceeded {
		t.Fatalf("run-now after renewing = %+v, %v; want succeeded", run, err)
	}
}
