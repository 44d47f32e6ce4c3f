// Package replay decides recorded tool calls again under a proposed
// policy (`homard policy replay`, issue 25): an owner about to change
// their mode or operator rules sees which calls of their own history
// would now run unasked, ask, or be refused.
//
// Each call is decided twice, under the configuration in force and under
// the proposed one, from its stored Plan (the canonical envelope carries
// the tool, action, risk, read-only flag, class, command and targets:
// everything policy.Decide reads of a call) and what is known of its
// session (the caller's trust; whether it had read private data before
// the call). What is compared is the policy's verdict alone: nothing is
// executed, no grant or approval is consulted (both sides alike), and the
// hard limits a tool checks while planning (paths, sensitive files,
// egress) are not re-run — a changed `files` or `egress` section is not
// replayed. Calls whose verdict is the same on both sides are counted,
// not listed. Replay itself is pure; Load reads the history from the
// store and PolicyOf a configuration.
package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
)

// Call is one recorded tool call.
type Call struct {
	Run     string    // the tool run's id
	At      time.Time // when it was proposed
	Session string
	Trust   policy.Trust
	// Private says the session had read the owner's private data before
	// the call (its mark was set earlier).
	Private bool
	// Plan is the stored canonical Plan (redacted).
	Plan []byte
	// Display is the stored plan as people read it.
	Display string
	// Outcome and Rule are what happened then: ran, pending, denied or
	// error, by which rule.
	Outcome, Rule string
}

// Policy is what of a configuration decides a call.
type Policy struct {
	Mode  policy.Mode
	Rules []policy.Rule
	Guest []string
	// UnknownCommands is commands.unknown.
	UnknownCommands string
	// PrivateEgress is permissions.private_egress: "allow" turns the
	// session mark off.
	PrivateEgress string
}

// Change is a call whose verdict differs between the two policies.
type Change struct {
	Call
	Tool          string
	Before, After policy.Decision
}

// Result is what Replay found.
type Result struct {
	Changes []Change
	// Replayed counts the calls decided under both policies; Skipped
	// those whose stored Plan could not be read (they are not guessed).
	Replayed, Skipped int
}

// envelope is what a stored Plan says about the call (tool.NewPlan's
// canonical form; the body is the tool's own and not needed here).
type envelope struct {
	Tool     string          `json:"tool"`
	Action   policy.Action   `json:"action"`
	Risk     string          `json:"risk"`
	ReadOnly bool            `json:"read_only"`
	Class    string          `json:"class"`
	Command  []string        `json:"command"`
	Targets  []string        `json:"targets"`
	Body     json.RawMessage `json:"body"`
}

// Replay decides each call under before and after, in order.
func Replay(calls []Call, before, after Policy) Result {
	var out Result
	for _, c := range calls {
		in, err := input(c)
		if err != nil {
			out.Skipped++
			continue
		}
		out.Replayed++
		b, a := decide(in, before), decide(in, after)
		if b.Verdict != a.Verdict {
			out.Changes = append(out.Changes, Change{Call: c, Tool: in.Tool, Before: b, After: a})
		}
	}
	return out
}

func decide(in policy.Input, p Policy) policy.Decision {
	in.Mode, in.Rules, in.Guest, in.UnknownCommands = p.Mode, p.Rules, p.Guest, p.UnknownCommands
	if p.PrivateEgress == "allow" {
		in.Private = false
	}
	return policy.Decide(in)
}

// input reads what policy needs from c's stored Plan, strictly: a Plan
// that does not read as tool.NewPlan writes one is skipped, not guessed.
func input(c Call) (policy.Input, error) {
	dec := json.NewDecoder(bytes.NewReader(c.Plan))
	dec.DisallowUnknownFields()
	var e envelope
	if err := dec.Decode(&e); err != nil {
		return policy.Input{}, fmt.Errorf("run %s: plan: %w", c.Run, err)
	}
	if e.Tool == "" || e.Action == "" {
		return policy.Input{}, fmt.Errorf("run %s: plan names no tool or action", c.Run)
	}
	risk, err := policy.ParseRisk(e.Risk)
	if err != nil {
		return policy.Input{}, fmt.Errorf("run %s: %w", c.Run, err)
	}
	class, ok := classes[e.Class]
	if !ok {
		return policy.Input{}, fmt.Errorf("run %s: unknown class %q", c.Run, e.Class)
	}
	return policy.Input{Tool: e.Tool, Action: e.Action, Risk: risk, ReadOnly: e.ReadOnly, Class: class,
		Command: e.Command, Targets: e.Targets, Trust: c.Trust, Private: c.Private}, nil
}

// classes reads a Plan's class ("" when it has none).
var classes = map[string]policy.Class{"": policy.ClassNone, "read": policy.ClassRead, "write": policy.ClassWrite, "runs code": policy.ClassRunsCode}

// PolicyOf is what of cfg decides a call.
func PolicyOf(cfg *config.Config) (Policy, error) {
	mode, err := policy.ParseMode(cfg.Permissions.Mode)
	if err != nil {
		return Policy{}, fmt.Errorf("permissions.mode: %w", err)
	}
	return Policy{Mode: mode, Rules: Rules(cfg), Guest: cfg.Permissions.GuestTools,
		UnknownCommands: cfg.Commands.Unknown, PrivateEgress: cfg.Permissions.PrivateEgress}, nil
}

// Rules are cfg's operator rules as policy reads them.
func Rules(cfg *config.Config) []policy.Rule {
	var rules []policy.Rule
	for _, rc := range cfg.Rules {
		rules = append(rules, policy.Rule{ID: rc.ID, Tool: rc.Tool, Path: rc.Path, Effect: policy.Effect(rc.Effect), Command: rc.Command, Host: rc.Host})
	}
	return rules
}

// Load reads the tool calls recorded since, oldest first, with what is
// known of their sessions: owner is the configured owner (another
// owner's calls are a guest's or a stranger's, recorded under their
// trust), and a call is private when its session's mark was set before it.
func Load(ctx context.Context, st *store.Store, owner string, since time.Time) ([]Call, error) {
	runs, err := st.ToolRunsSince(ctx, since, 0)
	if err != nil {
		return nil, err
	}
	marks := map[string]time.Time{} // a session's private mark, read once
	calls := make([]Call, 0, len(runs))
	for _, run := range runs {
		mark, ok := marks[run.SessionID]
		if !ok {
			if s, err := st.Session(ctx, run.SessionID); err == nil {
				mark = s.PrivateSince
			}
			marks[run.SessionID] = mark
		}
		trust := policy.TrustOwner
		if run.Owner != owner {
			trust = policy.Trust(run.Owner)
		}
		calls = append(calls, Call{Run: run.ID, At: run.CreatedAt, Session: run.SessionID, Trust: trust,
			Private: !mark.IsZero() && mark.Before(run.CreatedAt), Plan: run.Plan, Display: run.Display,
			Outcome: run.Decision, Rule: run.Rule})
	}
	return calls, nil
}
