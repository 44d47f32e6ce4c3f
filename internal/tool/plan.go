package tool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

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
	class     policy.Class
	template  *policy.Template
	private   bool
	newRecip  bool
	display   string
	preview   *lazyPreview
	targets   []string
	command   []string
	canonical []byte
	body      []byte // the body's bytes within canonical
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
	// Preview is what the card shows below Display: a write's diff, a
	// command's argv (see preview.go). Like Display it is not hashed; it
	// must be computed from the Body's values and the workspace, never
	// copied from text the model wrote. Empty means the Body, indented.
	// It is cut at MaxPreviewBytes.
	Preview string
	// PreviewFunc, when set instead, computes Preview the first time it
	// is asked for: a diff costs a read of the current file, which a call
	// that runs without a card never needs. It must not return different
	// text for a different caller; it runs at most once per Plan.
	PreviewFunc func() string
	// Targets are the root-relative slash paths the Plan touches, used by
	// operator rules and scoped grants. Order carries no meaning: they are
	// sorted and part of the hash.
	Targets []string
	// Class is a command Plan's class from the catalog (read, write, runs
	// code); zero for other tools. It is hashed when set.
	Class policy.Class
	// Template is a command Plan's argv as the catalog parsed it, with the
	// caller's fields (working folder, binary hash, stdin, timeout) filled
	// in: what a session or always approval of this Plan would grant. It
	// is not hashed: it must follow from the Body, which is.
	Template *policy.Template
	// Command is a command Plan's full argv, the resolved absolute program
	// path first; operator command rules match it. Empty for other tools.
	Command []string
	// PrivateResult says this one call reads the owner's private data
	// although its tool's Spec says PublicResult (an http_get that sends a
	// credential reads an account, not the public web). It is not hashed:
	// it must follow from the Body, which is.
	PrivateResult bool
	// NewRecipient says this call sends a message to someone the owner
	// has not confirmed yet (recipient trust): it asks in every mode. Not
	// hashed: it follows from the Body and the confirmed recipients.
	NewRecipient bool
	// Body is the tool's exact plan data; Run reads it back with Decode.
	Body any
}

// NewPlan builds a Plan and its canonical hash.
func NewPlan(s PlanSpec) (Plan, error) {
	targets := slices.Clone(s.Targets)
	slices.Sort(targets)
	targets = slices.Compact(targets)
	body, err := Canonical(s.Body)
	if err != nil {
		return Plan{}, fmt.Errorf("plan for %s: %w", s.Tool, err)
	}
	// The envelope's member names are fixed, so it is written directly in
	// RFC 8785 member order around the canonical body; TestPlanCanonicalForm
	// and FuzzPlanHash check it against the general canonicalizer.
	canonical := make([]byte, 0, len(body)+128)
	canonical = append(canonical, `{"action":`...)
	canonical = appendJCSText(canonical, string(s.Action))
	canonical = append(canonical, `,"body":`...)
	bodyAt := len(canonical)
	canonical = append(canonical, body...)
	if s.Class != policy.ClassNone {
		canonical = append(canonical, `,"class":`...)
		canonical = appendJCSText(canonical, s.Class.String())
	}
	if len(s.Command) > 0 {
		canonical = append(canonical, `,"command":`...)
		canonical = appendJCSStrings(canonical, s.Command)
	}
	canonical = append(canonical, `,"read_only":`...)
	canonical = strconv.AppendBool(canonical, s.ReadOnly)
	canonical = append(canonical, `,"risk":`...)
	canonical = appendJCSText(canonical, s.Risk.String())
	canonical = append(canonical, `,"targets":`...)
	canonical = appendJCSStrings(canonical, targets)
	canonical = append(canonical, `,"tool":`...)
	canonical = appendJCSText(canonical, s.Tool)
	canonical = append(canonical, '}')
	var tmpl *policy.Template
	if s.Template != nil {
		t := *s.Template
		t.Items = slices.Clone(t.Items)
		tmpl = &t
	}
	return Plan{
		tool:      s.Tool,
		class:     s.Class,
		template:  tmpl,
		action:    s.Action,
		risk:      s.Risk,
		readOnly:  s.ReadOnly,
		private:   s.PrivateResult,
		newRecip:  s.NewRecipient,
		display:   s.Display,
		preview:   newLazyPreview(s.Preview, s.PreviewFunc),
		targets:   targets,
		command:   slices.Clone(s.Command),
		canonical: canonical,
		body:      canonical[bodyAt : bodyAt+len(body) : bodyAt+len(body)],
		hash:      sha256.Sum256(canonical),
	}, nil
}

// Plan builds the Plan of a call to the tool s describes: the Plan's Tool,
// Action and ReadOnly are s's Name, Action and ReadOnly, stated once in
// Spec, and p must leave them zero. Its Risk is s's usual Risk, or p's
// when p raises it (a write the change gate grades high); p may never
// lower it. A Plan graded below its tool's usual risk (a command the
// catalog classes as a read) is built with NewPlan.
func (s Spec) Plan(p PlanSpec) (Plan, error) {
	if p.Tool != "" || p.Action != "" || p.ReadOnly || (p.Risk != 0 && p.Risk < s.Risk) {
		return Plan{}, fmt.Errorf("plan for %s: its PlanSpec names the tool, action or read-only flag, or lowers the risk", s.Name)
	}
	p.Tool, p.Action, p.ReadOnly, p.Risk = s.Name, s.Action, s.ReadOnly, max(p.Risk, s.Risk)
	return NewPlan(p)
}

// appendJCSStrings writes ss as a JSON array of RFC 8785 strings.
func appendJCSStrings(out []byte, ss []string) []byte {
	out = append(out, '[')
	for i, s := range ss {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendJCSText(out, s)
	}
	return append(out, ']')
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
	return canonicalize(raw)
}

func (p Plan) Tool() string          { return p.tool }
func (p Plan) Action() policy.Action { return p.action }
func (p Plan) Risk() policy.Risk     { return p.risk }
func (p Plan) ReadOnly() bool        { return p.readOnly }
func (p Plan) Display() string       { return p.display }

// Preview is what an approval card shows below Display (see preview.go):
// the tool's preview, or the Plan's body indented when it wrote none.
// It is not part of the hash.
func (p Plan) Preview() string {
	if p.canonical == nil {
		return ""
	}
	if s := p.preview.get(); s != "" {
		return s
	}
	return BodyPreview(p.body)
}

// Class is a command Plan's class (policy.ClassNone for other tools).
func (p Plan) Class() policy.Class { return p.class }

// Template returns a copy of a command Plan's template, if it has one.
func (p Plan) Template() (policy.Template, bool) {
	if p.template == nil {
		return policy.Template{}, false
	}
	t := *p.template
	t.Items = slices.Clone(t.Items)
	return t, true
}

// NewRecipient reports whether this call sends to someone the owner has
// not confirmed yet (see PlanSpec.NewRecipient).
func (p Plan) NewRecipient() bool { return p.newRecip }

// PrivateResult reports whether this call's result holds the owner's
// private data whatever its tool's Spec says (see PlanSpec.PrivateResult).
func (p Plan) PrivateResult() bool { return p.private }

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
	if err := json.Unmarshal(p.body, dst); err != nil {
		return fmt.Errorf("decode plan body: %w", err)
	}
	return nil
}
