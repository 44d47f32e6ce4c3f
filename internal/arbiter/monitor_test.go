package arbiter_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/monitor"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/store/storetest"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/tools"
	"github.com/homard/homard/internal/workspace"
)

// newMonitored is an arbiter over the file tools in smart mode with the
// write-spread monitor at 5 folders and the given operator rules.
func newMonitored(t *testing.T, rules []policy.Rule) (*arbiter.Arbiter, *approval.Service) {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "ws")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	st := storetest.Open(t)
	ws, err := workspace.Open(workspace.Options{Roots: []workspace.Root{{Name: "main", Path: root}}, CheckpointDir: filepath.Join(dir, "cp")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	reg, err := tool.NewRegistry(tools.FileTools(changeset.New(ws, changeset.Options{}), time.Now)...)
	if err != nil {
		t.Fatal(err)
	}
	appr := approval.New(st, approval.Options{})
	arb := arbiter.New(arbiter.Options{Registry: reg, Store: st, Approvals: appr, Redactor: secrets.NewRedactor(),
		Mode: policy.ModeSmart, Rules: rules, Monitor: monitor.Limits{WriteSpread: 5}})
	return arb, appr
}

var monitoredOwner = arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"}

func writeTo(t *testing.T, arb *arbiter.Arbiter, path string) arbiter.Outcome {
	t.Helper()
	out, err := arb.Decide(context.Background(), arbiter.Proposal{Tool: "write_file",
		Args: json.RawMessage(`{"path":"` + path + `","content":"x\n"}`), Caller: monitoredOwner})
	if err != nil {
		t.Fatalf("Decide(write_file %s): %v", path, err)
	}
	return out
}

// TestMonitorNeverLowersADeny: past the threshold, a write an operator
// rule denies is still denied; one the rules allow asks under the
// monitor's rule, with the folders as evidence.
func TestMonitorNeverLowersADeny(t *testing.T) {
	arb, _ := newMonitored(t, []policy.Rule{
		{ID: "no-z", Tool: "write_file", Path: "z/**", Effect: policy.Deny},
		{ID: "w", Tool: "write_file", Path: "**", Effect: policy.Allow},
	})
	for _, p := range []string{"a/1.md", "b/1.md", "c/1.md", "d/1.md", "e/1.md"} {
		if out := writeTo(t, arb, p); out.Decision != arbiter.Ran || out.Rule != "rule.w" {
			t.Fatalf("write %s = %s (%s: %s); want ran by rule.w", p, out.Decision, out.Rule, out.Reason)
		}
	}
	if out := writeTo(t, arb, "z/1.md"); out.Decision != arbiter.Denied || out.Rule != "rule.no-z" {
		t.Errorf("write z/1.md = %s (%s); want denied by rule.no-z", out.Decision, out.Rule)
	}
	out := writeTo(t, arb, "f/1.md")
	if out.Decision != arbiter.Pending || out.Rule != policy.RuleMonitorWriteSpread || !strings.Contains(out.Reason, "writes into 5 folders") {
		t.Errorf("write f/1.md = %s (%s: %s); want pending by %s with the folders", out.Decision, out.Rule, out.Reason, policy.RuleMonitorWriteSpread)
	}
}

// TestMonitorCardNotAnsweredByAGrant: a session grant for a folder does
// not answer a monitor's card (it says the tool may touch those files,
// not that the pattern is expected); the owner's once-approval of the
// monitor's card does, and restarts the count.
func TestMonitorCardNotAnsweredByAGrant(t *testing.T) {
	ctx := context.Background()
	arb, appr := newMonitored(t, []policy.Rule{{ID: "w", Tool: "write_file", Path: "[a-e]/**", Effect: policy.Allow}})
	// g/ is granted for the session: asked by smart mode, approved so.
	out := writeTo(t, arb, "g/1.md")
	if out.Decision != arbiter.Pending || out.Rule != policy.RuleModeSmart {
		t.Fatalf("write g/1.md = %s (%s); want pending by mode.smart", out.Decision, out.Rule)
	}
	if _, err := appr.Approve(ctx, out.ApprovalID, "me", approval.ScopeSession); err != nil {
		t.Fatal(err)
	}
	if out := writeTo(t, arb, "g/1.md"); out.Decision != arbiter.Ran {
		t.Fatalf("approved write g/1.md = %s (%s)", out.Decision, out.Rule)
	}
	if out := writeTo(t, arb, "g/2.md"); out.Decision != arbiter.Ran || !strings.HasPrefix(out.Rule, "grant.") {
		t.Fatalf("write g/2.md = %s (%s); want ran by the session grant", out.Decision, out.Rule)
	}
	for _, p := range []string{"a/1.md", "b/1.md", "c/1.md", "d/1.md"} {
		if out := writeTo(t, arb, p); out.Decision != arbiter.Ran {
			t.Fatalf("write %s = %s (%s)", p, out.Decision, out.Rule)
		}
	}
	// Five folders written: the grant would cover g/3.md, the monitor asks.
	out = writeTo(t, arb, "g/3.md")
	if out.Decision != arbiter.Pending || out.Rule != policy.RuleMonitorWriteSpread {
		t.Fatalf("write g/3.md = %s (%s: %s); want pending by %s", out.Decision, out.Rule, out.Reason, policy.RuleMonitorWriteSpread)
	}
	ap, err := appr.Get(ctx, out.ApprovalID)
	if err != nil || ap.Rule != policy.RuleMonitorWriteSpread {
		t.Fatalf("card %s rule %q, %v; want %s", out.ApprovalID, ap.Rule, err, policy.RuleMonitorWriteSpread)
	}
	if _, err := appr.Approve(ctx, out.ApprovalID, "me", approval.ScopeOnce); err != nil {
		t.Fatal(err)
	}
	if out := writeTo(t, arb, "g/3.md"); out.Decision != arbiter.Ran || out.Rule != policy.RuleApprovalOnce {
		t.Fatalf("approved write g/3.md = %s (%s); want ran by approval.once", out.Decision, out.Rule)
	}
	// The count started again: the next writes run as before.
	if out := writeTo(t, arb, "e/1.md"); out.Decision != arbiter.Ran {
		t.Errorf("write e/1.md after the approval = %s (%s: %s); want ran", out.Decision, out.Rule, out.Reason)
	}
}
