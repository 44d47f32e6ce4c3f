package arbiter_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/store/storetest"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/tools"
	"github.com/homard/homard/internal/workspace"
)

// guestFixture is an arbiter over the file tools and apply_changes, with
// one change set held, and a guest list naming read-only tools and one
// that is not (write_file: listed, never a guest's).
type guestFixture struct {
	arb   *arbiter.Arbiter
	reg   *tool.Registry
	held  string // the held change set's id
	owner arbiter.Caller
	guest arbiter.Caller
}

var guestList = []string{"current_time", "read_file", "write_file"}

func newGuestFixture(t *testing.T) *guestFixture {
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
	gate := changeset.New(ws, changeset.Options{HoldDir: filepath.Join(dir, "held")})
	out := gate.WriteFiles(context.Background(), changeset.Proposal{Root: "main", Writer: []string{"write_file", ".envrc"}, Limit: workspace.GradeMedium},
		[]changeset.File{{Rel: ".envrc", Data: []byte("export PATH=./bin:$PATH\n")}})
	if out.Held == nil {
		t.Fatalf("a new .envrc was not held: %+v", out)
	}
	reg, err := tool.NewRegistry(append(tools.FileTools(gate, nil), tools.NewApplyChanges(gate))...)
	if err != nil {
		t.Fatal(err)
	}
	return &guestFixture{
		arb: arbiter.New(arbiter.Options{Registry: reg, Store: st, Approvals: approval.New(st, approval.Options{}),
			Redactor: secrets.NewRedactor(), Mode: policy.ModeYolo, GuestTools: guestList}),
		reg:   reg,
		held:  out.Held.ID,
		owner: arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s-owner"},
		guest: arbiter.Caller{Owner: "guest", Trust: policy.TrustGuest, Session: "s-guest"},
	}
}

func (f *guestFixture) decide(t *testing.T, c arbiter.Caller, name, args string) arbiter.Outcome {
	t.Helper()
	out, err := f.arb.Decide(context.Background(), arbiter.Proposal{Tool: name, Args: json.RawMessage(args), Caller: c})
	if err != nil {
		t.Fatalf("Decide(%s %s): %v", name, args, err)
	}
	return out
}

// seen is what the caller is told of an outcome: all of it but the audit
// sequence number, which every record has its own of.
func seen(t *testing.T, out arbiter.Outcome) string {
	t.Helper()
	out.AuditSeq = 0
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGuestLearnsNothingFromIDs: a guest's apply_changes is refused before
// the tool looks the id up, so the answer is the same byte for byte
// whether the change set exists or not, and whatever the arguments. Twin:
// the owner's call does look it up, and hears that a missing one is not
// held.
func TestGuestLearnsNothingFromIDs(t *testing.T) {
	f := newGuestFixture(t)
	const missing = "cs_00000000deadbeef"
	exists := f.decide(t, f.guest, "apply_changes", `{"id":"`+f.held+`"}`)
	if exists.Decision != arbiter.Denied || exists.Rule != policy.RuleTrustGuestTools || exists.Plan != "" {
		t.Fatalf("guest apply_changes(held id) = %+v; want denied by %s with no plan", exists, policy.RuleTrustGuestTools)
	}
	for _, args := range []string{`{"id":"` + missing + `"}`, `{"id":"../../etc/passwd"}`, `{"nope":1}`, `not json`} {
		if got, want := seen(t, f.decide(t, f.guest, "apply_changes", args)), seen(t, exists); got != want {
			t.Errorf("guest apply_changes(%s) told\n%s\nwant the same as for a held id:\n%s", args, got, want)
		}
	}

	// Twin: the owner is told the truth about each id.
	out := f.decide(t, f.owner, "apply_changes", `{"id":"`+missing+`"}`)
	if out.Decision != arbiter.Error || !strings.Contains(out.Reason, "no held change set "+missing) {
		t.Errorf("owner apply_changes(missing id) = %+v; want the error \"no held change set %s\"", out, missing)
	}
	out = f.decide(t, f.owner, "apply_changes", `{"id":"`+f.held+`"}`)
	if out.Decision != arbiter.Pending || !strings.Contains(out.Plan, f.held) {
		t.Errorf("owner apply_changes(held id) = %+v; want pending, its plan naming %s", out, f.held)
	}
}

// TestGuestRefusalNamesOnlyGuestTools: whatever tool a guest calls that it
// may not use (the owner's, one listed for guests that is not read-only,
// one that does not exist), the refusal lists the guest's tools and no
// other, and does not tell whether the tool exists. Twin: an owner's call
// of a tool that does not exist lists the owner's tools.
func TestGuestRefusalNamesOnlyGuestTools(t *testing.T) {
	f := newGuestFixture(t)
	var guestTools, ownerOnly []string
	for _, s := range f.reg.Specs() {
		if policy.GuestTool(s.Name, s.ReadOnly, s.Risk, guestList) {
			guestTools = append(guestTools, s.Name)
		} else {
			ownerOnly = append(ownerOnly, s.Name)
		}
	}
	if len(guestTools) != 2 || len(ownerOnly) < 5 {
		t.Fatalf("guest tools %q, owner's %q; want current_time and read_file, and the rest", guestTools, ownerOnly)
	}
	var first arbiter.Outcome
	for i, name := range []string{"apply_changes", "write_file", "edit_file", "no_such_tool"} {
		out := f.decide(t, f.guest, name, `{}`)
		if out.Decision != arbiter.Denied || out.Rule != policy.RuleTrustGuestTools {
			t.Errorf("guest %s: %+v; want denied by %s", name, out, policy.RuleTrustGuestTools)
		}
		// The name the guest wrote is quoted back; nothing else it may not use.
		rest := strings.Replace(out.Reason, `"`+name+`"`, `"…"`, 1)
		for _, o := range ownerOnly {
			if strings.Contains(rest, o) {
				t.Errorf("guest %s: refusal %q names the owner's tool %s", name, out.Reason, o)
			}
		}
		for _, g := range guestTools {
			if !strings.Contains(rest, g) {
				t.Errorf("guest %s: refusal %q does not list the guest's tool %s", name, out.Reason, g)
			}
		}
		if i == 0 {
			first = out
			continue
		}
		// The owner's tool and a tool that does not exist: one answer.
		if got, want := seen(t, out), strings.ReplaceAll(seen(t, first), "apply_changes", name); got != want {
			t.Errorf("guest %s told\n%s\nwant the answer to apply_changes with the name changed:\n%s", name, got, want)
		}
	}

	// Twin: a guest's own tool runs.
	if out := f.decide(t, f.guest, "current_time", `{}`); out.Decision != arbiter.Ran {
		t.Errorf("guest current_time: %+v; want ran", out)
	}
	// Twin: the owner's unknown tool lists every tool, the owner's own.
	out := f.decide(t, f.owner, "no_such_tool", `{}`)
	if out.Decision != arbiter.Error || out.Rule != policy.RuleLookupUnknown {
		t.Errorf("owner no_such_tool: %+v; want error by %s", out, policy.RuleLookupUnknown)
	}
	for _, name := range append(ownerOnly, guestTools...) {
		if !strings.Contains(out.Reason, name) {
			t.Errorf("owner no_such_tool: %q does not list %s", out.Reason, name)
		}
	}
	// An unknown caller hears of no tool at all.
	out = f.decide(t, arbiter.Caller{Owner: "x", Trust: policy.TrustUnknown, Session: "s-x"}, "no_such_tool", `{}`)
	if out.Decision != arbiter.Denied || out.Rule != policy.RuleTrustUnknown || strings.Contains(out.Reason, "read_file") {
		t.Errorf("unknown caller no_such_tool: %+v; want denied by %s, naming no tool", out, policy.RuleTrustUnknown)
	}
}
