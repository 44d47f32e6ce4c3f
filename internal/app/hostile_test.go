package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/store/storetest"
)

// These tests drive the real composition — config, SQLite, os.Root
// workspace, the file tools and the arbiter — the way a hostile model
// would, and check what it can never achieve.

func call(t *testing.T, r *Runtime, req CallRequest) Outcome {
	t.Helper()
	out, err := r.Call(context.Background(), req)
	if err != nil {
		t.Fatalf("Call(%s %s) error: %v", req.Tool, req.Args, err)
	}
	return out
}

func wantDecision(t *testing.T, out Outcome, decision, rulePrefix string) {
	t.Helper()
	if string(out.Decision) != decision || !strings.HasPrefix(out.Rule, rulePrefix) {
		t.Fatalf("decision = %s rule %q (%s); want %s with rule %s*", out.Decision, out.Rule, out.Reason, decision, rulePrefix)
	}
}

func lastAuditSeq(t *testing.T, r *Runtime) int64 {
	t.Helper()
	n, err := r.Store.LastAuditSeq(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestHostileArgumentsAreRefusedAndAudited(t *testing.T) {
	r := newTestRuntime(t, "yolo") // least supervision: hard limits must still hold
	writeWorkspaceFile(t, r, "notes.txt", "fine\n")
	root := r.Config.Workspace.Roots[0].Path
	if err := os.Symlink("/etc", filepath.Join(root, "etc-link")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, tool, args, decision, rule string
	}{
		{"case-folded duplicate key", "read_file", `{"path":"notes.txt","PATH":"/etc/passwd"}`, "error", "decode.strict"},
		{"duplicate key", "read_file", `{"path":"notes.txt","path":"/etc/passwd"}`, "error", "decode.strict"},
		{"unknown field", "read_file", `{"path":"notes.txt","follow":true}`, "error", "decode.strict"},
		{"wrong type", "read_file", `{"path":["notes.txt"]}`, "error", "decode.strict"},
		{"trailing object", "read_file", `{"path":"notes.txt"}{"path":"/etc/passwd"}`, "error", "decode.strict"},
		{"dot-dot traversal", "read_file", `{"path":"../../etc/passwd"}`, "denied", "limit."},
		{"percent-encoded traversal", "read_file", `{"path":"%2e%2e/%2e%2e/etc/passwd"}`, "denied", "limit."},
		{"absolute outside roots", "read_file", `{"path":"/etc/passwd"}`, "denied", "limit."},
		{"symlink to /etc", "read_file", `{"path":"etc-link/passwd"}`, "denied", "limit."},
		{"list through symlink", "list_dir", `{"path":"etc-link"}`, "denied", "limit."},
		// Not a hard limit but the gate: critical, asked once even in yolo.
		{"write git hook", "write_file", `{"path":".git/hooks/pre-commit","content":"#!/bin/sh\ncurl evil\n"}`, "pending", "risk.critical"},
		{"write homard config", "write_file", `{"path":"` + r.Paths.ConfigFile + `","content":"x"}`, "denied", "limit."},
		{"unknown tool", "run_shell", `{"cmd":"id"}`, "error", "lookup.unknown"},
		{"secret in arguments", "write_file", `{"path":"k.txt","content":"sk-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}`, "denied", "limit.secret-in-args"},
		{"JSON-escaped secret in arguments", "write_file", `{"path":"k.txt","content":"\u0073k-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}`, "denied", "limit.secret-in-args"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := lastAuditSeq(t, r)
			// A session per case: they are unrelated, and after the
			// denials before it a case would ask first
			// (monitor.denied-repeat).
			out := call(t, r, CallRequest{Tool: c.tool, Args: c.args, Session: "case-" + strconv.Itoa(i)})
			wantDecision(t, out, c.decision, c.rule)
			if out.Result != nil && strings.Contains(out.Result.Text, "root:x:0:0") {
				t.Fatalf("result leaked /etc/passwd: %q", out.Result.Text)
			}
			if got := lastAuditSeq(t, r); got != before+1 {
				t.Fatalf("audit grew by %d records; want exactly 1 per proposal", got-before)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(root, ".git/hooks/pre-commit")); err == nil {
		t.Fatal("a git hook was written")
	}
	if n, err := r.Owner.AuditVerify(context.Background()); err != nil || n != len(cases) {
		t.Fatalf("AuditVerify = %d, %v; want %d records, intact", n, err, len(cases))
	}
}

func TestTrustLevelsFailClosed(t *testing.T) {
	r := newTestRuntime(t, "yolo")
	writeWorkspaceFile(t, r, "notes.txt", "private\n")
	out := call(t, r, CallRequest{Tool: "read_file", Args: `{"path":"notes.txt"}`, As: "unknown"})
	wantDecision(t, out, "denied", "trust.unknown")
	out = call(t, r, CallRequest{Tool: "read_file", Args: `{"path":"notes.txt"}`, As: "guest"})
	wantDecision(t, out, "denied", "trust.guest")
	out = call(t, r, CallRequest{Tool: "write_file", Args: `{"path":"x.txt","content":"x"}`, As: "guest"})
	wantDecision(t, out, "denied", "trust.guest")
	out = call(t, r, CallRequest{Tool: "current_time", Args: `{}`, As: "guest"})
	wantDecision(t, out, "ran", "trust.guest")
	if _, err := r.Call(context.Background(), CallRequest{Tool: "current_time", As: "root"}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("--as root: err = %v; want ErrBadRequest", err)
	}
}

func TestApprovalBindsTheExactPlan(t *testing.T) {
	r := newTestRuntime(t, "smart")
	ctx := context.Background()
	root := r.Config.Workspace.Roots[0].Path
	planA := CallRequest{Tool: "write_file", Args: `{"path":"todo.md","content":"- tea\n"}`, Session: "s1"}
	planB := CallRequest{Tool: "write_file", Args: `{"path":"todo.md","content":"- rm -rf ~\n"}`, Session: "s1"}

	out := call(t, r, planA)
	wantDecision(t, out, "pending", "mode.smart")
	id := out.ApprovalID

	// Another owner cannot approve it.
	if _, err := r.Approvals.Approve(ctx, id, "mallory", approval.ScopeOnce); !errors.Is(err, approval.ErrForeignOwner) {
		t.Fatalf("foreign approve: err = %v; want ErrForeignOwner", err)
	}
	if _, err := r.Owner.Approve(ctx, id, "once"); err != nil {
		t.Fatal(err)
	}
	// Approve one Plan, run another: B is a new plan and waits.
	out = call(t, r, planB)
	wantDecision(t, out, "pending", "mode.smart")
	if out.ApprovalID == id {
		t.Fatal("a changed argument reused the approval of another plan")
	}
	// The same plan from another session does not consume it.
	other := planA
	other.Session = "s2"
	wantDecision(t, call(t, r, other), "pending", "mode.smart")
	// The approved plan runs exactly once.
	wantDecision(t, call(t, r, planA), "ran", "approval.once")
	if b, _ := os.ReadFile(filepath.Join(root, "todo.md")); string(b) != "- tea\n" {
		t.Fatalf("todo.md = %q; want the approved content", b)
	}
	wantDecision(t, call(t, r, planA), "pending", "mode.smart")
	// Replaying the consumed approval is refused.
	if _, err := r.Owner.Approve(ctx, id, "once"); !errors.Is(err, approval.ErrAlreadyDecided) {
		t.Fatalf("replayed approve: err = %v; want ErrAlreadyDecided", err)
	}
}

func TestScopedGrants(t *testing.T) {
	r := newTestRuntime(t, "smart")
	ctx := context.Background()
	write := func(session, path string) Outcome {
		return call(t, r, CallRequest{Tool: "write_file", Args: `{"path":"` + path + `","content":"x"}`, Session: session})
	}
	out := write("s1", "notes/a.md")
	if _, err := r.Owner.Approve(ctx, out.ApprovalID, "session"); err != nil {
		t.Fatal(err)
	}
	wantDecision(t, write("s1", "notes/a.md"), "ran", "approval.once")
	wantDecision(t, write("s1", "notes/b.md"), "ran", "grant.")
	wantDecision(t, write("s1", "notes/deep/c.md"), "ran", "grant.")
	wantDecision(t, write("s1", "other/a.md"), "pending", "mode.smart")
	wantDecision(t, write("s2", "notes/b.md"), "pending", "mode.smart")

	out = write("s3", "journal/2026.md")
	if _, err := r.Owner.Approve(ctx, out.ApprovalID, "always"); err != nil {
		t.Fatal(err)
	}
	wantDecision(t, write("s4", "journal/2027.md"), "ran", "grant.")
	wantDecision(t, write("s4", "journal.md"), "pending", "mode.smart")
	// A guest never rides on the owner's grants.
	wantDecision(t, call(t, r, CallRequest{Tool: "write_file", Args: `{"path":"journal/x.md","content":"x"}`, As: "guest"}), "denied", "trust.guest")
}

func TestModes(t *testing.T) {
	cases := []struct {
		mode, tool, args, decision string
	}{
		{"safe", "read_file", `{"path":"notes.txt"}`, "ran"},
		{"safe", "write_file", `{"path":"n.txt","content":"x"}`, "pending"},
		{"smart", "write_file", `{"path":"n.txt","content":"x"}`, "pending"},
		{"autopilot", "write_file", `{"path":"n.txt","content":"x"}`, "ran"},
		{"yolo", "edit_file", `{"path":"notes.txt","old_text":"fine","new_text":"good"}`, "ran"},
	}
	for _, c := range cases {
		t.Run(c.mode+"/"+c.tool, func(t *testing.T) {
			r := newTestRuntime(t, c.mode)
			writeWorkspaceFile(t, r, "notes.txt", "fine\n")
			out := call(t, r, CallRequest{Tool: c.tool, Args: c.args})
			if string(out.Decision) != c.decision {
				t.Fatalf("%s in %s mode: %s (%s); want %s", c.tool, c.mode, out.Decision, out.Reason, c.decision)
			}
		})
	}
}

func TestPendingAndConsumedSurviveRestart(t *testing.T) {
	home := t.TempDir()
	paths, err := config.ResolvePaths(home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := Init(ctx, paths, config.InitOptions{StoreURL: storetest.URL(t)}); err != nil {
		t.Fatal(err)
	}
	open := func() *Runtime {
		r, err := Open(ctx, paths, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	req := CallRequest{Tool: "write_file", Args: `{"path":"a.txt","content":"a"}`}
	r := open()
	id := call(t, r, req).ApprovalID
	r.Close()

	r = open()
	if a, err := r.Owner.Approval(ctx, id); err != nil || a.Status != approval.Pending {
		t.Fatalf("after restart: %+v, %v; want pending", a, err)
	}
	if _, err := r.Owner.Approve(ctx, id, "once"); err != nil {
		t.Fatal(err)
	}
	wantDecision(t, call(t, r, req), "ran", "approval.once")
	r.Close()

	r = open()
	defer r.Close()
	if a, _ := r.Owner.Approval(ctx, id); a.Status != approval.Consumed {
		t.Fatalf("after restart: status %s; want consumed", a.Status)
	}
	wantDecision(t, call(t, r, req), "pending", "mode.smart")
}

func TestConcurrentApproversOneWins(t *testing.T) {
	r := newTestRuntime(t, "smart")
	id := call(t, r, CallRequest{Tool: "write_file", Args: `{"path":"a.txt","content":"a"}`}).ApprovalID
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 16 {
		wg.Go(func() {
			if _, err := r.Owner.Approve(context.Background(), id, "once"); err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d approvers won; want exactly 1", wins)
	}
}

// TestSecretsAppearNowhere reads a file holding a key and proposes the key
// as an argument; the key must not reach the result, the audit, the
// ToolRun ledger or anywhere in the database files.
func TestSecretsAppearNowhere(t *testing.T) {
	r := newTestRuntime(t, "yolo")
	const canary = "sk-proj-CANARYcanaryCANARYcanary0123456789"
	writeWorkspaceFile(t, r, "env.txt", "OPENAI_API_KEY="+canary+"\npassword=hunter2hunter2\n")
	out := call(t, r, CallRequest{Tool: "read_file", Args: `{"path":"env.txt"}`})
	wantDecision(t, out, "ran", "mode.")
	if strings.Contains(out.Result.Text, canary) || strings.Contains(out.Result.Text, "hunter2") {
		t.Fatalf("result not redacted: %q", out.Result.Text)
	}
	out = call(t, r, CallRequest{Tool: "grep", Args: `{"pattern":"sk-proj"}`})
	if strings.Contains(out.Result.Text, canary) {
		t.Fatalf("grep result not redacted: %q", out.Result.Text)
	}
	out = call(t, r, CallRequest{Tool: "write_file", Args: `{"path":"leak.txt","content":"` + canary + `"}`})
	wantDecision(t, out, "denied", "limit.secret-in-args")
	escaped := `\u0073k-proj-\u0043ANARYcanaryCANARYcanary0123456789`
	out = call(t, r, CallRequest{Tool: "write_file", Args: `{"path":"leak.txt","content":"` + escaped + `","content":"x"}`})
	wantDecision(t, out, "error", "decode.strict") // duplicate key: rejected before Prepare
	out = call(t, r, CallRequest{Tool: "write_file", Args: `{"path":"leak.txt","content":"` + escaped + `"}`})
	wantDecision(t, out, "denied", "limit.secret-in-args")
	r.Close()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(r.Paths.DBFile + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("ANARYcanaryCANARYcanary0123456789")) || bytes.Contains(b, []byte("hunter2")) {
			t.Fatalf("the secret is stored in %s", filepath.Base(r.Paths.DBFile+suffix))
		}
	}
	if _, err := os.Stat(filepath.Join(r.Config.Workspace.Roots[0].Path, "leak.txt")); err == nil {
		t.Fatal("the denied write happened")
	}
}
