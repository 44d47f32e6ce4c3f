package tool

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/policy"
)

// echoTool is a minimal typed tool: its Plan body is the params, and Run
// reports the path it was planned with.
type echoTool struct {
	name     string
	planFor  string // when set, Prepare builds a Plan for this tool name instead
	prepared int
}

var _ Typed[readParams] = (*echoTool)(nil)

func (e *echoTool) Spec() Spec {
	return Spec{Name: e.name, Description: "echo " + e.name, Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true}
}

func (e *echoTool) Prepare(_ context.Context, p readParams) (Plan, error) {
	e.prepared++
	if strings.HasPrefix(p.Path, "/") {
		return Plan{}, Refuse("limit.workspace", "path %s is outside the workspace", p.Path)
	}
	name := e.name
	if e.planFor != "" {
		name = e.planFor
	}
	return NewPlan(PlanSpec{Tool: name, Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true,
		Display: "read " + p.Path, Targets: []string{p.Path}, Body: p})
}

func (e *echoTool) Run(_ context.Context, plan Plan) (Result, error) {
	var p readParams
	if err := plan.Decode(&p); err != nil {
		return Result{}, err
	}
	return Result{Text: p.Path}, nil
}

func echo(name string) Tool { return Adapt[readParams](&echoTool{name: name}) }

func TestNewRegistryRejectsDuplicates(t *testing.T) {
	_, err := NewRegistry(echo("read_file"), echo("list"), echo("read_file"))
	if err == nil || !strings.Contains(err.Error(), `tool "read_file" registered twice`) {
		t.Errorf("NewRegistry with a duplicate = %v; want a duplicate error", err)
	}
}

func TestNewRegistryNames(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"read_file", true},
		{"a", true},
		{"x9", true},
		{"_", true},
		{strings.Repeat("a", 64), true},
		{"", false},
		{strings.Repeat("a", 65), false},
		{"Read_file", false},
		{"read-file", false},
		{"read file", false},
		{"read.file", false},
		{"read_file\n", false},
		{"réad", false},
		{"mcp:fs/read", false},
	}
	for _, tt := range tests {
		_, err := NewRegistry(echo(tt.name))
		if (err == nil) != tt.ok {
			t.Errorf("NewRegistry(tool %q) error = %v; want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "invalid tool name") {
			t.Errorf("NewRegistry(tool %q) error = %q; want it to say the name is invalid", tt.name, err)
		}
	}
}

func TestRegistrySpecsSortedAndStable(t *testing.T) {
	r, err := NewRegistry(echo("write_file"), echo("list_dir"), echo("read_file"), echo("fetch"))
	if err != nil {
		t.Fatal(err)
	}
	specs := r.Specs()
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
		if len(s.Schema) == 0 {
			t.Errorf("%s: Spec.Schema is empty; Adapt must fill it", s.Name)
		}
	}
	if want := []string{"fetch", "list_dir", "read_file", "write_file"}; !slices.Equal(names, want) {
		t.Errorf("Specs() names = %v; want %v", names, want)
	}
	// Registration order does not matter, and repeated calls are equal
	// byte for byte (the model's tool list must not change between turns).
	r2, err := NewRegistry(echo("read_file"), echo("fetch"), echo("write_file"), echo("list_dir"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(specs)
	b, _ := json.Marshal(r.Specs())
	c, _ := json.Marshal(r2.Specs())
	if string(a) != string(b) || string(a) != string(c) {
		t.Errorf("Specs() is not stable:\n%s\n%s\n%s", a, b, c)
	}
	// Changing the returned slice does not change the registry.
	specs[0].Name = "changed"
	if r.Specs()[0].Name != "fetch" {
		t.Error("Specs() returned the registry's own slice")
	}
}

func TestRegistryLookup(t *testing.T) {
	r, err := NewRegistry(echo("read_file"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Lookup("read_file"); !ok {
		t.Error("Lookup(read_file) = false")
	}
	for _, n := range []string{"Read_file", "read_file ", "", "read"} {
		if _, ok := r.Lookup(n); ok {
			t.Errorf("Lookup(%q) = true; want an exact match only", n)
		}
	}
	empty, err := NewRegistry()
	if err != nil || len(empty.Specs()) != 0 {
		t.Errorf("NewRegistry() = %v, %v; want an empty registry", empty.Specs(), err)
	}
}

func TestAdaptedToolPipeline(t *testing.T) {
	ctx := context.Background()
	tl := echo("read_file")
	params, err := tl.Decode([]byte(`{"path":"notes/a.md"}`))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := tl.Prepare(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.Run(ctx, plan)
	if err != nil || res.Text != "notes/a.md" || res.IsError {
		t.Errorf("Run = %+v, %v; want the planned path", res, err)
	}
	// Strict decoding is applied.
	if _, err := tl.Decode([]byte(`{"path":"a","PATH":"/etc/passwd"}`)); !errors.Is(err, ErrArguments) {
		t.Errorf("Decode of case-folded duplicate = %v; want ErrArguments", err)
	}
	// Params of the wrong type are a programming error.
	if _, err := tl.Prepare(ctx, struct{ Path string }{"a"}); err == nil {
		t.Error("Prepare with foreign params succeeded")
	}
	// A Refusal passes through unchanged, for the arbiter to read.
	_, err = tl.Prepare(ctx, readParams{Path: "/etc/passwd"})
	var ref *Refusal
	if !errors.As(err, &ref) || ref.Rule != "limit.workspace" || !strings.Contains(ref.Error(), "/etc/passwd") {
		t.Errorf("Prepare(/etc/passwd) = %v; want a Refusal with rule limit.workspace", err)
	}
	// A Plan for another tool is refused both ways.
	other := echo("write_file")
	foreign, err := other.Prepare(ctx, readParams{Path: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tl.Run(ctx, foreign); err == nil || !strings.Contains(err.Error(), "refusing to run a plan") {
		t.Errorf("Run of a foreign plan = %v; want a refusal", err)
	}
	liar := Adapt[readParams](&echoTool{name: "read_file", planFor: "write_file"})
	if _, err := liar.Prepare(ctx, readParams{Path: "a"}); err == nil || !strings.Contains(err.Error(), `returned a plan for "write_file"`) {
		t.Errorf("Prepare of a plan for another tool = %v; want an error", err)
	}
}

func TestAdaptPanicsOnUnschemableParams(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Adapt with a func-typed param did not panic")
		}
	}()
	Adapt[struct {
		F func() `json:"f"`
	}](&funcTool{})
}

type funcTool struct{}

func (funcTool) Spec() Spec { return Spec{Name: "f"} }
func (funcTool) Prepare(context.Context, struct {
	F func() `json:"f"`
}) (Plan, error) {
	return Plan{}, nil
}
func (funcTool) Run(context.Context, Plan) (Result, error) { return Result{}, nil }

func TestErrorfResult(t *testing.T) {
	got := Errorf("path %s is outside the workspace", "/etc")
	want := Result{Text: "path /etc is outside the workspace", IsError: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Errorf = %+v; want %+v", got, want)
	}
}
