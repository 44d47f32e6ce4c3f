package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/llm/llmtest"
)

// Scheduled tasks end to end through the built binary (issue 14, "How it
// is checked"): each test is a home initialised against a scripted
// OpenAI-compatible model on loopback, driven by `homard` child processes
// as a person (or an attacker with the database file) would. Every rule
// here also has an app-level test (internal/app/tasks_test.go,
// taskrun_test.go, scheduler_test.go); these prove the same story holds
// through the CLI, its exit codes, its --json output and the audit.
//
// An expired approval is not tested here: the shortest --expires is 1h,
// and a real expiry needs that long. The app level covers it on a fake
// clock (internal/task seal tests and TestTask* in internal/app).

// taskE2E is one home and a runner of the built binary on it.
type taskE2E struct {
	t    *testing.T
	bin  string
	home string
	env  []string
}

// newTaskE2E builds the binary (once per test binary) and initialises a
// home whose model is srv.
func newTaskE2E(t *testing.T, srv *llmtest.Server) *taskE2E {
	t.Helper()
	e := &taskE2E{t: t, bin: buildHomard(t), home: t.TempDir()}
	e.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "OPENAI_API_KEY=sk-test-TASKE2E0123456789",
		"XDG_CONFIG_HOME=" + t.TempDir(), "XDG_DATA_HOME=" + t.TempDir(), "TZ=Europe/Paris"}
	e.env = append(e.env, storeEnv(t, e.home)...)
	e.ok("init", "--base-url", srv.URL+"/v1")
	return e
}

func (e *taskE2E) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(e.bin, append([]string{"--home", e.home}, args...)...)
	cmd.Env = e.env
	return cmd
}

// homard runs a command to its end (killed past tgDeadline: homard hung)
// and returns its exit code, stdout and stderr. stdin is empty, never a
// terminal.
func (e *taskE2E) homard(args ...string) (int, string, string) {
	e.t.Helper()
	cmd := e.cmd(args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := runBounded(cmd)
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		e.t.Fatalf("homard %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr.String())
	}
	return cmd.ProcessState.ExitCode(), string(out), stderr.String()
}

// ok runs a command that must exit 0 and returns its stdout.
func (e *taskE2E) ok(args ...string) string {
	e.t.Helper()
	code, out, stderr := e.homard(args...)
	if code != 0 {
		e.t.Fatalf("homard %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, stderr)
	}
	return out
}

// fails runs a command that must exit with code, its stderr holding
// every one of want; it returns stdout and stderr.
func (e *taskE2E) fails(code int, want []string, args ...string) (string, string) {
	e.t.Helper()
	got, out, stderr := e.homard(args...)
	if got != code {
		e.t.Errorf("homard %s = exit %d; want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), got, code, out, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			e.t.Errorf("homard %s: stderr %q lacks %q", strings.Join(args, " "), stderr, w)
		}
	}
	return out, stderr
}

// add adds a task with the given flags and prompt and returns it.
func (e *taskE2E) add(name, prompt string, flags ...string) taskJSON {
	e.t.Helper()
	args := append(append([]string{"task", "add", name}, flags...), "--json", prompt)
	in := decodeStrict[taskJSON](e.t, "task add", []byte(e.ok(args...)))
	if in.Status != "pending" || !strings.HasPrefix(in.ID, "task_") {
		e.t.Fatalf("task add %v = %+v; want a pending task", flags, in)
	}
	return in
}

// approve approves task id with --yes and returns it, active.
func (e *taskE2E) approve(id string) taskJSON {
	e.t.Helper()
	in := decodeStrict[taskJSON](e.t, "task approve", []byte(e.ok("task", "approve", id, "--yes", "--json")))
	if in.Status != "active" || in.Seal == "" {
		e.t.Fatalf("task approve %s = %+v; want active and sealed", id, in)
	}
	return in
}

func (e *taskE2E) show(id string) taskJSON {
	e.t.Helper()
	return decodeStrict[taskJSON](e.t, "task show", []byte(e.ok("task", "show", id, "--json")))
}

func (e *taskE2E) runs(id string) []taskRunJSON {
	e.t.Helper()
	return decodeArray[taskRunJSON](e.t, "task runs", e.ok("task", "runs", id, "--json"))
}

func (e *taskE2E) writeFile(rel, content string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.home, "workspace", rel), []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// taskAuditRec is an audit record as `homard audit --json` prints it,
// the fields these tests read.
type taskAuditRec struct {
	Tool, Decision, Rule, Reason, Session, Args string
}

func (a taskAuditRec) String() string { return a.Tool + " " + a.Decision + " " + a.Rule }

// audit is every audit record, oldest first.
func (e *taskE2E) audit() []taskAuditRec {
	e.t.Helper()
	return parseAudit(e.t, e.ok("audit", "--json", "--limit", "10000"))
}

func parseAudit(t *testing.T, out string) []taskAuditRec {
	t.Helper()
	var recs []taskAuditRec
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec taskAuditRec
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// auditOf are the records of task id's session ("task-ID": its life and
// its runs' calls) whose "tool decision rule" is want.
func auditOf(recs []taskAuditRec, id, want string) []taskAuditRec {
	var out []taskAuditRec
	for _, r := range recs {
		if r.Session == "task-"+id && r.String() == want {
			out = append(out, r)
		}
	}
	return out
}

// replies are scripted model answers, one tool call each.
func replies(calls ...[2]string) []llmtest.Reply {
	var out []llmtest.Reply
	for i, c := range calls {
		turn := llmtest.Turn{Calls: []llmtest.CallScript{{ID: "call_" + string(rune('a'+i)), Name: c[0], Fragments: []string{c[1]}}}}
		out = append(out, llmtest.Reply{Chunks: llmtest.OpenAIStream(turn)})
	}
	return out
}

// TestTaskE2EHappyPath: added (pending), refused by run-now before
// approval without a model call, approved, run in the foreground by a
// model that reads a workspace file and calls complete_task; the run is
// listed succeeded with its summary, delivered to the web, and the audit
// holds the task's life and the run's call in the task's session.
func TestTaskE2EHappyPath(t *testing.T) {
	srv := llmtest.NewServer(replies(
		[2]string{"read_file", `{"path":"inbox.txt"}`},
		[2]string{"complete_task", `{"summary":"Two letters from the bank; nothing urgent."}`},
	)...)
	defer srv.Close()
	e := newTaskE2E(t, srv)
	e.writeFile("inbox.txt", "letter 1: bank statement\nletter 2: bank advert\n")
	in := e.add("digest", "Summarise inbox.txt", "--every", "1h", "--tools", "read_file")

	e.fails(exitFailure, []string{"not approved", "homard task approve " + in.ID}, "task", "run-now", in.ID)
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("run-now before approval made %d model requests; want 0", n)
	}
	if runs := e.runs(in.ID); len(runs) != 0 {
		t.Fatalf("run-now before approval recorded runs %+v; want none", runs)
	}

	e.approve(in.ID)
	out := e.ok("task", "run-now", in.ID)
	if !strings.Contains(out, "succeeded") || !strings.Contains(out, "Two letters from the bank; nothing urgent.") {
		t.Errorf("task run-now = %q; want succeeded and the summary", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !bytes.Contains(reqs[1].Body, []byte("letter 2: bank advert")) {
		t.Errorf("%d model requests; want 2, the second carrying the file the run read", len(reqs))
	}
	runs := e.runs(in.ID)
	if len(runs) != 1 || runs[0].Status != "succeeded" || runs[0].Summary != "Two letters from the bank; nothing urgent." ||
		runs[0].Delivery != "web" || runs[0].Error != "" || runs[0].EndedAt == nil {
		t.Fatalf("task runs --json = %+v; want one succeeded run with the summary, delivered to web", runs)
	}

	recs := e.audit()
	for _, want := range []string{"task ran task.added", "task ran task.approved", "read_file ran mode.safe.read", "task ran task.completed"} {
		if len(auditOf(recs, in.ID, want)) == 0 {
			t.Errorf("the audit lacks %q in session task-%s: %v", want, in.ID, recs)
		}
	}
	for _, r := range recs {
		if r.Decision == "denied" {
			t.Errorf("a happy run left a denial in the audit: %+v", r)
		}
	}
}

// openDB opens the home's database read-write, as an attacker with the
// file or the database would.
func (e *taskE2E) openDB() *sql.DB {
	e.t.Helper()
	return rawStore(e.t, e.home, e.env)
}

// TestTaskE2EChangedBody: an approved task that ran (the twin) has its
// tool profile widened in the database, with a plain SHA-256 of the new
// body written as its MAC (what an attacker who cannot read the vault
// key can compute). run-now refuses it as changed without calling the
// model, and the refusal is audited; show names the problem; renew
// refuses to re-seal it; approving it again, with the new body shown,
// is the owner's way back, and then it runs.
func TestTaskE2EChangedBody(t *testing.T) {
	srv := llmtest.NewServer(replies(
		[2]string{"complete_task", `{"summary":"first run"}`},
		[2]string{"complete_task", `{"summary":"after re-approval"}`},
	)...)
	defer srv.Close()
	e := newTaskE2E(t, srv)
	in := e.add("reader", "Read notes.txt", "--every", "1h", "--tools", "read_file")
	e.approve(in.ID)
	e.ok("task", "run-now", in.ID)

	db := e.openDB()
	var body string
	if err := db.QueryRow(`SELECT body FROM tasks WHERE id = ?`, in.ID).Scan(&body); err != nil {
		t.Fatal(err)
	}
	widened := strings.Replace(body, `"tools":["read_file"]`, `"tools":["read_file","write_file"]`, 1)
	if widened == body {
		t.Fatalf("test setup: no tools list [read_file] in %s", body)
	}
	sum := sha256.Sum256([]byte(widened))
	if _, err := db.Exec(`UPDATE tasks SET body = ?, mac = ? WHERE id = ?`, widened, hex.EncodeToString(sum[:]), in.ID); err != nil {
		t.Fatal(err)
	}

	before := len(srv.Requests())
	e.fails(exitFailure, []string{"changed", "homard task show " + in.ID}, "task", "run-now", in.ID)
	if n := len(srv.Requests()); n != before {
		t.Errorf("run-now of a changed body made %d model requests; want none", n-before)
	}
	if got := e.show(in.ID); !strings.Contains(got.Problem, "changed since it was approved") {
		t.Errorf("task show --json problem = %q; want it to say the task changed since it was approved", got.Problem)
	}
	if out := e.ok("task", "show", in.ID); !strings.Contains(out, "problem   it changed since it was approved") || !strings.Contains(out, "write_file") {
		t.Errorf("task show = %q; want the problem and the changed body (write_file) shown", out)
	}
	refused := auditOf(e.audit(), in.ID, "task denied task.refused")
	if len(refused) != 1 || !strings.Contains(refused[0].Reason, "changed") {
		t.Errorf("audit task.refused records = %+v; want one, its reason naming the change", refused)
	}
	e.fails(exitFailure, []string{"changed"}, "task", "renew", in.ID, "--yes")
	if runs := e.runs(in.ID); len(runs) != 1 || runs[0].Summary != "first run" {
		t.Errorf("task runs after the refusals = %+v; want only the first run", runs)
	}

	// The owner's way back: approve what is stored now, shown first.
	out := e.ok("task", "approve", in.ID, "--yes")
	if !strings.Contains(out, `"write_file"`) {
		t.Errorf("task approve shows %q; want the widened body it seals", out)
	}
	if out := e.ok("task", "run-now", in.ID); !strings.Contains(out, "after re-approval") {
		t.Errorf("run-now after re-approval = %q; want it to run", out)
	}
}

// TestTaskE2ETickDryRun: `task tick --dry-run` with nothing due says so
// (text) and prints [] (--json); once an approved --at slot has passed,
// with no serve running, it lists action run for that slot, and nothing
// is written: the task has no runs and is still due.
func TestTaskE2ETickDryRun(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	e := newTaskE2E(t, srv)
	later := e.add("later", "Plan 2099", "--at", "2099-01-01T08:00:00Z", "--tools", "")
	e.approve(later.ID)
	if out := e.ok("task", "tick", "--dry-run"); !strings.Contains(out, "nothing is due now") {
		t.Errorf("task tick --dry-run with nothing due = %q; want it to say so", out)
	}
	if out := strings.TrimSpace(e.ok("task", "tick", "--dry-run", "--json")); out != "[]" {
		t.Errorf("task tick --dry-run --json with nothing due = %q; want []", out)
	}
	e.fails(exitUsage, []string{"--dry-run"}, "task", "tick")

	at := time.Now().Add(taskSlotLead).UTC().Truncate(time.Second)
	soon := e.add("soon", "Say hello", "--at", at.Format(time.RFC3339), "--tools", "")
	if got := e.approve(soon.ID); got.NextRunAt == nil || !got.NextRunAt.Equal(at) {
		t.Fatalf("approved --at %s: next run %v; want the slot (did adding and approving take over 7 s?)", at, got.NextRunAt)
	}
	// Wait for the wall clock to pass the slot: the plan is computed
	// from the time now, so this is the event the test waits for.
	for deadline := time.Now().Add(tgDeadline); !time.Now().After(at); {
		if time.Now().After(deadline) {
			t.Fatal("the clock did not pass the slot")
		}
		time.Sleep(100 * time.Millisecond)
	}
	plan := decodeArray[taskPlanJSON](t, "task tick", e.ok("task", "tick", "--dry-run", "--json"))
	if len(plan) != 1 || plan[0].TaskID != soon.ID || plan[0].Name != "soon" || plan[0].Action != "run" ||
		plan[0].Slot != at.Format(time.RFC3339) || plan[0].SlotKey == "" || !strings.HasPrefix(plan[0].Why, "due at ") {
		t.Fatalf("task tick --dry-run --json = %+v; want one plan: run task %s at %s, due", plan, soon.ID, at.Format(time.RFC3339))
	}
	out := e.ok("task", "tick", "--dry-run")
	if !strings.Contains(out, soon.ID) || !strings.Contains(out, " run ") || strings.Contains(out, later.ID) {
		t.Errorf("task tick --dry-run = %q; want the due task's run and not the one due in 2099", out)
	}
	// Nothing written: no run, still due, the plan unchanged.
	if runs := e.runs(soon.ID); len(runs) != 0 {
		t.Errorf("task runs after tick --dry-run = %+v; want none", runs)
	}
	if got := e.show(soon.ID); got.NextRunAt == nil || !got.NextRunAt.Equal(at) {
		t.Errorf("next run after tick --dry-run = %v; want still %s", got.NextRunAt, at)
	}
	if again := decodeArray[taskPlanJSON](t, "task tick", e.ok("task", "tick", "--dry-run", "--json")); len(again) != 1 || again[0] != plan[0] {
		t.Errorf("a second dry run = %+v; want the same plan %+v", again, plan[0])
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("tick --dry-run made %d model requests; want 0", n)
	}
}

// taskSlotLead is how far ahead the tests put an --at slot: adding and
// approving the task must both finish before it (two binary runs, under
// -race on a busy 2-core machine), and the test then waits for it.
const taskSlotLead = 8 * time.Second
