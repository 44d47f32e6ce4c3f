package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/store"
)

// TestTaskCeilingRefusesWrite: a task whose sealed ceiling is read, with
// write_file in its profile, proposes a write: in every mode the call is
// denied by ceiling.exceeded (no approval card, nothing written), the
// model is told, the run goes on to complete_task, and the run's record
// names the refused call. Its twin with a write ceiling, in
// the same mode, writes the file.
func TestTaskCeilingRefusesWrite(t *testing.T) {
	for _, c := range []struct {
		mode, ceiling string
		written       bool
	}{
		{"smart", "read", false}, // smart would ask: the ceiling refuses instead
		{"autopilot", "read", false},
		{"yolo", "read", false},
		{"autopilot", "write", true}, // the twin
	} {
		t.Run(c.mode+"/"+c.ceiling, func(t *testing.T) {
			r := newTestRuntime(t, "smart")
			r.Config.Automation.MaxMode = "yolo"
			// Were the call asked rather than refused, nobody answers: the
			// card would lapse at once and stay in the approvals table.
			r.Config.Automation.ApprovalWait = 1
			srv := runServer(t, r,
				openAI(toolCall("c1", "write_file", `{"path":"out.txt","content":"hello\n"}`)),
				openAI(toolCall("c2", "complete_task", `{"summary":"tried to write out.txt"}`)),
			)
			in := addApproved(t, r, TaskSpec{Name: "writer", Prompt: "write out.txt", Every: "1h", Mode: c.mode,
				Tools: []string{"read_file", "write_file"}, Ceiling: c.ceiling})
			if !strings.Contains(in.Canonical, `"ceiling":"`+c.ceiling+`"`) {
				t.Fatalf("sealed body %s lacks the ceiling %s", in.Canonical, c.ceiling)
			}
			run := runNow(t, r, in.ID)
			if run.Status != store.TaskRunSucceeded {
				t.Fatalf("run = %+v; want succeeded (a refused call does not end the run)", run)
			}
			got, err := readWorkspaceFile(r, "out.txt")
			if written := err == nil; written != c.written {
				t.Fatalf("out.txt written = %v (%q); want %v", written, got, c.written)
			}
			aps, err := r.Store.ListApprovals(context.Background(), "", "", time.Now(), 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(aps) != 0 {
				t.Errorf("%d approvals created (the first by %s); want none", len(aps), aps[0].Rule)
			}
			audit := strings.Join(taskAudit(t, r), "\n")
			if c.written {
				if !strings.Contains(audit, "write_file ran mode.autopilot") || run.Refused != "" {
					t.Errorf("twin: audit %q, refused %q; want write_file ran under mode.autopilot, nothing refused", audit, run.Refused)
				}
				return
			}
			if !strings.Contains(audit, "write_file denied ceiling.exceeded") {
				t.Errorf("audit lacks write_file denied ceiling.exceeded:\n%s", audit)
			}
			const reason = "this call writes files or runs a command; the task's ceiling is read"
			if want := "write_file: " + reason + " (ceiling.exceeded)"; run.Refused != want {
				t.Errorf("run.Refused = %q; want %q", run.Refused, want)
			}
			// The model was told, in the tool result of its next request.
			if reqs := srv.Requests(); len(reqs) < 2 || !strings.Contains(string(reqs[1].Body), reason) {
				t.Errorf("the model was not told why its call was refused")
			}
			// `task runs` and the web read the run back with its refusals.
			runs, err := r.Tasks.Runs(context.Background(), in.ID, 5)
			if err != nil || len(runs) != 1 || runs[0].Refused != run.Refused {
				t.Errorf("Runs = %+v, %v; want the run with its refused call", runs, err)
			}
		})
	}
}

// TestTaskAddDefaultCeiling: a task added without --ceiling gets the
// lowest one covering its tools, and one below its tools is kept with a
// warning.
func TestTaskAddDefaultCeiling(t *testing.T) {
	r := newTestRuntime(t, "smart")
	for _, c := range []struct {
		tools         []string
		ceiling, want string
		warn          bool
	}{
		{[]string{"read_file", "current_time"}, "", "read", false},
		{[]string{}, "", "read", false},
		{[]string{"read_file", "write_file"}, "", "write", false},
		{[]string{"read_file", "http_get"}, "", "network", false},
		{[]string{"read_file", "write_file"}, "read", "read", true},
		{[]string{"http_get"}, "network:api.weather.example", "network:api.weather.example", false},
		{[]string{"read_file"}, "send", "send", false},
	} {
		in, err := r.Tasks.Add(context.Background(), TaskSpec{Name: "t", Prompt: "p", Every: "1h", Tools: c.tools, Ceiling: c.ceiling})
		if err != nil {
			t.Errorf("Add(tools %v, ceiling %q): %v", c.tools, c.ceiling, err)
			continue
		}
		if got := in.Body.Ceiling.String(); got != c.want {
			t.Errorf("Add(tools %v, ceiling %q) ceiling = %q; want %q", c.tools, c.ceiling, got, c.want)
		}
		if (in.Warning != "") != c.warn {
			t.Errorf("Add(tools %v, ceiling %q) warning = %q; want one: %v", c.tools, c.ceiling, in.Warning, c.warn)
		}
	}
	if _, err := r.Tasks.Add(context.Background(), TaskSpec{Name: "t", Prompt: "p", Every: "1h", Ceiling: "everything"}); err == nil ||
		!strings.Contains(err.Error(), "--ceiling") {
		t.Errorf("Add(ceiling everything) = %v; want an error naming --ceiling", err)
	}
}
