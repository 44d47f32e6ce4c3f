// Package tool is the contract every tool follows, built-in or adapted.
//
// A tool author writes a typed params struct and a type implementing Typed:
// Spec describes it, Prepare turns decoded params into an immutable Plan
// with no side effects, and Run executes only that Plan. Adapt erases the
// params type: it generates the JSON schema from the struct and performs
// the arbiter's strict decoding (duplicate keys, case-folded keys, unknown
// fields, wrong types and oversized values are rejected).
//
// Two error channels: a Result with IsError is for the model to read and act
// on; a Go error aborts the turn. Prepare has two more: a *Refusal is a hard
// limit (the arbiter denies the proposal with its rule and reason) and an
// *ArgError is a mistake the model can fix (an error result).
package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/homard/homard/internal/policy"
)

// Spec describes a tool to the model and to policy.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"input_schema"`
	Action      policy.Action   `json:"action"`
	// Risk is the tool's usual risk; a Plan may raise it (a destructive
	// command is critical even if the tool is usually medium).
	Risk     policy.Risk `json:"-"`
	ReadOnly bool        `json:"read_only"`
	// NoArtifact: the arbiter never turns this tool's result into an
	// artifact, because the tool already returns it in pages the model
	// asks for, each below the arbiter's result cap (read_artifact).
	NoArtifact bool `json:"-"`
	// PublicResult says the tool's results can never hold the owner's
	// private data: they come only from the clock or the public web. A
	// tool without it (the zero value, so every adapter and every future
	// tool) marks its session private when it runs, and an outbound
	// request from a private session asks the owner in autopilot. Set it
	// only when no argument can make the tool read something private;
	// a Plan can still say otherwise for one call (PlanSpec.PrivateResult).
	PublicResult bool `json:"-"`
}

// Result is what a run returns to the model.
type Result struct {
	Text    string `json:"text"`
	IsError bool   `json:"is_error,omitempty"`
	// Untrusted marks content from outside the owner's control (web pages,
	// files written by others, command output). The agent wraps it in
	// nonce markers; it is data, never instructions.
	Untrusted bool `json:"untrusted,omitempty"`
	// Effects lists what the call changed, one line per path, for the
	// audit record (run_command's applied or held change set). It is not
	// shown to the model.
	Effects []string `json:"-"`
	// Whole, when set, is the whole of which Text is a capped part (a
	// page snapshot cut to its budget): the arbiter keeps it, redacted,
	// as an artifact the model can page through with read_artifact, and
	// names it in a note after Text.
	Whole string `json:"-"`
	// File, when set, is a binary result the model does not read (a
	// screenshot, a download): the arbiter keeps it as an artifact the
	// owner sees (the web UI, homard artifact) and tells the model its
	// id, type and size. It is not redacted (a picture cannot be), so a
	// tool returns a File only of what the owner may see anyway.
	File *File `json:"-"`
}

// File is a binary tool result kept as an artifact.
type File struct {
	Name string // a file name to offer when it is saved ("screenshot.png")
	MIME string // its media type ("image/png")
	Data []byte
}

// Errorf builds an error Result for the model.
func Errorf(format string, args ...any) Result {
	return Result{Text: fmt.Sprintf(format, args...), IsError: true}
}

// Typed is what a tool author implements for a params struct P.
type Typed[P any] interface {
	Spec() Spec // Schema is filled in by Adapt
	Prepare(ctx context.Context, p P) (Plan, error)
	Run(ctx context.Context, plan Plan) (Result, error)
}

// Tool is the erased form the registry and the arbiter use.
type Tool interface {
	Spec() Spec
	// Decode strictly decodes raw arguments into the tool's params.
	Decode(raw []byte) (any, error)
	// Prepare builds the Plan from params returned by Decode.
	Prepare(ctx context.Context, params any) (Plan, error)
	Run(ctx context.Context, plan Plan) (Result, error)
}

// Adapt erases a typed tool. It panics if P cannot be described by a JSON
// schema, which is a programming error found by the registry test.
func Adapt[P any](t Typed[P]) Tool {
	spec := t.Spec()
	schema, err := SchemaFor[P]()
	if err != nil {
		panic(fmt.Sprintf("tool %s: schema: %v", spec.Name, err))
	}
	spec.Schema = schema
	return &adapted[P]{t: t, spec: spec}
}

type adapted[P any] struct {
	t    Typed[P]
	spec Spec
}

func (a *adapted[P]) Spec() Spec { return a.spec }

func (a *adapted[P]) Decode(raw []byte) (any, error) {
	var p P
	if err := DecodeStrict(raw, &p, DefaultLimits); err != nil {
		return nil, err
	}
	return p, nil
}

func (a *adapted[P]) Prepare(ctx context.Context, params any) (Plan, error) {
	p, ok := params.(P)
	if !ok {
		return Plan{}, fmt.Errorf("tool %s: prepare: params of type %T, want %T", a.spec.Name, params, p)
	}
	plan, err := a.t.Prepare(ctx, p)
	if err != nil {
		return Plan{}, err
	}
	if plan.Tool() != a.spec.Name {
		return Plan{}, fmt.Errorf("tool %s: prepare returned a plan for %q", a.spec.Name, plan.Tool())
	}
	return plan, nil
}

func (a *adapted[P]) Run(ctx context.Context, plan Plan) (Result, error) {
	if plan.Tool() != a.spec.Name {
		return Result{}, fmt.Errorf("tool %s: refusing to run a plan for %q", a.spec.Name, plan.Tool())
	}
	return a.t.Run(ctx, plan)
}

// Refusal is a hard-limit denial found while preparing a Plan: the request
// can never run in any mode. Rule is a stable id, one of the constants of
// internal/policy (policy.RuleLimitWorkspace).
type Refusal struct {
	Rule   string
	Reason string
}

func (r *Refusal) Error() string { return r.Reason }

// ArgError is an argument the model can fix, found while preparing (a
// malformed regular expression, an offset past the end): the arbiter
// returns it to the model as an error result, not a denial.
type ArgError struct {
	Reason string
}

func (e *ArgError) Error() string { return e.Reason }

// InvalidArgs returns an *ArgError.
func InvalidArgs(format string, args ...any) error {
	return &ArgError{Reason: fmt.Sprintf(format, args...)}
}

// Refuse returns a *Refusal.
func Refuse(rule, format string, args ...any) error {
	return &Refusal{Rule: rule, Reason: fmt.Sprintf(format, args...)}
}
