package app

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/mcp/mcptest"
	"github.com/homard/homard/internal/policy"
)

// Schemas of the fake server's argument-echoing tools (mcptest: a tool
// named args… answers the arguments it received).
const (
	argsSchema = `{"type":"object","properties":{"text":{"type":"string"},"count":{"type":"integer"}},"required":["text"]}`
	// additionalProperties open: homard still sends only "text".
	argsOpenSchema = `{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":true}`
	// No properties, additionalProperties unspecified: only {}.
	argsNoneSchema = `{"type":"object"}`
)

// argsSpec is the fake server's default tools plus args, argsopen and
// argsnone.
func argsSpec() mcptest.Spec {
	spec := mcptest.Default()
	spec.Tools = append(spec.Tools,
		mcptest.Tool{Name: "args", Description: "Take a text and a count.", InputSchema: json.RawMessage(argsSchema)},
		mcptest.Tool{Name: "argsopen", Description: "Take a text.", InputSchema: json.RawMessage(argsOpenSchema)},
		mcptest.Tool{Name: "argsnone", Description: "Take nothing.", InputSchema: json.RawMessage(argsNoneSchema)})
	return spec
}

// newArgsHome is a home in mode whose trusted fake server has argsSpec's
// tools, opened.
func newArgsHome(t *testing.T, mode string) (mcpHome, *Runtime) {
	t.Helper()
	h := newMCPHome(t, mode, "")
	writeSpec(t, h.spec, argsSpec())
	h.trust(t, h.open(t))
	return h, h.open(t)
}

// received decodes what an args… tool answered: the arguments as the
// server received them.
func received(t *testing.T, out arbiter.Outcome) map[string]any {
	t.Helper()
	if out.Result == nil {
		t.Fatalf("no result: %s (%s: %s)", out.Decision, out.Rule, out.Reason)
	}
	raw, ok := strings.CutPrefix(out.Result.Text, "args: ")
	if !ok {
		t.Fatalf("result %q; want the server's \"args: …\"", out.Result.Text)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("the server received %q, not a JSON object: %v", raw, err)
	}
	return got
}

// TestMCPArgumentsChecked: homard checks a call's arguments against the
// pinned schema before planning it. A name the schema does not declare is
// refused whatever additionalProperties says (open, or not said), and a
// wrong type or a missing required property is refused, each as an
// argument error the model can act on (naming the property and what was
// wanted), not a failed turn. The twins, with only declared and valid
// arguments, run, and the server receives exactly those arguments.
func TestMCPArgumentsChecked(t *testing.T) {
	_, r := newArgsHome(t, "yolo")
	for _, c := range []struct {
		name, tool, args string
		want             string // a substring of the refusal; "" runs
	}{
		{"undeclared", "args", `{"text":"hi","cc":"all@example.com"}`, `argument "cc" is not declared in the tool's input schema`},
		{"declared only", "args", `{"text":"hi","count":2}`, ""},
		{"undeclared, additionalProperties true", "argsopen", `{"text":"hi","cc":"x"}`, `argument "cc" is not declared`},
		{"declared only, additionalProperties true", "argsopen", `{"text":"hi"}`, ""},
		{"undeclared, no properties", "argsnone", `{"cc":"x"}`, `it takes no arguments`},
		{"nothing, no properties", "argsnone", `{}`, ""},
		{"wrong type", "args", `{"text":3}`, `/properties/text: type: 3 has type "integer", want "string"`},
		{"right type", "args", `{"text":"3"}`, ""},
		{"not an integer", "args", `{"text":"hi","count":1.5}`, `/properties/count`},
		{"missing required", "args", `{"count":1}`, `required: missing properties: ["text"]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := mcpCall(t, r, "", "mcp__fake__"+c.tool, c.args)
			if c.want != "" {
				if out.Decision != arbiter.Error || out.Rule != policy.RuleArgsInvalid || !strings.Contains(out.Reason, c.want) || out.RunID != "" {
					t.Fatalf("%s with %s: %s (%s: %s), run %q; want an argument error with %q, before any run", c.tool, c.args, out.Decision, out.Rule, out.Reason, out.RunID, c.want)
				}
				return
			}
			if out.Decision != arbiter.Ran {
				t.Fatalf("%s with %s: %s (%s: %s); want it to run", c.tool, c.args, out.Decision, out.Rule, out.Reason)
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(c.args), &want); err != nil {
				t.Fatal(err)
			}
			if got := received(t, out); !reflect.DeepEqual(got, want) {
				t.Errorf("the server received %v; want exactly %v", got, want)
			}
		})
	}
}

// TestMCPCardShowsArguments: the card of an MCP call shows its arguments,
// a secret-looking value redacted, hidden characters escaped and a long
// value cut, while the Plan the approval binds holds the exact arguments:
// approving it runs those (the server receives them as planned) and a
// call with other arguments needs its own approval.
func TestMCPCardShowsArguments(t *testing.T) {
	_, r := newArgsHome(t, "smart")
	ctx := context.Background()
	const args = `{"count":7,"text":"password=hunter2-rosebud-77"}`
	out := mcpCall(t, r, "s1", "mcp__fake__args", args)
	if out.Decision != arbiter.Pending {
		t.Fatalf("args in smart mode: %s (%s: %s); want pending", out.Decision, out.Rule, out.Reason)
	}
	a, err := r.Owner.Approval(ctx, out.ApprovalID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"call args on MCP server fake with 2 arguments:", "\n  \"count\": 7", "\n  \"text\": \"password=[REDACTED"} {
		if !strings.Contains(a.Display, want) {
			t.Errorf("card display:\n%s\nwant it to show %q", a.Display, want)
		}
	}
	if strings.Contains(a.Display, "hunter2-rosebud-77") || strings.Contains(out.Plan, "hunter2-rosebud-77") {
		t.Errorf("card display:\n%s\nshows the password; want it redacted", a.Display)
	}
	var plan struct {
		Body struct {
			Server, Tool string
			Arguments    json.RawMessage
		}
	}
	if err := json.Unmarshal(a.Plan, &plan); err != nil || string(plan.Body.Arguments) != args || plan.Body.Tool != "args" || plan.Body.Server != "fake" {
		t.Fatalf("the approval's plan %s (%v); want it to hold exactly the arguments %s", a.Plan, err, args)
	}

	// Approved, the same arguments run, and the server gets them (the
	// result the model reads is redacted, so this call's text is plain);
	// other arguments need a card of their own.
	const plain = `{"count":7,"text":"hi"}`
	out = mcpCall(t, r, "s1", "mcp__fake__args", plain)
	if out.Decision != arbiter.Pending {
		t.Fatalf("args in smart mode: %s (%s: %s); want pending", out.Decision, out.Rule, out.Reason)
	}
	if _, err := r.Owner.Approve(ctx, out.ApprovalID, "once"); err != nil {
		t.Fatal(err)
	}
	if other := mcpCall(t, r, "s1", "mcp__fake__args", `{"count":8,"text":"hi"}`); other.Decision != arbiter.Pending || other.ApprovalID == out.ApprovalID {
		t.Errorf("other arguments after approving %s: %s (approval %q); want a card of their own", out.ApprovalID, other.Decision, other.ApprovalID)
	}
	ran := mcpCall(t, r, "s1", "mcp__fake__args", plain)
	if ran.Decision != arbiter.Ran {
		t.Fatalf("the approved call: %s (%s: %s); want it to run", ran.Decision, ran.Rule, ran.Reason)
	}
	if got, want := received(t, ran), map[string]any{"count": 7.0, "text": "hi"}; !reflect.DeepEqual(got, want) {
		t.Errorf("the server received %v; want the approved %v", got, want)
	}

	// Hidden characters are escaped; a long value is cut with a marker.
	long := strings.Repeat("a", 5000)
	out = mcpCall(t, r, "s1", "mcp__fake__args", `{"text":"x\u202ey\u001bz`+long+`"}`)
	if out.Decision != arbiter.Pending {
		t.Fatalf("args with a long text: %s (%s: %s); want pending", out.Decision, out.Rule, out.Reason)
	}
	a, err = r.Owner.Approval(ctx, out.ApprovalID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(a.Display, "\u202e\x1b") || !strings.Contains(a.Display, `x\u202ey`) || !strings.Contains(a.Display, "more bytes]") || len(a.Display) > 600 {
		t.Errorf("card display of a text with hidden characters and %d letters (%d bytes):\n%s\nwant the characters escaped and the value cut with a marker", len(long), len(a.Display), a.Display)
	}
	if !strings.Contains(string(a.Plan), long) {
		t.Errorf("the approval's plan does not hold the whole text; want every argument in the plan")
	}
}

// TestMCPArgumentsCheckedAgainstPinnedSchema: a server that widens a
// tool's schema after it was trusted widens nothing: homard checks calls
// against the schema pinned at trust, not the one the server lists now.
// (A restart would find the listing changed and withdraw the tools,
// TestMCPRugPull; here the change happens while homard runs.) The twin,
// with the pinned schema's arguments, runs.
func TestMCPArgumentsCheckedAgainstPinnedSchema(t *testing.T) {
	h, r := newArgsHome(t, "yolo")
	spec := argsSpec()
	for i, tl := range spec.Tools {
		if tl.Name == "args" {
			spec.Tools[i].InputSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"count":{"type":"integer"},"extra":{"type":"string"}},"additionalProperties":true}`)
		}
	}
	writeSpec(t, h.spec, spec)
	// The server lists the wider schema now.
	rep, err := r.Extensions.InspectMCP(context.Background(), "fake")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != MCPChanged || !strings.Contains(mcpToolSchema(rep, "args"), "extra") {
		t.Fatalf("InspectMCP after the change: %s, args schema %s; want changed, with extra", rep.Status, mcpToolSchema(rep, "args"))
	}

	out := mcpCall(t, r, "", "mcp__fake__args", `{"text":"hi","extra":"x"}`)
	if out.Decision != arbiter.Error || out.Rule != policy.RuleArgsInvalid || !strings.Contains(out.Reason, `argument "extra" is not declared`) {
		t.Errorf("an argument only the changed schema declares: %s (%s: %s); want it refused by the pinned schema", out.Decision, out.Rule, out.Reason)
	}
	out = mcpCall(t, r, "", "mcp__fake__args", `{"text":"hi"}`)
	if out.Decision != arbiter.Ran {
		t.Errorf("the pinned schema's arguments: %s (%s: %s); want it to run", out.Decision, out.Rule, out.Reason)
	}
}

// mcpToolSchema returns the input schema rep lists for tool name.
func mcpToolSchema(rep MCPServerReport, name string) string {
	for _, tl := range rep.Tools {
		if tl.Name == name {
			return string(tl.InputSchema)
		}
	}
	return ""
}
