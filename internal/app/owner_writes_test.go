package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOwnerRollbackPassesTheGate: rolling back the write of a file the
// owner's tools run shows the gate's finding in the preview, and the
// rollback leaves an audit record naming the owner; the twin, rolling back
// an ordinary file, shows no finding and is audited the same way.
func TestOwnerRollbackPassesTheGate(t *testing.T) {
	ctx := context.Background()
	r := newTestRuntime(t, "autopilot")
	root := r.Config.Workspace.Roots[0].Path
	writeWorkspaceFile(t, r, ".envrc", "export A=1\n")
	writeWorkspaceFile(t, r, "notes.md", "one\n")
	for _, tc := range []struct {
		rel     string
		finding string // "" : none
	}{{".envrc", "owner's tools execute"}, {"notes.md", ""}} {
		out := call(t, r, CallRequest{Tool: "write_file", Args: `{"path":"` + tc.rel + `","content":"changed\n"}`})
		if out.Decision == "pending" {
			if _, err := r.Owner.Approve(ctx, out.ApprovalID, "once"); err != nil {
				t.Fatal(err)
			}
			out = call(t, r, CallRequest{Tool: "write_file", Args: `{"path":"` + tc.rel + `","content":"changed\n"}`})
		}
		id := regexp.MustCompile("checkpoint rollback ([^`]+)`").FindStringSubmatch(resultText(out))
		if out.Decision != "ran" || id == nil {
			t.Fatalf("%s: %s %q; want a write with a checkpoint", tc.rel, out.Decision, resultText(out))
		}
		pv, err := r.Owner.RollbackPreview(id[1])
		if err != nil {
			t.Fatal(err)
		}
		if got := pv.String(); tc.finding != "" && !strings.Contains(got, tc.finding) || tc.finding == "" && strings.Contains(got, "graded") {
			t.Errorf("%s: rollback preview %q; want finding %q", tc.rel, got, tc.finding)
		}
		before := lastAuditSeq(t, r)
		if _, err := r.Owner.Rollback(ctx, id[1], pv.SavedSHA256()); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(root, tc.rel)); strings.Contains(string(b), "changed") {
			t.Errorf("%s after rollback = %q; want the old content", tc.rel, b)
		}
		recs := auditSince(t, r, before)
		if len(recs) != 1 || recs[0].Tool != "checkpoint.rollback" || recs[0].Session != "owner" || !strings.Contains(recs[0].Args, id[1]) {
			t.Errorf("%s: audit after the rollback = %+v; want one checkpoint.rollback record by the owner", tc.rel, recs)
		}
	}
}

// TestOwnerMemoryEditsAreAudited: memory added and forgotten by hand is
// in the audit chain, and the chain still verifies.
func TestOwnerMemoryEditsAreAudited(t *testing.T) {
	ctx := context.Background()
	r := newTestRuntime(t, "autopilot")
	before := lastAuditSeq(t, r)
	u, err := r.Owner.MemoryAdd(ctx, "the owner likes tea", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Owner.MemoryForget(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	recs := auditSince(t, r, before)
	if len(recs) != 2 || recs[0].Tool != "memory.add" || recs[1].Tool != "memory.forget" || !strings.Contains(recs[1].Args, u.ID) {
		t.Fatalf("audit = %+v; want memory.add then memory.forget naming %s", recs, u.ID)
	}
	if strings.Contains(recs[0].Args, "tea") {
		t.Errorf("the audit holds the memory's text: %q", recs[0].Args)
	}
	if _, err := r.Owner.AuditVerify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestOwnerRollbackEveryKind: the rollback is a writer of the table too.
// For each protected kind whose file a rollback can bring back, rolling
// back a change to it shows the gate's critical finding on the preview;
// for its twin, none. (Kinds whose target must be new, and sensitive
// files, which no file tool writes, have no file checkpoint to roll back.)
func TestOwnerRollbackEveryKind(t *testing.T) {
	ctx := context.Background()
	r := newTestRuntime(t, "autopilot")
	requireCommands(t, r)
	for i, k := range gateKinds {
		if k.fresh || k.name == "sensitive file" {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			dir := fmt.Sprintf("rollback-%d", i)
			writeWorkspaceFile(t, r, dir+"/.keep", "")
			if k.setup != nil {
				k.setup(t, r, dir)
			}
			for _, c := range []struct {
				rel      string
				critical bool
			}{{dir + "/" + k.target, true}, {dir + "/" + k.twin, false}} {
				writeWorkspaceFile(t, r, c.rel, gatePlaceholder)
				args := fmt.Sprintf(`{"path":%q,"content":%q}`, c.rel, gatePayload)
				out := call(t, r, CallRequest{Tool: "write_file", Args: args})
				if out.Decision == "pending" {
					if _, err := r.Owner.Approve(ctx, out.ApprovalID, "once"); err != nil {
						t.Fatal(err)
					}
					out = call(t, r, CallRequest{Tool: "write_file", Args: args})
				}
				id := regexp.MustCompile("checkpoint rollback ([^`]+)`").FindStringSubmatch(resultText(out))
				if id == nil {
					t.Fatalf("%s: %s %q; want a write with a checkpoint", c.rel, out.Decision, resultText(out))
				}
				pv, err := r.Owner.RollbackPreview(id[1])
				if err != nil {
					t.Fatal(err)
				}
				if got := pv.Graded != nil && pv.Graded.Grade.String() == "critical"; got != c.critical {
					t.Errorf("%s: rollback preview critical = %v; want %v:\n%s", c.rel, got, c.critical, pv)
				}
				if _, err := r.Owner.Rollback(ctx, id[1], pv.SavedSHA256()); err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(filepath.Join(r.Config.Workspace.Roots[0].Path, c.rel)); string(b) != gatePlaceholder {
					t.Errorf("%s after rollback = %q; want the owner's content back", c.rel, b)
				}
			}
		})
	}
}
