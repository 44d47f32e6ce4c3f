package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/llm/llmtest"
)

// taskHome is a home initialised against srv, and a runner of the built
// binary on it: exit code, stdout, stderr. stdin is never a terminal.
func taskHome(t *testing.T, srv *llmtest.Server) (string, func(stdin string, args ...string) (int, string, string)) {
	t.Helper()
	bin := buildHomard(t)
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "OPENAI_API_KEY=sk-test-TASKKEY0123456789",
		"XDG_CONFIG_HOME=" + t.TempDir(), "XDG_DATA_HOME=" + t.TempDir(), "TZ=Europe/Paris"}
	env = append(env, storeEnv(t, home)...)
	homard := func(stdin string, args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--home", home}, args...)...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatalf("homard %s: %v", strings.Join(args, " "), err)
		}
		return cmd.ProcessState.ExitCode(), out.String(), errb.String()
	}
	if code, _, stderr := homard("", "init", "--base-url", srv.URL+"/v1"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	return home, homard
}

// TestTaskLifecycle is a task's life as a person types it: added
// (pending, the problem says to approve it), refused by run-now and by an
// approval with no terminal and no --yes, approved (the body, its hash and
// the seal it stores shown first), run in the foreground with a scripted
// model that reads a file and calls complete_task, its run listed; then
// paused, resumed, removed, and refused by run-now.
func TestTaskLifecycle(t *testing.T) {
	readInbox := llmtest.Turn{Calls: []llmtest.CallScript{{ID: "c1", Name: "read_file", Fragments: []string{`{"path":"inbox.txt"}`}}}}
	// The summary is the model's text: it carries an escape sequence that
	// would clear the screen if printed raw.
	complete := llmtest.Turn{Calls: []llmtest.CallScript{{ID: "c2", Name: "complete_task", Fragments: []string{`{"summary":"The inbox holds two letters.\u001b[2J"}`}}}}
	srv := llmtest.NewServer(llmtest.Reply{Chunks: llmtest.OpenAIStream(readInbox)}, llmtest.Reply{Chunks: llmtest.OpenAIStream(complete)})
	defer srv.Close()
	home, homard := taskHome(t, srv)
	if err := os.WriteFile(filepath.Join(home, "workspace", "inbox.txt"), []byte("two letters from the bank\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := func(stdin string, args ...string) string {
		t.Helper()
		code, out, stderr := homard(stdin, args...)
		if code != 0 {
			t.Fatalf("homard %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, stderr)
		}
		if strings.ContainsRune(out+stderr, 0x1b) {
			t.Fatalf("homard %s printed a raw ESC:\n%q", strings.Join(args, " "), out+stderr)
		}
		return out
	}
	show := func(id string) taskJSON {
		t.Helper()
		return decodeStrict[taskJSON](t, "task show", []byte(ok("", "task", "show", id, "--json")))
	}

	added := decodeStrict[taskJSON](t, "task add", []byte(ok("", "task", "add", "digest", "--every", "1h", "--tools", "read_file", "--json", "Summarise inbox.txt")))
	id := added.ID
	if !strings.HasPrefix(id, "task_") || added.Status != "pending" || len(added.Hash) != 64 || added.Seal != "" || added.ApprovedAt != nil || len(added.Next) != 0 {
		t.Fatalf("task add --json = %+v; want a pending task with its hash, no seal, no next runs", added)
	}
	var body struct {
		Prompt string   `json:"prompt"`
		Tools  []string `json:"tools"`
	}
	if err := json.Unmarshal(added.Body, &body); err != nil || body.Prompt != "Summarise inbox.txt" || len(body.Tools) != 1 || body.Tools[0] != "read_file" {
		t.Fatalf("task add --json body = %s (%v); want the prompt and the profile [read_file]", added.Body, err)
	}
	list := decodeArray[taskJSON](t, "task list", ok("", "task", "list", "--json"))
	if len(list) != 1 || list[0].ID != id || !strings.Contains(list[0].Problem, "homard task approve "+id) {
		t.Fatalf("task list --json = %+v; want the one task, its problem naming `homard task approve %s`", list, id)
	}
	if out := ok("", "task", "list"); !strings.Contains(out, id) || !strings.Contains(out, "pending") {
		t.Errorf("task list = %q; want the task, pending", out)
	}

	// Refused before approval: nothing runs, the model is never called.
	if code, _, stderr := homard("", "task", "run-now", id); code != exitFailure || !strings.Contains(stderr, "homard task approve "+id) {
		t.Errorf("run-now before approval = exit %d, %q; want 1 and how to approve it", code, stderr)
	}
	// No terminal and no --yes: the body is shown, nothing is approved.
	code, out, stderr := homard("y\n", "task", "approve", id)
	if code != exitUsage || !strings.Contains(stderr, "--yes") || !strings.Contains(out, added.Hash) {
		t.Errorf("approve without a terminal = exit %d, stdout %q, stderr %q; want 2 naming --yes, after the body", code, out, stderr)
	}
	if got := show(id); got.Status != "pending" {
		t.Fatalf("after a refused approve the task is %s; want pending", got.Status)
	}

	out = ok("", "task", "approve", id, "--yes")
	for _, want := range []string{`"prompt": "Summarise inbox.txt"`, "the sealed bytes are the compact form", added.Hash, added.SealIfApproved, "approved " + id} {
		if !strings.Contains(out, want) {
			t.Errorf("task approve --yes output lacks %q:\n%s", want, out)
		}
	}
	active := show(id)
	if active.Status != "active" || active.Seal == "" || active.Seal != added.SealIfApproved || active.Problem != "" ||
		len(active.Next) != 3 || active.NextRunAt == nil || !active.Next[0].Equal(*active.NextRunAt) || active.ApprovedAt == nil {
		t.Fatalf("task show --json after approval = %+v; want active, the seal shown before approval, the next 3 runs, no problem", active)
	}
	if out := ok("", "task", "show", id); !strings.Contains(out, "next runs ") || !strings.Contains(out, "UTC)") || !strings.Contains(out, "seal      "+active.Seal) {
		t.Errorf("task show = %q; want the seal and the next runs in local time with UTC beside", out)
	}

	out = ok("", "task", "run-now", id)
	if !strings.Contains(out, "succeeded") || !strings.Contains(out, `The inbox holds two letters.\x1b[2J`) {
		t.Errorf("task run-now = %q; want succeeded and the summary, its escape made visible", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !bytes.Contains(reqs[1].Body, []byte("two letters from the bank")) {
		t.Errorf("%d model requests; want 2, the second carrying the file the run read", len(reqs))
	}
	runs := decodeArray[taskRunJSON](t, "task runs", ok("", "task", "runs", id, "--json"))
	if len(runs) != 1 || runs[0].Status != "succeeded" || runs[0].Summary != "The inbox holds two letters.\x1b[2J" ||
		runs[0].Delivery != "web" || runs[0].EndedAt == nil || runs[0].TaskID != id {
		t.Fatalf("task runs --json = %+v; want the one succeeded run, its whole summary, delivered to web", runs)
	}
	if out := ok("", "task", "runs", id); !strings.Contains(out, "succeeded") || !strings.Contains(out, "web") {
		t.Errorf("task runs = %q; want the run, succeeded, delivered to web", out)
	}
	if lr := show(id).LastRun; lr == nil || lr.ID != runs[0].ID {
		t.Errorf("task show last_run = %+v; want run %d", lr, runs[0].ID)
	}

	if got := decodeStrict[taskJSON](t, "pause", []byte(ok("", "task", "pause", id, "--json"))); got.Status != "paused" || !strings.Contains(got.Problem, "resume") {
		t.Errorf("task pause = %+v; want paused, the problem naming resume", got)
	}
	if got := decodeStrict[taskJSON](t, "resume", []byte(ok("", "task", "resume", id, "--json"))); got.Status != "active" || len(got.Next) != 3 {
		t.Errorf("task resume = %+v; want active with its next runs", got)
	}

	if code, _, stderr := homard("y\n", "task", "rm", id); code != exitUsage || !strings.Contains(stderr, "--yes") {
		t.Errorf("rm without a terminal = exit %d, %q; want 2 naming --yes", code, stderr)
	}
	ok("", "task", "rm", id, "--yes")
	if code, _, stderr := homard("", "task", "run-now", id); code != exitFailure || stderr == "" {
		t.Errorf("run-now after rm = exit %d, %q; want 1 and why", code, stderr)
	}
	if len(srv.Requests()) != 2 {
		t.Errorf("the model was called after the task was removed")
	}
	if list := decodeArray[taskJSON](t, "task list", ok("", "task", "list", "--json")); len(list) != 0 {
		t.Errorf("task list after rm = %+v; want []", list)
	}
	if code, _, stderr := homard("", "task", "show", "task_0000000000000000"); code != exitFailure || !strings.Contains(stderr, "homard task list shows them") {
		t.Errorf("show of an unknown id = exit %d, %q; want 1 and where the ids are", code, stderr)
	}
}

// TestTaskAddRefuses: a task that breaks a rule is a usage error (exit
// 2) whose message names what to change; the twin, the same task within
// the rules, is added.
func TestTaskAddRefuses(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	_, homard := taskHome(t, srv)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"cron without a zone", []string{"--cron", "0 9 * * 1"}, "--tz"},
		{"mode above max_mode", []string{"--every", "1h", "--mode", "autopilot"}, "automation.max_mode"},
		{"unknown tool", []string{"--every", "1h", "--tools", "read_file,launch_rockets"}, "launch_rockets"},
		{"memory tool", []string{"--every", "1h", "--tools", "recall"}, "memory"},
		{"two schedules", []string{"--every", "1h", "--at", "2099-01-01T08:00:00Z"}, "exactly one of"},
		{"bad expiry", []string{"--every", "1h", "--expires", "soon"}, "--expires"},
		{"bad name", []string{"--every", "1h"}, "task name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "weekly"
			if tc.name == "bad name" {
				name = "week ly"
			}
			code, out, stderr := homard("", append(append([]string{"task", "add", name}, tc.args...), "Plan my week")...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) || out != "" {
				t.Errorf("task add %v = exit %d, stdout %q, stderr %q; want 2 naming %q", tc.args, code, out, stderr, tc.want)
			}
		})
	}
	if list := decodeArray[taskJSON](t, "task list", mustRun(t, homard, "", "task", "list", "--json")); len(list) != 0 {
		t.Fatalf("refused adds stored %d tasks", len(list))
	}
	// The twins: within the rules, each form is added.
	for _, args := range [][]string{
		{"--cron", "0 9 * * 1", "--tz", "Europe/Paris", "--mode", "smart", "--expires", "30d", "--max-runtime", "5m"},
		{"--every", "1d", "--tools", "", "--catch-up", "once"},
		{"--at", "2099-01-01T08:00", "--tz", "America/New_York"},
	} {
		got := decodeStrict[taskJSON](t, "task add", []byte(mustRun(t, homard, "", append(append([]string{"task", "add", "weekly"}, args...), "--json", "Plan my week")...)))
		if got.Status != "pending" {
			t.Errorf("task add %v = %+v; want pending", args, got)
		}
	}
	// --tools "" is no tools; - reads the prompt from stdin.
	got := decodeStrict[taskJSON](t, "task add", []byte(mustRun(t, homard, "Plan from stdin\n", "task", "add", "quiet", "--every", "1d", "--tools", "", "--json", "-")))
	var body struct {
		Prompt string   `json:"prompt"`
		Tools  []string `json:"tools"`
	}
	if err := json.Unmarshal(got.Body, &body); err != nil || body.Prompt != "Plan from stdin" || body.Tools == nil || len(body.Tools) != 0 {
		t.Errorf("task add --tools \"\" - = body %s (%v); want the prompt read from stdin and no tools", got.Body, err)
	}
}

func mustRun(t *testing.T, homard func(string, ...string) (int, string, string), stdin string, args ...string) string {
	t.Helper()
	code, out, stderr := homard(stdin, args...)
	if code != 0 {
		t.Fatalf("homard %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return out
}

// TestTaskHostilePromptInert: a prompt holding an escape sequence and a
// bidi override is printed inert by add, list, show and approve (as
// escapes), and kept exactly in the sealed body.
func TestTaskHostilePromptInert(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	_, homard := taskHome(t, srv)
	prompt := "Summarise\x1b]0;owned\x07 the \u202eexcellent\u202c inbox\x1b[2J"
	added := decodeStrict[taskJSON](t, "task add", []byte(mustRun(t, homard, "", "task", "add", "digest", "--every", "1h", "--json", prompt)))
	var body struct {
		Prompt string `json:"prompt"`
	}
	if err := json.Unmarshal(added.Body, &body); err != nil || body.Prompt != prompt {
		t.Fatalf("sealed prompt = %q (%v); want it exactly as given", body.Prompt, err)
	}
	for _, args := range [][]string{
		{"task", "add", "digest2", "--every", "1h", prompt},
		{"task", "list"},
		{"task", "show", added.ID},
		{"task", "show", added.ID, "--json"},
		{"task", "approve", added.ID, "--yes"},
	} {
		code, out, stderr := homard("", args...)
		if code != 0 {
			t.Fatalf("homard %v: exit %d: %s", args, code, stderr)
		}
		if strings.ContainsAny(out+stderr, "\x1b\x07\u202e\u202c") {
			t.Errorf("homard %v printed a raw control or bidi character:\n%q", args[:2], out+stderr)
		}
		if args[1] == "show" && len(args) == 3 && !strings.Contains(out, `\u202e`) {
			t.Errorf("task show does not show the bidi override as an escape:\n%s", out)
		}
	}
}

// TestTaskReminder: `task add --remind` makes a reminder — listed as one,
// approved like any task — whose run delivers its text with no model
// request at all (the fake model has no reply scripted and records every
// request); --remind with --tools is refused before anything is stored.
func TestTaskReminder(t *testing.T) {
	srv := llmtest.NewServer() // any request would be a failure: none is scripted
	defer srv.Close()
	_, homard := taskHome(t, srv)
	run := func(args ...string) string {
		t.Helper()
		code, out, stderr := homard("", args...)
		if code != 0 {
			t.Fatalf("homard %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr)
		}
		return out
	}
	if code, _, stderr := homard("", "task", "add", "x", "--every", "1h", "--remind", "--tools", "read_file", "Call mum."); code != exitUsage || !strings.Contains(stderr, "--remind takes no --tools") {
		t.Errorf("--remind --tools: exit %d, %q; want a usage error", code, stderr)
	}
	added := decodeStrict[taskJSON](t, "task add", []byte(run("task", "add", "mum", "--every", "1d", "--remind", "--json", "Call mum.")))
	var body struct {
		Reminder bool     `json:"reminder"`
		Tools    []string `json:"tools"`
		Prompt   string   `json:"prompt"`
	}
	if err := json.Unmarshal(added.Body, &body); err != nil || !body.Reminder || body.Tools == nil || len(body.Tools) != 0 || body.Prompt != "Call mum." {
		t.Errorf("body %s (%v); want a reminder with no tools", added.Body, err)
	}
	if out := run("task", "list"); !strings.Contains(out, "KIND") || !strings.Contains(out, "reminder") {
		t.Errorf("task list:\n%s\nwant the reminder's kind", out)
	}
	run("task", "approve", added.ID, "--yes")
	out := run("task", "run-now", added.ID)
	if !strings.Contains(out, "Call mum.") {
		t.Errorf("run-now:\n%s\nwant the reminder's text", out)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests for a reminder; want none", n)
	}
}

// TestTaskListFrom: `task list` has a FROM column saying where each task
// came from, `task show` a from line and --json an origin: cli for a
// task added here; a task whose row says chat (as a conversation's
// approved proposal's does) reads chat. The origin is beside the body,
// not in it: the same body, the same hash and seal.
func TestTaskListFrom(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	e := newTaskE2E(t, srv)
	digest := e.add("digest", "Summarise inbox.txt", "--every", "1h", "--tools", "read_file")
	mum := e.approve(e.add("mum", "Call mum.", "--every", "1d", "--remind").ID)
	if digest.Origin != "cli" || mum.Origin != "cli" {
		t.Fatalf("origins %q, %q; want cli for tasks added with task add", digest.Origin, mum.Origin)
	}
	if _, err := e.openDB().Exec(`UPDATE tasks SET origin = 'chat' WHERE id = ?`, mum.ID); err != nil {
		t.Fatal(err)
	}

	out := e.ok("task", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("task list:\n%s\nwant a header and two tasks", out)
	}
	if f := strings.Fields(lines[0]); len(f) < 4 || f[2] != "KIND" || f[3] != "FROM" {
		t.Errorf("task list header %q; want ID NAME KIND FROM …", lines[0])
	}
	for i, want := range [][]string{{digest.ID, "digest", "task", "cli", "pending"}, {mum.ID, "mum", "reminder", "chat", "active"}} {
		if f := strings.Fields(lines[i+1]); len(f) < 5 || strings.Join(f[:5], " ") != strings.Join(want, " ") {
			t.Errorf("task list row %q; want it to start %q", lines[i+1], strings.Join(want, " "))
		}
	}
	if out := e.ok("task", "show", mum.ID); !strings.Contains(out, "\nfrom      chat (approved in a conversation)\n") {
		t.Errorf("task show:\n%s\nwant a from line saying chat", out)
	}
	if out := e.ok("task", "show", digest.ID); !strings.Contains(out, "\nfrom      cli (homard task add)\n") {
		t.Errorf("task show:\n%s\nwant a from line saying cli", out)
	}
	now := e.show(mum.ID)
	if now.Origin != "chat" || now.Hash != mum.Hash || now.Seal != mum.Seal || now.Problem != "" {
		t.Errorf("after its origin changed the task is %+v; want origin chat, the same hash and seal, nothing wrong", now)
	}
}
