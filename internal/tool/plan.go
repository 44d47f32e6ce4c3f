package tool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gowebpki/jcs"

	"github.com/homard/homard/internal/policy"
)

// Plan is the immutable, exact description of what a tool will do. It is
// what the owner sees (Display), what an approval is bound to (Hash, over
// the RFC 8785 canonical form) and what Run executes (Decode of the same
// canonical bytes). Its fields are unexported so nothing can change a Plan
// between the decision and the run.
type Plan struct {
	tool      string
	action    policy.Action
	risk      policy.Risk
	readOnly  bool
	display   string
	targets   []string
	command   []string
	canonical []byte
	hash      [sha256.Size]byte
}

// PlanSpec is the input to NewPlan.
type PlanSpec struct {
	Tool     string
	Action   policy.Action
	Risk     policy.Risk
	ReadOnly bool
	// Display is the human text shown on an approval card. It is not
	// hashed: two Plans that do the same thing have the same hash.
	Display string
	// Targets are the root-relative slash paths the Plan touches, used by
	// operator rules and scoped grants. Order carries no meaning: they are
	// sorted and part of the hash.
	Targets []string
	// Command is a command Plan's full argv, the resolved absolute program
	// path first; operator command rules match it. Empty for other tools.
	Command []string
	// Body is the tool's exact plan data; Run reads it back with Decode.
	Body any
}

// NewPlan builds a Plan and its canonical hash.
func NewPlan(s PlanSpec) (Plan, error) {
	targets := slices.Clone(s.Targets)
	slices.Sort(targets)
	targets = slices.Compact(targets)
	canonical, err := Canonical(struct {
		Tool     string   `json:"tool"`
		Action   string   `json:"action"`
		Risk     string   `json:"risk"`
		ReadOnly bool     `json:"read_only"`
		Targets  []string `json:"targets"`
		Command  []string `json:"command,omitempty"`
		Body     any      `json:"body"`
	}{s.Tool, string(s.Action), s.Risk.String(), s.ReadOnly, nonNil(targets), s.Command, s.Body})
	if err != nil {
		return Plan{}, fmt.Errorf("plan for %s: %w", s.Tool, err)
	}
	return Plan{
		tool:      s.Tool,
		action:    s.Action,
		risk:      s.Risk,
		readOnly:  s.ReadOnly,
		display:   s.Display,
		targets:   targets,
		command:   slices.Clone(s.Command),
		canonical: canonical,
		hash:      sha256.Sum256(canonical),
	}, nil
}

// exactNumbers checks that RFC 8785 keeps the value of every number in raw:
// an integer must be written as the shortest form of its float64 (so
// 2^53+1, or 2^60, which RFC 8785 prints as 1152921504606847000, is
// refused), a fraction must be a finite float64, and -0 is refused.
//
// raw is json.Marshal output, so it is valid JSON: a byte scan that skips
// string literals finds every number without a tokenizer, which matters on
// the hot path (a write_file plan is mostly one long string).
func exactNumbers(raw []byte) error {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '"' {
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
			continue
		}
		if c != '-' && (c < '0' || c > '9') {
			continue
		}
		j := i
		for j < len(raw) && strings.IndexByte("+-.eE0123456789", raw[j]) >= 0 {
			j++
		}
		if err := exactNumber(string(raw[i:j])); err != nil {
			return err
		}
		i = j - 1
	}
	return nil
}

func exactNumber(n string) error {
	f, err := strconv.ParseFloat(n, 64)
	exact := err == nil && !(f == 0 && math.Signbit(f))
	if exact && !strings.ContainsAny(n, ".eE") {
		short, _ := json.Marshal(f) // finite, so no error
		exact = string(short) == n
	}
	if !exact {
		return fmt.Errorf("canonicalize: number %s has no exact RFC 8785 form; encode it as a string", n)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Canonical returns the RFC 8785 (JCS) form of v's JSON encoding. RFC 8785
// numbers are IEEE 754 doubles, so a number the canonical form would change
// (an integer beyond 2^53 such as a nanosecond timestamp, or -0) is an
// error: two different values would share one hash, and Decode would not
// give back what was prepared. Encode such a value as a string.
func Canonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if err := exactNumbers(raw); err != nil {
		return nil, err
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("canonicalize: %w", err)
	}
	return out, nil
}

func (p Plan) Tool() string          { return p.tool }
func (p Plan) Action() policy.Action { return p.action }
func (p Plan) Risk() policy.Risk     { return p.risk }
func (p Plan) ReadOnly() bool        { return p.readOnly }
func (p Plan) Display() string       { return p.display }

// Targets returns a copy of the sorted target paths.
func (p Plan) Targets() []string { return slices.Clone(p.targets) }

// Command returns a copy of a command Plan's argv (nil for other tools).
func (p Plan) Command() []string { return slices.Clone(p.command) }

// Canonical returns a copy of the canonical JSON that the hash covers.
func (p Plan) Canonical() []byte { return slices.Clone(p.canonical) }

// Hash is the hex SHA-256 of the canonical form.
func (p Plan) Hash() string { return hex.EncodeToString(p.hash[:]) }

// IsZero reports whether p was never built.
func (p Plan) IsZero() bool { return p.canonical == nil }

// Decode reads the Plan's body back into dst, so Run executes exactly the
// bytes that were hashed and approved.
func (p Plan) Decode(dst any) error {
	var env struct {
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(p.canonical, &env); err != nil {
		return fmt.Errorf("decode plan: %w", err)
	}
	if err := json.Unmarshal(env.Body, dst); err != nil {
		return fmt.Errorf("decode plan body: %w", err)
	}
	return nil
}
