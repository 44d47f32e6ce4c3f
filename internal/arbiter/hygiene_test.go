package arbiter_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/changeset"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/store/storetest"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/tools"
	"github.com/homard/homard/internal/workspace"
)

// build is a test tool whose Plans run the workspace's code, as
// run_command's do for `go test` or `make`: its class is runs code and
// its target is the folder it runs in.
type build struct {
	runs  *int
	runAs *string // the ToolRun id Run was told (tool.Caller.Run)
}

type buildParams struct {
	Dir string `json:"dir"`
}

func (b build) Spec() tool.Spec {
	return tool.Spec{Name: "build", Description: "test tool", Action: policy.ActionExec, Risk: policy.RiskMedium}
}

func (b build) Prepare(_ context.Context, p buildParams) (tool.Plan, error) {
	return tool.NewPlan(tool.PlanSpec{Tool: "build", Action: policy.ActionExec, Risk: policy.RiskMedium,
		Class:   policy.ClassRunsCode,
		Display: "build in " + p.Dir, Targets: []string{p.Dir},
		Body: struct {
			RunsCode bool   `json:"runs_code"`
			Dir      string `json:"dir"`
		}{true, p.Dir}})
}

func (b build) Run(ctx context.Context, _ tool.Plan) (tool.Result, error) {
	*b.runs++
	c, _ := tool.CallerFrom(ctx)
	*b.runAs = c.Run
	return tool.Result{Text: "built"}, nil
}

type hygiene struct {
	arb    *arbiter.Arbiter
	st     *store.Store
	dbPath string // where the store lives (storetest.Where), to open it again
	appr   *approval.Service
	ws     *workspace.Workspace
	root   string
	builds int
	runAs  string
	owner  arbiter.Caller
}

func newHygiene(t *testing.T, o approval.Options) *hygiene {
	t.Helper()
	dir := t.TempDir()
	h := &hygiene{root: filepath.Join(dir, "ws"), dbPath: storetest.Where(t),
		owner: arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"}}
	if err := os.MkdirAll(h.root, 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	if h.st, err = store.OpenURL(t.Context(), h.dbPath); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.st.Close() })
	h.ws, err = workspace.Open(workspace.Options{Roots: []workspace.Root{{Name: "main", Path: h.root}}, CheckpointDir: filepath.Join(dir, "cp")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.ws.Close() })
	list := append(tools.FileTools(changeset.New(h.ws, changeset.Options{}), time.Now), tool.Adapt[buildParams](build{runs: &h.builds, runAs: &h.runAs}))
	reg, err := tool.NewRegistry(list...)
	if err != nil {
		t.Fatal(err)
	}
	h.appr = approval.New(h.st, o)
	h.arb = arbiter.New(arbiter.Options{Registry: reg, Store: h.st, Approvals: h.appr, Redactor: secrets.NewRedactor(),
		Mode: policy.ModeSafe, Workspace: h.ws})
	return h
}

func (h *hygiene) decide(t *testing.T, name, args string) arbiter.Outcome {
	t.Helper()
	out, err := h.arb.Decide(t.Context(), arbiter.Proposal{Tool: name, Args: json.RawMessage(args), Caller: h.owner})
	if err != nil {
		t.Fatalf("Decide(%s %s): %v", name, args, err)
	}
	return out
}

// TestApprovalOfCodeLapsesWhenTheRootChanged: the owner approves a
// command that runs the workspace's code; a file is then written in that
// root; the approved call asks again, with a reason saying why. The twin:
// with no change in between, the approved call runs.
func TestApprovalOfCodeLapsesWhenTheRootChanged(t *testing.T) {
	for _, change := range []bool{true, false} {
		t.Run(fmt.Sprintf("changed=%v", change), func(t *testing.T) {
			h := newHygiene(t, approval.Options{})
			out := h.decide(t, "build", `{"dir":"."}`)
			if out.Decision != arbiter.Pending {
				t.Fatalf("build in safe mode: %+v; want pending", out)
			}
			if _, err := h.appr.Approve(t.Context(), out.ApprovalID, "me", approval.ScopeOnce); err != nil {
				t.Fatal(err)
			}
			if change {
				out := changeset.New(h.ws, changeset.Options{}).WriteFiles(t.Context(), changeset.Proposal{Root: "main", Limit: workspace.GradeMedium},
					[]changeset.File{{Rel: "main_test.go", Data: []byte("package main // planted after the approval")}})
				if out.Applied == nil {
					t.Fatalf("write through the gate: %+v", out)
				}
			}
			again := h.decide(t, "build", `{"dir":"."}`)
			if !change {
				if again.Decision != arbiter.Ran || h.builds != 1 {
					t.Fatalf("approved build with no change: %+v (runs %d); want ran once", again, h.builds)
				}
				return
			}
			if again.Decision != arbiter.Pending || again.ApprovalID == out.ApprovalID || h.builds != 0 ||
				!strings.Contains(again.Reason, "the workspace changed since you approved this") {
				t.Fatalf("approved build after a write: %+v (runs %d); want a new card saying the workspace changed", again, h.builds)
			}
			old, err := h.appr.Get(t.Context(), out.ApprovalID)
			if err != nil || old.Status != approval.Expired {
				t.Errorf("the lapsed approval is %v, %v; want expired", old.Status, err)
			}
			// The fresh card, approved, runs.
			if _, err := h.appr.Approve(t.Context(), again.ApprovalID, "me", approval.ScopeOnce); err != nil {
				t.Fatal(err)
			}
			if third := h.decide(t, "build", `{"dir":"."}`); third.Decision != arbiter.Ran || h.builds != 1 {
				t.Fatalf("build with its fresh approval: %+v; want ran", third)
			}
		})
	}
}

// TestApprovalOfWriteDoesNotLapse: only Plans that run code lapse; an
// approved write_file runs although the root changed since.
func TestApprovalOfWriteDoesNotLapse(t *testing.T) {
	h := newHygiene(t, approval.Options{})
	out := h.decide(t, "write_file", `{"path":"a.md","content":"x"}`)
	if out.Decision != arbiter.Pending {
		t.Fatalf("write in safe mode: %+v; want pending", out)
	}
	if _, err := h.appr.Approve(t.Context(), out.ApprovalID, "me", approval.ScopeOnce); err != nil {
		t.Fatal(err)
	}
	if out := changeset.New(h.ws, changeset.Options{}).WriteFiles(t.Context(), changeset.Proposal{Root: "main", Limit: workspace.GradeMedium},
		[]changeset.File{{Rel: "b.md", Data: []byte("y")}}); out.Applied == nil {
		t.Fatalf("write through the gate: %+v", out)
	}
	if again := h.decide(t, "write_file", `{"path":"a.md","content":"x"}`); again.Decision != arbiter.Ran {
		t.Fatalf("approved write after another change: %+v; want ran", again)
	}
}

// TestPendingCardsCapped: identical proposals share one card; beyond the
// cap a new proposal is denied and told to wait for the owner.
func TestPendingCardsCapped(t *testing.T) {
	h := newHygiene(t, approval.Options{MaxPending: 3})
	first := h.decide(t, "write_file", `{"path":"0.md","content":"x"}`)
	if same := h.decide(t, "write_file", `{"path":"0.md","content":"x"}`); same.Decision != arbiter.Pending || same.ApprovalID != first.ApprovalID {
		t.Fatalf("identical proposal: %+v; want the card %s", same, first.ApprovalID)
	}
	for i := 1; i < 3; i++ {
		if out := h.decide(t, "write_file", fmt.Sprintf(`{"path":"%d.md","content":"x"}`, i)); out.Decision != arbiter.Pending {
			t.Fatalf("proposal %d: %+v; want pending", i, out)
		}
	}
	over := h.decide(t, "write_file", `{"path":"3.md","content":"x"}`)
	if over.Decision != arbiter.Denied || over.Rule != "approval.too-many-pending" || !strings.Contains(over.Reason, "wait for the owner") {
		t.Fatalf("proposal beyond the cap: %+v; want denied, approval.too-many-pending, telling the model to wait", over)
	}
	if out := h.decide(t, "read_file", `{"path":"."}`); out.Decision == arbiter.Denied {
		t.Errorf("a read beyond the cap: %+v; reads need no card and must still work", out)
	}
}

// TestIntegrityHoldRefusesSideEffects: while homard's records are known to
// be damaged, a write is denied with a message naming what to run, a read
// still runs, and both are audited; once the problem is cleared writes
// work again.
func TestIntegrityHoldRefusesSideEffects(t *testing.T) {
	h := newHygiene(t, approval.Options{})
	h.arb = arbiter.New(arbiter.Options{Registry: h.arb.Registry(), Store: h.st, Approvals: h.appr,
		Redactor: secrets.NewRedactor(), Mode: policy.ModeYolo, Workspace: h.ws})
	setProblem := func(p string) {
		err := h.st.Write(t.Context(), func(tx *store.Tx) error {
			s, err := tx.IntegrityState()
			if err != nil {
				return err
			}
			s.Problem = p
			return tx.SetIntegrityState(s)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(h.root, "r.md"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	setProblem("audit chain broken at record 2")
	w := h.decide(t, "write_file", `{"path":"a.md","content":"x"}`)
	if w.Decision != arbiter.Denied || w.Rule != "limit.integrity" || !strings.Contains(w.Reason, "homard doctor --ack") {
		t.Errorf("write while held: %+v; want denied by limit.integrity naming `homard doctor --ack`", w)
	}
	if _, err := os.Stat(filepath.Join(h.root, "a.md")); !os.IsNotExist(err) {
		t.Errorf("the refused write happened: %v", err)
	}
	if r := h.decide(t, "read_file", `{"path":"r.md"}`); r.Decision != arbiter.Ran {
		t.Errorf("read while held: %+v; want ran", r)
	}
	setProblem("")
	if w := h.decide(t, "write_file", `{"path":"a.md","content":"x"}`); w.Decision != arbiter.Ran {
		t.Errorf("write after the problem was cleared: %+v; want ran", w)
	}
	if n, err := audit.Verify(t.Context(), h.st); err != nil || n != 3 {
		t.Errorf("audit = %d records, %v; want 3 (one per proposal), intact", n, err)
	}
}

// TestRecoverInterrupted: a run left running by a process that died is
// marked failed and audited at the next start; a run a live process holds
// is left alone.
func TestRecoverInterrupted(t *testing.T) {
	h := newHygiene(t, approval.Options{})
	insertRunning := func(st *store.Store, tool string) string {
		var id string
		err := st.Write(t.Context(), func(tx *store.Tx) error {
			if err := tx.EnsureSession("s", "me", time.Now()); err != nil {
				return err
			}
			var err error
			id, err = tx.InsertToolRun(store.ToolRun{SessionID: "s", Owner: "me", Tool: tool, PlanHash: "abc",
				Plan: []byte(`{"body":{}}`), Status: store.RunRunning, Decision: "ran", CreatedAt: time.Now()})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	open := func() *store.Store {
		st, err := store.OpenURL(t.Context(), h.dbPath)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	dead, live := open(), open()
	defer live.Close()
	deadRun := insertRunning(dead, "write_file")
	liveRun := insertRunning(live, "apply_changes")
	// The dead run applied a change set before it died; another set
	// names a run that is not interrupted.
	applyFor(t, h.ws, deadRun, "made.txt")
	applyFor(t, h.ws, "run_999", "other.txt")
	dead.Close() // as the kernel does for a killed process

	got, err := h.arb.RecoverInterrupted(t.Context())
	if err != nil || len(got) != 1 || got[0].ID != deadRun {
		t.Fatalf("RecoverInterrupted = %v, %v; want only %s", got, err, deadRun)
	}
	for id, want := range map[string]string{deadRun: store.RunFailed, liveRun: store.RunRunning} {
		r, err := h.st.GetToolRun(t.Context(), id)
		if err != nil || r.Status != want {
			t.Errorf("run %s: %s, %v; want %s", id, r.Status, err, want)
		}
	}
	recs, err := audit.List(t.Context(), h.st, 0, 10)
	if err != nil || len(recs) != 1 || recs[0].RunID != deadRun || recs[0].Rule != store.RunInterrupted || recs[0].Decision != audit.Errored {
		t.Fatalf("audit after recovery = %+v, %v; want one error record for %s", recs, err, deadRun)
	}
	if e := recs[0].Effects; !strings.HasPrefix(e, "applied as checkpoint ") || !strings.Contains(e, `create file "made.txt" (4 bytes, mode 0644)`) || strings.Contains(e, "other.txt") {
		t.Errorf("the interrupted run's record lists %q; want the change set it applied, and only that", e)
	}
	if again, err := h.arb.RecoverInterrupted(t.Context()); err != nil || len(again) != 0 {
		t.Errorf("second RecoverInterrupted = %v, %v; want nothing", again, err)
	}
}

// applyFor applies a change set creating rel in root main for run.
func applyFor(t *testing.T, ws *workspace.Workspace, run, rel string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: rel, Typeflag: tar.TypeReg, Mode: 0o644, Size: 4, Format: tar.FormatPAX})
	tw.Write([]byte("new\n"))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	cs, err := workspace.ReadChanges(&buf, workspace.ReadOptions{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := ws.ApplyChanges(t.Context(), "main", cs, workspace.RunStart(), workspace.ApplyOptions{
		Grade: workspace.GradeOptions{RunsCode: true}, Approved: workspace.GradeCritical, Run: run}); err != nil {
		t.Fatalf("ApplyChanges for %s: %v", run, err)
	}
}

// TestRunKnowsItsRun: a Plan with an effect runs with its ToolRun's id in
// the caller, so a tool can keep it with its effect.
func TestRunKnowsItsRun(t *testing.T) {
	h := newHygiene(t, approval.Options{})
	out, err := h.arb.Decide(t.Context(), arbiter.Proposal{Tool: "build", Args: json.RawMessage(`{"dir":"."}`), Caller: h.owner, Mode: policy.ModeYolo})
	if err != nil || out.Decision != arbiter.Ran || out.RunID == "" {
		t.Fatalf("build in yolo = %+v, %v; want ran with a run id", out, err)
	}
	if h.runAs != out.RunID {
		t.Errorf("Run saw tool.Caller.Run = %q; want the run's id %q", h.runAs, out.RunID)
	}
}
