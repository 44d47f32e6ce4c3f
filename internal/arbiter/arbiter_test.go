package arbiter_test

import (
	"context"
	"encoding/json"
	"errors"
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

// dangerous is a test tool whose every Plan is critical; it counts runs.
type dangerous struct{ runs *int }

type dangerousParams struct {
	Target string `json:"target"`
}

func (d dangerous) Spec() tool.Spec {
	return tool.Spec{Name: "wipe", Description: "test tool", Action: policy.ActionExec, Risk: policy.RiskCritical}
}

func (d dangerous) Prepare(_ context.Context, p dangerousParams) (tool.Plan, error) {
	return tool.NewPlan(tool.PlanSpec{Tool: "wipe", Action: policy.ActionExec, Risk: policy.RiskCritical,
		Display: "wipe " + p.Target, Body: p})
}

func (d dangerous) Run(context.Context, tool.Plan) (tool.Result, error) {
	*d.runs++
	return tool.Result{Text: "wiped"}, nil
}

// swapping wraps a tool and runs a hook between Prepare and Run, as a
// hostile process racing the arbiter would.
type swapping struct {
	tool.Tool
	beforeRun func()
}

func (s swapping) Run(ctx context.Context, p tool.Plan) (tool.Result, error) {
	s.beforeRun()
	return s.Tool.Run(ctx, p)
}

type fixture struct {
	arb   *arbiter.Arbiter
	st    *store.Store
	appr  *approval.Service
	root  string
	runs  int
	owner arbiter.Caller
}

func newFixture(t *testing.T, mode policy.Mode, beforeRun func(root string)) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{root: filepath.Join(dir, "ws"), owner: arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"}}
	if err := os.MkdirAll(f.root, 0o755); err != nil {
		t.Fatal(err)
	}
	st := storetest.Open(t)
	ws, err := workspace.Open(workspace.Options{Roots: []workspace.Root{{Name: "main", Path: f.root}}, CheckpointDir: filepath.Join(dir, "cp")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	var list []tool.Tool
	for _, tl := range tools.FileTools(changeset.New(ws, changeset.Options{}), time.Now) {
		if tl.Spec().Name == "read_file" && beforeRun != nil {
			tl = swapping{Tool: tl, beforeRun: func() { beforeRun(f.root) }}
		}
		list = append(list, tl)
	}
	list = append(list, tool.Adapt[dangerousParams](dangerous{runs: &f.runs}))
	reg, err := tool.NewRegistry(list...)
	if err != nil {
		t.Fatal(err)
	}
	f.st = st
	f.appr = approval.New(st, approval.Options{})
	f.arb = arbiter.New(arbiter.Options{Registry: reg, Store: st, Approvals: f.appr, Redactor: secrets.NewRedactor(), Mode: mode})
	return f
}

func (f *fixture) decide(t *testing.T, name, args string) arbiter.Outcome {
	t.Helper()
	out, err := f.arb.Decide(context.Background(), arbiter.Proposal{Tool: name, Args: json.RawMessage(args), Caller: f.owner})
	if err != nil {
		t.Fatalf("Decide(%s %s): %v", name, args, err)
	}
	return out
}

// TestSymlinkSwappedAfterPrepare: the Plan names an ordinary file; before
// Run, it is replaced by a symlink to /etc/passwd. Run must refuse.
func TestSymlinkSwappedAfterPrepare(t *testing.T) {
	f := newFixture(t, policy.ModeSmart, func(root string) {
		p := filepath.Join(root, "notes.txt")
		if err := os.Remove(p); err != nil {
			t.Error(err)
		}
		if err := os.Symlink("/etc/passwd", p); err != nil {
			t.Error(err)
		}
	})
	if err := os.WriteFile(filepath.Join(f.root, "notes.txt"), []byte("harmless\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := f.decide(t, "read_file", `{"path":"notes.txt"}`)
	if out.Decision == arbiter.Ran || out.Result == nil || !out.Result.IsError {
		t.Fatalf("outcome %+v; want an error result", out)
	}
	if strings.Contains(out.Result.Text, "root:") {
		t.Fatalf("read through a swapped symlink: %q", out.Result.Text)
	}
}

// TestCriticalAlwaysAsks: yolo mode still asks for a critical Plan, and it
// can only be approved once.
func TestCriticalAlwaysAsks(t *testing.T) {
	f := newFixture(t, policy.ModeYolo, nil)
	ctx := context.Background()
	out := f.decide(t, "wipe", `{"target":"/"}`)
	if out.Decision != arbiter.Pending || out.Rule != "risk.critical" {
		t.Fatalf("outcome %+v; want pending by risk.critical", out)
	}
	for _, scope := range []approval.Scope{approval.ScopeSession, approval.ScopeAlways} {
		if _, err := f.appr.Approve(ctx, out.ApprovalID, "me", scope); !errors.Is(err, approval.ErrScopeNotAllowed) {
			t.Fatalf("approve critical with scope %s: %v; want ErrScopeNotAllowed", scope, err)
		}
	}
	if _, err := f.appr.Approve(ctx, out.ApprovalID, "me", approval.ScopeOnce); err != nil {
		t.Fatal(err)
	}
	if out := f.decide(t, "wipe", `{"target":"/"}`); out.Decision != arbiter.Ran {
		t.Fatalf("approved critical plan: %+v; want ran", out)
	}
	if out := f.decide(t, "wipe", `{"target":"/"}`); out.Decision != arbiter.Pending {
		t.Fatalf("second run of a once-approved critical plan: %+v; want pending", out)
	}
	if f.runs != 1 {
		t.Fatalf("critical tool ran %d times; want 1", f.runs)
	}
}

// TestEveryProposalIsAuditedOnce checks the audit count and chain across
// every kind of outcome, and that denied arguments are stored redacted.
func TestEveryProposalIsAuditedOnce(t *testing.T) {
	f := newFixture(t, policy.ModeSmart, nil)
	ctx := context.Background()
	key := "AKIA" + strings.Repeat("Z", 16)
	proposals := []struct{ name, args string }{
		{"read_file", `{"path":"missing.txt"}`},
		{"nope", `{}`},
		{"read_file", `{"path":1}`},
		{"read_file", `{"path":"../x"}`},
		{"write_file", `{"path":"a.txt","content":"a"}`},
		{"write_file", `{"path":"a.txt","content":"` + key + `"}`},
		{"wipe", `{"target":"x"}`},
	}
	for i, p := range proposals {
		out := f.decide(t, p.name, p.args)
		if out.AuditSeq != int64(i+1) {
			t.Fatalf("proposal %d (%s): audit seq %d; want %d", i, p.name, out.AuditSeq, i+1)
		}
	}
	recs, err := audit.List(ctx, f.st, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(proposals) {
		t.Fatalf("%d audit records; want %d", len(recs), len(proposals))
	}
	for _, r := range recs {
		if strings.Contains(r.Args, key) || strings.Contains(r.Reason, key) {
			t.Fatalf("audit record %d holds the key: %+v", r.Seq, r)
		}
	}
	if n, err := audit.Verify(ctx, f.st); err != nil || n != len(proposals) {
		t.Fatalf("Verify = %d, %v", n, err)
	}
}

// TestUnknownCallerLearnsNothing: an unknown caller is denied before the
// tool decodes or prepares anything.
func TestUnknownCallerLearnsNothing(t *testing.T) {
	f := newFixture(t, policy.ModeYolo, nil)
	for _, c := range []arbiter.Caller{
		{Owner: "x", Trust: policy.TrustUnknown, Session: "s"},
		{Owner: "x", Trust: "admin", Session: "s"},
		{Owner: "", Trust: policy.TrustOwner, Session: "s"},
		{Owner: "x", Trust: policy.TrustOwner, Session: ""},
	} {
		out, err := f.arb.Decide(context.Background(), arbiter.Proposal{Tool: "read_file", Args: json.RawMessage(`{"path":"../../etc"}`), Caller: c})
		if err != nil {
			t.Fatal(err)
		}
		if out.Decision != arbiter.Denied || out.Rule != "trust.unknown" || out.Plan != "" {
			t.Errorf("caller %+v: %+v; want denied by trust.unknown with no plan", c, out)
		}
	}
}

// TestRefusedProposalIsAuditedAndNeverRuns: a proposal its caller refused
// (the agent's budget) is denied with the caller's rule whatever the mode,
// gets an audit record with its arguments redacted, and nothing runs.
func TestRefusedProposalIsAuditedAndNeverRuns(t *testing.T) {
	f := newFixture(t, policy.ModeYolo, nil)
	key := "AKIA" + strings.Repeat("Q", 16)
	for _, p := range []arbiter.Proposal{
		{Tool: "wipe", Args: json.RawMessage(`{"target":"` + key + `"}`)},
		{Tool: "write_file", Args: json.RawMessage(`{"path":"x.txt","content":"x"}`)},
		{Tool: "no_such_tool", Args: json.RawMessage(`{}`)},
	} {
		p.Caller = f.owner
		p.Refuse = &tool.Refusal{Rule: "budget.calls", Reason: "not run: the tool-call budget of this turn is spent"}
		out, err := f.arb.Decide(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if out.Decision != arbiter.Denied || out.Rule != "budget.calls" || out.RunID != "" || out.Result != nil || out.AuditSeq == 0 {
			t.Fatalf("%s: %+v; want denied by budget.calls, audited, not run", p.Tool, out)
		}
	}
	if f.runs != 0 {
		t.Fatalf("wipe ran %d times", f.runs)
	}
	if _, err := os.Stat(filepath.Join(f.root, "x.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("x.txt was written (stat: %v)", err)
	}
	recs, err := audit.List(context.Background(), f.st, 0, 10)
	if err != nil || len(recs) != 3 {
		t.Fatalf("audit: %d records, %v; want 3", len(recs), err)
	}
	if strings.Contains(recs[0].Args, key) {
		t.Fatalf("refused arguments stored unredacted: %s", recs[0].Args)
	}
}
