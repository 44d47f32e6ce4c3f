package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/homard/homard/internal/memory"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

var (
	//go:embed remember.md
	rememberDoc string
	//go:embed recall.md
	recallDoc string
	//go:embed forget.md
	forgetDoc string
)

// RecallBudget caps the characters one recall returns to the model.
const RecallBudget = 2000

// MemoryTools returns remember, recall and forget over m. They serve only
// the owner: Prepare refuses (policy.RuleLimitMemoryOwner) a caller whose
// trust is not owner, or a call without a caller, so guests, group chats
// and unknown identities never read or write the owner's memory.
func MemoryTools(m *memory.Memory) []tool.Tool {
	return []tool.Tool{
		tool.Adapt[RememberParams](&Remember{m: m}),
		tool.Adapt[RecallParams](&Recall{m: m}),
		tool.Adapt[ForgetParams](&Forget{m: m}),
	}
}

// memoryOwner returns the owner whose memory the caller may use, or a
// Refusal.
func memoryOwner(ctx context.Context) (tool.Caller, error) {
	c, ok := tool.CallerFrom(ctx)
	if !ok || c.Trust != policy.TrustOwner || c.Owner == "" {
		return tool.Caller{}, tool.Refuse(policy.RuleLimitMemoryOwner,
			"memory belongs to the owner; guests, group chats and unknown callers never read or write it")
	}
	if err := memory.ValidOwner(c.Owner); err != nil {
		return tool.Caller{}, tool.Refuse(policy.RuleLimitMemoryOwner, "%v", err)
	}
	return c, nil
}

// openOwned begins a memory tool's Run: it decodes plan's body into body
// and re-checks that the caller is owner, the body's owner field: the
// owner the Plan was made for. When Run must stop there, stop is true and
// res and err are what it returns: a body that does not decode is a Go
// error, another caller an error Result.
func openOwned(ctx context.Context, plan tool.Plan, body any, owner *string) (stop bool, res tool.Result, err error) {
	if err := plan.Decode(body); err != nil {
		return true, tool.Result{}, err
	}
	c, err := memoryOwner(ctx)
	if err != nil || c.Owner != *owner {
		return true, tool.Errorf("refused: this plan was made for another caller"), nil
	}
	return false, tool.Result{}, nil
}

// RememberParams are remember's arguments.
type RememberParams struct {
	Text    string `json:"text" jsonschema:"one short self-contained statement"`
	Kind    string `json:"kind,omitempty" jsonschema:"fact (default), preference or task"`
	TTLDays int    `json:"ttl_days,omitempty" jsonschema:"days to keep it; default forever"`
}

// Remember is the remember tool.
type Remember struct{ m *memory.Memory }

type rememberBody struct {
	Owner   string `json:"owner"`
	Text    string `json:"text"`
	Kind    string `json:"kind"`
	TTLDays int    `json:"ttl_days"`
	Source  string `json:"source"`
}

func (t *Remember) Spec() tool.Spec {
	return tool.Spec{Name: "remember", Description: doc(rememberDoc), Action: policy.ActionWrite, Risk: policy.RiskLow}
}

func (t *Remember) Prepare(ctx context.Context, p RememberParams) (tool.Plan, error) {
	c, err := memoryOwner(ctx)
	if err != nil {
		return tool.Plan{}, err
	}
	text, err := t.m.CheckText(p.Text)
	switch {
	case errors.Is(err, memory.ErrSecret):
		// The reason never quotes the text: it goes to the audit trail.
		return tool.Plan{}, tool.Refuse(policy.RuleLimitSecretInArgs, "%v", err)
	case err != nil:
		return tool.Plan{}, tool.InvalidArgs("%v", err)
	}
	kind, err := memory.ParseKind(p.Kind)
	if err != nil {
		return tool.Plan{}, tool.InvalidArgs("%v", err)
	}
	if p.TTLDays < 0 || p.TTLDays > 3650 {
		return tool.Plan{}, tool.InvalidArgs("ttl_days must be between 1 and 3650 (or left out: never expires)")
	}
	expiry := "never expires"
	if p.TTLDays > 0 {
		expiry = "expires in " + plural(p.TTLDays, "day", "days")
	}
	return t.Spec().Plan(tool.PlanSpec{
		Display: fmt.Sprintf("remember (%s, %s): %s", kind, expiry, text),
		Body:    rememberBody{Owner: c.Owner, Text: text, Kind: string(kind), TTLDays: p.TTLDays, Source: "session " + c.Session},
	})
}

func (t *Remember) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b rememberBody
	if stop, res, err := openOwned(ctx, plan, &b, &b.Owner); stop {
		return res, err
	}
	u, err := t.m.Remember(ctx, b.Owner, memory.Note{Text: b.Text, Kind: memory.Kind(b.Kind),
		TTL: time.Duration(b.TTLDays) * 24 * time.Hour, Source: b.Source})
	if errors.Is(err, memory.ErrSecret) || errors.Is(err, memory.ErrText) {
		return tool.Errorf("not remembered: %v", err), nil
	}
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Text: fmt.Sprintf("remembered %s (%s)", u.ID, u.Kind)}, nil
}

// RecallParams are recall's arguments.
type RecallParams struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty" jsonschema:"1 to 20; default 5"`
}

// Recall is the recall tool.
type Recall struct{ m *memory.Memory }

type recallBody struct {
	Owner string `json:"owner"`
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

func (t *Recall) Spec() tool.Spec {
	return tool.Spec{Name: "recall", Description: doc(recallDoc), Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true}
}

func (t *Recall) Prepare(ctx context.Context, p RecallParams) (tool.Plan, error) {
	c, err := memoryOwner(ctx)
	if err != nil {
		return tool.Plan{}, err
	}
	q := strings.TrimSpace(p.Query)
	if q == "" || len(q) > 500 || !utf8.ValidString(q) {
		return tool.Plan{}, tool.InvalidArgs("query must be 1 to 500 bytes of text")
	}
	if p.Limit, err = upTo("limit", p.Limit, 5, memory.MaxRecall); err != nil {
		return tool.Plan{}, err
	}
	return t.Spec().Plan(tool.PlanSpec{
		Display: fmt.Sprintf("recall up to %d memory units matching %q", p.Limit, q),
		Body:    recallBody{Owner: c.Owner, Query: q, Limit: p.Limit},
	})
}

func (t *Recall) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b recallBody
	if stop, res, err := openOwned(ctx, plan, &b, &b.Owner); stop {
		return res, err
	}
	units, err := t.m.Recall(ctx, b.Owner, b.Query, b.Limit)
	if err != nil {
		return tool.Result{}, err
	}
	if len(units) == 0 {
		return tool.Result{Text: fmt.Sprintf("no memory matches %q", b.Query)}, nil
	}
	// Memory is data the owner (or an earlier session) wrote down, not
	// instructions: it is marked untrusted like any other content.
	return tool.Result{Text: FormatRecall(units, RecallBudget), Untrusted: true}, nil
}

// FormatRecall renders units, one per line with id, date, kind and
// source, within budget characters: a unit that does not fit is cut, and
// the units after it are counted, not shown.
func FormatRecall(units []memory.Unit, budget int) string {
	var b strings.Builder
	used := 0
	for i, u := range units {
		head := fmt.Sprintf("- %s (%s, %s, source: %s", u.ID, u.Updated.Format(time.DateOnly), u.Kind, u.Source)
		if !u.Expires.IsZero() {
			head += ", expires " + u.Expires.Format(time.DateOnly)
		}
		head += "): "
		text := strings.ReplaceAll(u.Text, "\n", " ")
		left := budget - used - utf8.RuneCountInString(head)
		if left < 20 && i > 0 {
			fmt.Fprintf(&b, "[%s not shown: recall budget of %d characters reached]\n", plural(len(units)-i, "more unit", "more units"), budget)
			break
		}
		if n := utf8.RuneCountInString(text); n > left {
			text = string([]rune(text)[:max(left, 20)]) + " …"
		}
		line := head + text + "\n"
		b.WriteString(line)
		used += utf8.RuneCountInString(line)
	}
	return b.String()
}

// ForgetParams are forget's arguments.
type ForgetParams struct {
	ID string `json:"id"`
}

// Forget is the forget tool.
type Forget struct{ m *memory.Memory }

type forgetBody struct {
	Owner string `json:"owner"`
	ID    string `json:"id"`
}

func (t *Forget) Spec() tool.Spec {
	return tool.Spec{Name: "forget", Description: doc(forgetDoc), Action: policy.ActionWrite, Risk: policy.RiskMedium}
}

func (t *Forget) Prepare(ctx context.Context, p ForgetParams) (tool.Plan, error) {
	c, err := memoryOwner(ctx)
	if err != nil {
		return tool.Plan{}, err
	}
	if !memory.ValidID(p.ID) {
		return tool.Plan{}, tool.InvalidArgs("%q is not a memory unit id (they look like m_3f9a2c1d7e4b)", p.ID)
	}
	u, err := t.m.Unit(c.Owner, p.ID)
	if errors.Is(err, memory.ErrNotFound) {
		return tool.Plan{}, tool.InvalidArgs("no memory unit has the id %s", p.ID)
	}
	if err != nil {
		return tool.Plan{}, err
	}
	return t.Spec().Plan(tool.PlanSpec{
		Display: fmt.Sprintf("forget %s: %s", u.ID, truncate(u.Text, 200)),
		Body:    forgetBody{Owner: c.Owner, ID: p.ID},
	})
}

func (t *Forget) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b forgetBody
	if stop, res, err := openOwned(ctx, plan, &b, &b.Owner); stop {
		return res, err
	}
	if _, err := t.m.Forget(ctx, b.Owner, b.ID); errors.Is(err, memory.ErrNotFound) {
		return tool.Errorf("%s was already forgotten", b.ID), nil
	} else if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Text: "forgot " + b.ID}, nil
}
