package arbiter_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/store/storetest"
	"github.com/homard/homard/internal/tool"
)

// echoTool is a read-only tool with two string arguments whose result is
// the arguments joined, or a fixed text when out is set.
type echoTool struct{ out string }

type echoParams struct {
	A string `json:"a"`
	B string `json:"b,omitempty"`
}

func (echoTool) Spec() tool.Spec {
	return tool.Spec{Name: "echo", Description: "test tool", Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true}
}

func (echoTool) Prepare(_ context.Context, p echoParams) (tool.Plan, error) {
	return tool.NewPlan(tool.PlanSpec{Tool: "echo", Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true,
		Display: "echo", Body: p})
}

func (e echoTool) Run(_ context.Context, p tool.Plan) (tool.Result, error) {
	if e.out != "" {
		return tool.Result{Text: e.out}, nil
	}
	return tool.Result{Text: string(p.Canonical())}, nil
}

// vaultKey is long and random enough to be searched for transformed, and
// each half of it too (a shorter key is searched for whole only).
const vaultKey = "sk-proj-Q7vXk2LmT9pWz4RbN8cJh5Ys3Dq6Ue"

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

func newEchoArbiter(t *testing.T, e echoTool) *arbiter.Arbiter {
	t.Helper()
	st := storetest.Open(t)
	reg, err := tool.NewRegistry(tool.Adapt[echoParams](e))
	if err != nil {
		t.Fatal(err)
	}
	return arbiter.New(arbiter.Options{Registry: reg, Store: st, Approvals: approval.New(st, approval.Options{}),
		Redactor: secrets.NewRedactor(vaultKey), Mode: policy.ModeYolo})
}

// TestTransformedVaultValueInArgsDenied: a hostile model carrying a vault
// value reversed, case-swapped, spaced out or cut across two arguments is
// denied by the secret-in-arguments limit in every mode (yolo here); the
// twins, ordinary text and half of the value alone, run.
func TestTransformedVaultValueInArgsDenied(t *testing.T) {
	me := arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s1"}
	half := len(vaultKey) / 2
	spaced := strings.Join(strings.Split(vaultKey, ""), " ")
	swapped := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 32
		case r >= 'A' && r <= 'Z':
			return r + 32
		}
		return r
	}, vaultKey)
	hostile := map[string]echoParams{
		"exact":          {A: vaultKey},
		"reversed":       {A: reverse(vaultKey)},
		"case-swapped":   {A: swapped},
		"spaced":         {A: spaced},
		"split in two":   {A: vaultKey[:half], B: vaultKey[half:]},
		"split reversed": {A: reverse(vaultKey[half:]), B: vaultKey[:half]},
	}
	arb := newEchoArbiter(t, echoTool{})
	for name, p := range hostile {
		args, _ := json.Marshal(p)
		out, err := arb.Decide(context.Background(), arbiter.Proposal{Tool: "echo", Args: args, Caller: me})
		if err != nil || out.Decision != arbiter.Denied || out.Rule != policy.RuleLimitSecretInArgs {
			t.Errorf("%s: Decide = %s %s (%v); want denied by %s", name, out.Decision, out.Rule, err, policy.RuleLimitSecretInArgs)
		}
	}
	twins := map[string]echoParams{
		"ordinary text":  {A: "the quick brown fox jumps over the lazy dog", B: "sk-proj is a key prefix"},
		"half the value": {A: vaultKey[:half]},
		"a quarter each": {A: vaultKey[:half/2], B: vaultKey[len(vaultKey)-half/2:]},
	}
	for name, p := range twins {
		args, _ := json.Marshal(p)
		out, err := arb.Decide(context.Background(), arbiter.Proposal{Tool: "echo", Args: args, Caller: me})
		if err != nil || out.Decision != arbiter.Ran {
			t.Errorf("%s: Decide = %s %s %q (%v); want ran", name, out.Decision, out.Rule, out.Reason, err)
		}
	}
}

// TestTransformedVaultValueInResultRedacted: a tool's output holding the
// value reversed or spaced reaches the model redacted; its twin, output
// without it, reaches the model as it was.
func TestTransformedVaultValueInResultRedacted(t *testing.T) {
	me := arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s1"}
	for _, c := range []struct {
		out, leak string
	}{
		{"key: " + reverse(vaultKey) + "\n", reverse(vaultKey)},
		{"key: " + strings.Join(strings.Split(vaultKey, ""), "-") + "\n", strings.Join(strings.Split(vaultKey, ""), "-")},
		{"nothing secret here\n", ""},
	} {
		arb := newEchoArbiter(t, echoTool{out: c.out})
		out, err := arb.Decide(context.Background(), arbiter.Proposal{Tool: "echo", Args: json.RawMessage(`{"a":"x"}`), Caller: me})
		if err != nil || out.Decision != arbiter.Ran {
			t.Fatalf("Decide = %s %q (%v); want ran", out.Decision, out.Reason, err)
		}
		if c.leak == "" {
			if out.Result.Text != c.out {
				t.Errorf("ordinary output = %q; want it unchanged %q", out.Result.Text, c.out)
			}
			continue
		}
		if strings.Contains(out.Result.Text, c.leak) || !strings.Contains(out.Result.Text, "[REDACTED") {
			t.Errorf("output %q reached the model as %q; want the value redacted", c.out, out.Result.Text)
		}
	}
}
