package arbiter_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/store/storetest"
	"github.com/homard/homard/internal/tool"
)

// fakeCommand plans commands the way run_command does (catalog verdict,
// class, template) and runs nothing; it counts runs.
type fakeCommand struct{ runs *int }

type fakeCommandParams struct {
	Argv []string `json:"argv"`
}

func (fakeCommand) Spec() tool.Spec {
	return tool.Spec{Name: "run_command", Description: "test", Action: policy.ActionExec, Risk: policy.RiskMedium}
}

func (fakeCommand) Prepare(_ context.Context, p fakeCommandParams) (tool.Plan, error) {
	path := "/usr/bin/" + p.Argv[0]
	v := policy.ClassifyCommand(policy.Command{Program: p.Argv[0], Path: path, RealPath: path, Args: p.Argv[1:]}, nil)
	if v.Refused {
		return tool.Plan{}, tool.Refuse(v.Rule, "%s", v.Reason)
	}
	tm := v.Template
	tm.Dir, tm.TimeoutS = ".", 60
	return tool.NewPlan(tool.PlanSpec{Tool: "run_command", Action: policy.ActionExec, Risk: v.Risk, ReadOnly: v.ReadOnly,
		Class: v.Class, Template: &tm, Display: strings.Join(p.Argv, " "), Targets: []string{"."},
		Command: append([]string{path}, p.Argv[1:]...), Body: p})
}

func (f fakeCommand) Run(context.Context, tool.Plan) (tool.Result, error) {
	*f.runs++
	return tool.Result{Text: "ran"}, nil
}

type commandFixture struct {
	arb  *arbiter.Arbiter
	appr *approval.Service
	runs int
}

func newCommandFixture(t *testing.T, o arbiter.Options) *commandFixture {
	t.Helper()
	st := storetest.Open(t)
	f := &commandFixture{}
	reg, err := tool.NewRegistry(tool.Adapt[fakeCommandParams](fakeCommand{runs: &f.runs}))
	if err != nil {
		t.Fatal(err)
	}
	f.appr = approval.New(st, approval.Options{})
	o.Registry, o.Store, o.Approvals, o.Redactor = reg, st, f.appr, secrets.NewRedactor()
	f.arb = arbiter.New(o)
	return f
}

func (f *commandFixture) run(t *testing.T, argv ...string) arbiter.Outcome {
	t.Helper()
	args, _ := json.Marshal(fakeCommandParams{Argv: argv})
	out, err := f.arb.Decide(context.Background(), arbiter.Proposal{Tool: "run_command", Args: args,
		Caller: arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"}})
	if err != nil {
		t.Fatalf("Decide(%q): %v", argv, err)
	}
	return out
}

// TestCommandSessionGrantIsATemplate: through the whole pipeline,
// approving "mkdir build" for the session lets a second mkdir run unasked
// and nothing else.
func TestCommandSessionGrantIsATemplate(t *testing.T) {
	f := newCommandFixture(t, arbiter.Options{Mode: policy.ModeSmart,
		CommandSlotInside: func(dir, slot, op string, _ bool) bool { return policy.InSlot(slot, op) }})
	out := f.run(t, "mkdir", "build")
	if out.Decision != arbiter.Pending {
		t.Fatalf("mkdir build in smart mode: %+v; want pending", out)
	}
	ap, err := f.appr.Get(context.Background(), out.ApprovalID)
	if err != nil || ap.Template == nil || ap.Template.String() != "mkdir ‹new name in ./›" {
		t.Fatalf("card template = %v, %v; want mkdir ‹new name in ./›", ap.Template, err)
	}
	if ap.Reach != policy.ReachWrite {
		t.Errorf("mkdir's card has class %v; want write", ap.Reach)
	}
	if _, err := f.appr.Approve(context.Background(), out.ApprovalID, "me", approval.ScopeSession); err != nil {
		t.Fatal(err)
	}
	if out := f.run(t, "mkdir", "build"); out.Decision != arbiter.Ran || out.Rule != "approval.once" {
		t.Fatalf("the approved mkdir build: %+v; want ran by approval.once", out)
	}
	if out := f.run(t, "mkdir", "src"); out.Decision != arbiter.Ran || !strings.HasPrefix(out.Rule, "grant.") {
		t.Fatalf("a second mkdir under the session grant: %+v; want ran by the grant", out)
	}
	for _, argv := range [][]string{
		{"cp", "/etc/passwd", "important.txt"},
		{"mkdir", "-p", "x", "--mode=4777"},
		{"gcc", "-wrapper", "/bin/sh,-c,id", "x.c"},
		{"mkdir", "../x"},
		{"mkdir", "-x"},
	} {
		if out := f.run(t, argv...); out.Decision != arbiter.Pending {
			t.Errorf("%q after approving mkdir build: %+v; want pending", argv, out)
		}
	}
	if f.runs != 2 {
		t.Errorf("runs = %d; want 2", f.runs)
	}
}

// TestCommandGrantNeedsAResolver: without CommandSlotInside no slot is
// ever covered (fail closed).
func TestCommandGrantNeedsAResolver(t *testing.T) {
	f := newCommandFixture(t, arbiter.Options{Mode: policy.ModeSmart})
	out := f.run(t, "mkdir", "build")
	if _, err := f.appr.Approve(context.Background(), out.ApprovalID, "me", approval.ScopeSession); err != nil {
		t.Fatal(err)
	}
	if out := f.run(t, "mkdir", "src"); out.Decision != arbiter.Pending {
		t.Fatalf("mkdir src without a resolver: %+v; want pending", out)
	}
}

// TestCommandModeTable: the class reaches policy through the Plan, and
// commands.unknown through the options.
func TestCommandModeTable(t *testing.T) {
	cases := []struct {
		mode    policy.Mode
		unknown string
		argv    []string
		want    arbiter.Decision
	}{
		{policy.ModeSafe, policy.UnknownSandbox, []string{"ls", "-l"}, arbiter.Ran},
		{policy.ModeSafe, policy.UnknownSandbox, []string{"mkdir", "x"}, arbiter.Pending},
		{policy.ModeSafe, policy.UnknownSandbox, []string{"go", "test", "./..."}, arbiter.Pending},
		{policy.ModeSmart, policy.UnknownSandbox, []string{"go", "test", "./..."}, arbiter.Pending},
		{policy.ModeAutopilot, policy.UnknownSandbox, []string{"mkdir", "x"}, arbiter.Ran},
		{policy.ModeAutopilot, policy.UnknownSandbox, []string{"go", "test", "./..."}, arbiter.Ran},
		{policy.ModeAutopilot, policy.UnknownAsk, []string{"go", "test", "./..."}, arbiter.Pending},
		{policy.ModeYolo, policy.UnknownAsk, []string{"go", "test", "./..."}, arbiter.Ran},
		{policy.ModeYolo, policy.UnknownSandbox, []string{"rm", "-rf", "build"}, arbiter.Pending},
		{policy.ModeYolo, policy.UnknownSandbox, []string{"sh", "-c", "id"}, arbiter.Denied},
	}
	for _, c := range cases {
		f := newCommandFixture(t, arbiter.Options{Mode: c.mode, UnknownCommands: c.unknown})
		if out := f.run(t, c.argv...); out.Decision != c.want {
			t.Errorf("%q in %s (commands.unknown = %s): %+v; want %s", c.argv, c.mode, c.unknown, out, c.want)
		}
	}
}

// TestRunsCodeApprovedOnceThroughTheArbiter: a card for code cannot be
// turned into a session grant.
func TestRunsCodeApprovedOnceThroughTheArbiter(t *testing.T) {
	f := newCommandFixture(t, arbiter.Options{Mode: policy.ModeSmart,
		CommandSlotInside: func(dir, slot, op string, _ bool) bool { return true }})
	out := f.run(t, "python3", "x.py")
	if out.Decision != arbiter.Pending {
		t.Fatalf("python3 x.py in smart: %+v; want pending", out)
	}
	if _, err := f.appr.Approve(context.Background(), out.ApprovalID, "me", approval.ScopeSession); err == nil {
		t.Fatal("a session approval of code succeeded")
	}
}
