// Package task holds what the owner approves for a scheduled task and the
// check made before each of its runs. A task's Body is canonical JSON
// (RFC 8785, through tool.Canonical); Seal is its HMAC-SHA-256 under a
// key derived from the vault key (secrets.Vault.DerivedKey("tasks")),
// which is never stored in the database; Check refuses a run whose stored
// body is not byte for byte the sealed one, whose seal does not hold, or
// whose approval has expired. The ledger's rows live in package store.
package task

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/split"
	"github.com/homard/homard/internal/tool"
)

// DefaultExpiry is how long an approval lasts unless the owner says
// otherwise (--expires).
const DefaultExpiry = 10 * 24 * time.Hour

// Schedule kinds.
const (
	KindAt    = "at"    // once, at Expr (RFC 3339)
	KindEvery = "every" // every Expr (a Go duration), counted in UTC
	KindCron  = "cron"  // a 5-field cron expression in TZ
)

// Catch-up policies for slots missed while homard was down.
const (
	CatchUpSkip = "skip" // run none of them (the default)
	CatchUpOnce = "once" // run the latest one, within the window
)

// Bounds of a body, checked by Validate.
const (
	MaxPrompt  = 16 << 10 // bytes
	MaxTools   = 64
	maxBudget  = 1 << 40 // keeps every number exact in canonical JSON
	maxRuntime = 24 * time.Hour
)

// Schedule is when a task runs. Expr is kept as the owner typed it;
// package schedule interprets it.
type Schedule struct {
	Kind string // at, every or cron
	Expr string
	TZ   string // IANA zone name; empty for every (UTC)
}

// Budgets bound one run. Zero means the configured default.
type Budgets struct {
	MaxCalls   int64 // tool calls
	MaxTurns   int64 // model calls
	MaxTokens  int64 // model tokens, input and output
	MaxRuntime time.Duration
}

// Body is what the owner approves: every field is sealed, so none can
// change without a new approval.
type Body struct {
	ID      string
	Owner   string
	Name    string
	Prompt  string
	Sched   Schedule
	CatchUp string // skip or once
	// Tools is the tool profile: the only tools a run may propose. It is
	// a set: Canonical sorts it and drops repeats.
	Tools   []string
	Mode    policy.Mode
	Budgets Budgets
	Deliver string    // where results go: "web", "telegram", …
	Expires time.Time // the approval's end
	// Ceiling is the blast ceiling: the highest class of effect a run may
	// reach (policy.Ceiling); a call above it is refused, never asked.
	// The zero Ceiling is none — no limit beyond the other rules — which
	// is what a body sealed before ceilings existed decodes to: its wire
	// form has no "ceiling" key, so its bytes, hash and seal are as they
	// were. `homard task add` always sets one.
	Ceiling policy.Ceiling
	// Split, when set, makes every run a planner/worker split
	// (internal/split) of exactly this plan, written by the planner when
	// the task was added: its workers run under their items' limits and
	// the planner writes the answer; no agent turn runs the prompt. Tools
	// is then empty (each worker's tools are its item's kind's). Nil is a
	// normal task, and what a body sealed before split tasks existed
	// decodes to: its wire form has no "split" key, so its bytes, hash
	// and seal are as they were.
	Split *split.Plan
	// Reminder makes the task a reminder: each run delivers Prompt as
	// it is, with no model call and no tools, so it costs nothing and
	// arrives when the provider is down. Tools stay empty and Split nil.
	// False is what a body sealed before reminders existed decodes to:
	// its wire form has no "reminder" key, so its bytes, hash and seal
	// are as they were.
	Reminder bool
}

// MaxReminder is the longest reminder text, in bytes: a line to read,
// not a prompt.
const MaxReminder = 1 << 10

// wireVersion is the body format's version, sealed with the body, so a
// later format cannot be read as this one.
const wireVersion = 1

// wire is a Body's JSON form, one field per sealed value. Durations and
// times are strings (RFC 3339 in UTC, Go durations): a nanosecond count
// does not fit the doubles RFC 8785 numbers are.
type wire struct {
	V        int          `json:"v"`
	ID       string       `json:"id"`
	Owner    string       `json:"owner"`
	Name     string       `json:"name"`
	Prompt   string       `json:"prompt"`
	Schedule wireSchedule `json:"schedule"`
	CatchUp  string       `json:"catch_up"`
	Tools    []string     `json:"tools"`
	Mode     string       `json:"mode"`
	Budgets  wireBudgets  `json:"budgets"`
	Deliver  string       `json:"deliver"`
	Expires  string       `json:"expires"`
	// Ceiling is policy.Ceiling.String(). omitempty keeps a body without
	// one byte for byte what it was before the field existed, so the
	// approvals of tasks sealed then still hold (no new wire version).
	Ceiling string `json:"ceiling,omitempty"`
	// Split is the sealed plan; omitempty (nil) keeps a plan-less body
	// byte for byte what it was before the field existed.
	Split *split.Plan `json:"split,omitempty"`
	// Reminder: omitempty (false) keeps a task's body byte for byte what
	// it was before reminders existed.
	Reminder bool `json:"reminder,omitempty"`
}

type wireSchedule struct {
	Kind string `json:"kind"`
	Expr string `json:"expr"`
	TZ   string `json:"tz"`
}

type wireBudgets struct {
	MaxCalls   int64  `json:"max_calls"`
	MaxTurns   int64  `json:"max_turns"`
	MaxTokens  int64  `json:"max_tokens"`
	MaxRuntime string `json:"max_runtime"`
}

// profile returns tools sorted, without repeats, never nil.
func profile(tools []string) []string {
	out := slices.Clone(tools)
	slices.Sort(out)
	out = slices.Compact(out)
	if out == nil {
		out = []string{}
	}
	return out
}

func (b Body) wire() wire {
	return wire{
		V: wireVersion, ID: b.ID, Owner: b.Owner, Name: b.Name, Prompt: b.Prompt,
		Schedule: wireSchedule{Kind: b.Sched.Kind, Expr: b.Sched.Expr, TZ: b.Sched.TZ},
		CatchUp:  b.CatchUp,
		Tools:    profile(b.Tools),
		Mode:     string(b.Mode),
		Budgets: wireBudgets{
			MaxCalls: b.Budgets.MaxCalls, MaxTurns: b.Budgets.MaxTurns, MaxTokens: b.Budgets.MaxTokens,
			MaxRuntime: b.Budgets.MaxRuntime.String(),
		},
		Deliver:  b.Deliver,
		Expires:  b.Expires.UTC().Format(time.RFC3339Nano),
		Ceiling:  b.Ceiling.String(),
		Split:    b.Split,
		Reminder: b.Reminder,
	}
}

// Canonical returns the body's RFC 8785 JSON: the bytes that are stored,
// shown to the owner and sealed. Two bodies give the same bytes exactly
// when every field is equal (the tool profile compared as a set, the
// expiry as an instant).
func (b Body) Canonical() ([]byte, error) {
	c, err := tool.Canonical(b.wire())
	if err != nil {
		return nil, fmt.Errorf("canonical task body: %w", err)
	}
	return c, nil
}

// decodeLimits bound a stored body: a prompt of MaxPrompt bytes, escaped,
// and a plan (its items' tasks escaped; nested six deep: body, plan,
// items, item, returns, allow).
var decodeLimits = tool.Limits{MaxBytes: 8*MaxPrompt + 6*split.MaxItems*split.MaxTaskLen + 16<<10, MaxString: 6 * MaxPrompt, MaxItems: MaxTools + 16, MaxDepth: 6}

// Decode reads a stored body strictly: no unknown, missing or repeated
// field, this format's version only. It does not Validate.
func Decode(raw []byte) (Body, error) {
	var w wire
	if err := tool.DecodeStrict(raw, &w, decodeLimits); err != nil {
		return Body{}, fmt.Errorf("decode task body: %w", err)
	}
	if w.V != wireVersion {
		return Body{}, fmt.Errorf("decode task body: format version %d; this homard reads %d", w.V, wireVersion)
	}
	rt, err := time.ParseDuration(w.Budgets.MaxRuntime)
	if err != nil {
		return Body{}, fmt.Errorf("decode task body: max_runtime: %w", err)
	}
	exp, err := time.Parse(time.RFC3339Nano, w.Expires)
	if err != nil {
		return Body{}, fmt.Errorf("decode task body: expires: %w", err)
	}
	if y := exp.UTC().Year(); y < 1 || y > 9999 {
		// In UTC it would print as a year RFC 3339 cannot hold, and the
		// canonical form would not decode again (found by
		// FuzzDecodeCanonical: "0000-01-01T0:00:00+01:00").
		return Body{}, fmt.Errorf("decode task body: expires %q: the year in UTC must be 1 to 9999", w.Expires)
	}
	ceiling, err := policy.ParseCeiling(w.Ceiling)
	if err != nil {
		return Body{}, fmt.Errorf("decode task body: %w", err)
	}
	return Body{
		ID: w.ID, Owner: w.Owner, Name: w.Name, Prompt: w.Prompt,
		Sched:   Schedule{Kind: w.Schedule.Kind, Expr: w.Schedule.Expr, TZ: w.Schedule.TZ},
		CatchUp: w.CatchUp, Tools: w.Tools, Mode: policy.Mode(w.Mode),
		Budgets: Budgets{MaxCalls: w.Budgets.MaxCalls, MaxTurns: w.Budgets.MaxTurns, MaxTokens: w.Budgets.MaxTokens, MaxRuntime: rt},
		Deliver: w.Deliver, Expires: exp.UTC(), Ceiling: ceiling, Split: w.Split, Reminder: w.Reminder,
	}, nil
}

// Validate checks the fields this package can judge: set, known values,
// bounds. It does not parse the schedule's expression (package schedule
// does) nor check that the tools exist (the registry does).
func (b Body) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
	}
	switch {
	case b.ID == "" || b.Owner == "" || b.Name == "":
		return bad("a task needs an id, an owner and a name")
	case b.Prompt == "":
		return bad("the prompt is empty; say what the task should do")
	case len(b.Prompt) > MaxPrompt:
		return bad("the prompt is %d bytes; the limit is %d", len(b.Prompt), MaxPrompt)
	case b.Sched.Kind != KindAt && b.Sched.Kind != KindEvery && b.Sched.Kind != KindCron:
		return bad("schedule kind %q: want at, every or cron", b.Sched.Kind)
	case b.Sched.Expr == "":
		return bad("the schedule has no expression")
	case b.CatchUp != CatchUpSkip && b.CatchUp != CatchUpOnce:
		return bad("catch-up %q: want skip or once", b.CatchUp)
	case len(b.Tools) > MaxTools:
		return bad("%d tools; the limit is %d", len(b.Tools), MaxTools)
	case slices.Contains(b.Tools, ""):
		return bad("an empty tool name")
	case b.Deliver == "":
		return bad("no delivery target")
	case b.Expires.IsZero():
		return bad("no expiry")
	}
	if _, err := policy.ParseMode(string(b.Mode)); err != nil {
		return bad("%v", err)
	}
	if c, err := policy.ParseCeiling(b.Ceiling.String()); err != nil || c.String() != b.Ceiling.String() {
		return bad("ceiling %q: want read, write, network, network:HOSTS or send", b.Ceiling.String())
	}
	if b.Reminder {
		switch {
		case len(b.Prompt) > MaxReminder:
			return bad("the reminder is %d bytes; the limit is %d", len(b.Prompt), MaxReminder)
		case len(b.Tools) > 0 || b.Split != nil:
			return bad("a reminder has no tools and no plan: it is delivered as it is")
		}
	}
	if b.Split != nil {
		if err := validPlan(*b.Split); err != nil {
			return bad("%v", err)
		}
		if len(b.Tools) > 0 {
			return bad("a split task has no tool profile: each worker's tools are its item's kind's")
		}
	}
	for name, v := range map[string]int64{"max calls": b.Budgets.MaxCalls, "max turns": b.Budgets.MaxTurns, "max tokens": b.Budgets.MaxTokens} {
		if v < 0 || v > maxBudget {
			return bad("%s %d: want 0 (the default) to %d", name, v, int64(maxBudget))
		}
	}
	if b.Budgets.MaxRuntime < 0 || b.Budgets.MaxRuntime > maxRuntime {
		return bad("max runtime %v: want 0 (the default) to %v", b.Budgets.MaxRuntime, maxRuntime)
	}
	return nil
}

// validPlan checks a sealed plan: valid (split.Plan.Validate), with items
// rather than a question, and already in its normal form — the form
// split.Parse gives, so the bytes sealed are the plan that runs.
func validPlan(p split.Plan) error {
	want := p.Hash()
	p.Items = slices.Clone(p.Items) // Validate normalises in place
	if err := p.Validate(); err != nil {
		return err
	}
	if p.Question != "" {
		return errors.New("the plan asks a question; a split task runs a plan of items")
	}
	if p.Hash() != want {
		return errors.New("the plan is not in its normal form (hosts lower case, sorted, unique)")
	}
	return nil
}

// NewID returns a new task id: "task_" and 16 random hex digits.
// ValidID reports whether id has NewID's form: "task_" and 16 lowercase
// hex digits.
func ValidID(id string) bool {
	h, ok := strings.CutPrefix(id, "task_")
	if !ok || len(h) != 16 {
		return false
	}
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return "task_" + hex.EncodeToString(b[:])
}
