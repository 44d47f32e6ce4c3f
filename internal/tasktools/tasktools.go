// Package tasktools holds propose_task (issue 26):
// the model, in an owner's conversation, proposes a reminder or a
// scheduled task. Prepare builds the task's exact body — the bytes `homard task
// add` would seal — and makes it the call's plan; the call is critical,
// so the owner is asked in every mode, once only, on the card showing
// that body; Run stores and seals exactly the approved bytes. Nothing is
// stored before the approval, a guest or a task run never gets the tools
// (policy and automation.ForbiddenTools), and a changed body is another
// plan with another hash.
package tasktools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

// Spec is what the model proposes: one of At, Every and Cron, and the
// text (a reminder's, delivered as it is) or a task's prompt.
type Spec struct {
	Name            string
	Text            string
	At, Every, Cron string
	TZ              string
	Tools           []string
	Deliver         string
	Reminder        bool
	// ID and Since make the body the same each time the same call is
	// prepared (the arbiter prepares it again after the owner's answer,
	// and the approval is bound to the plan's hash): the id derives from
	// the call, and the approval period and an every-schedule count from
	// the start of the day (UTC) instead of now.
	ID    string
	Since time.Time
}

// Draft is a proposed body: its canonical bytes and hash, and what the
// owner reads about it.
type Draft struct {
	Canonical []byte
	Hash      string
	// Lines describe the body for the card: schedule, delivery, tools,
	// ceiling, expiry.
	Lines []string
}

// Tasks is the task service as these tools need it (app adapts
// automation.Service).
type Tasks interface {
	// Draft builds and checks the body s would be added with; it stores
	// nothing.
	Draft(ctx context.Context, s Spec) (Draft, error)
	// AddApproved stores canonical, a Draft's bytes the owner approved
	// (approval is the approval's id), sealed: it returns the task's id
	// and when it first runs, as text.
	AddApproved(ctx context.Context, canonical []byte, approval string) (id, next string, err error)
	// Platforms are the chat platforms a result may be delivered to,
	// besides "web".
	Platforms() []string
}

// New returns propose_task over the task service tasks returns when a
// call is prepared or run (the service is built after the tool registry
// it checks profiles against). One tool for reminders and tasks, with
// terse text: every request of every owner turn carries its definition
// (issue 15's budget for the first request is 8 KiB).
func New(tasks func() Tasks) []tool.Tool {
	return []tool.Tool{tool.Adapt[Params](&proposeTask{ts: tasks})}
}

// Params are propose_task's arguments: Remind (a reminder) or Prompt (a
// task), and one of At, Every and Cron.
type Params struct {
	Remind string   `json:"remind,omitempty"`
	Prompt string   `json:"prompt,omitempty"`
	Name   string   `json:"name,omitempty"`
	Tools  []string `json:"tools,omitempty"`
	At     string   `json:"at,omitempty"`
	Every  string   `json:"every,omitempty"`
	Cron   string   `json:"cron,omitempty"`
	TZ     string   `json:"tz,omitempty"`
}

// body is a proposal's plan: the exact bytes approved, and its kind.
type body struct {
	Canonical string `json:"canonical"`
	Hash      string `json:"hash"`
	Reminder  bool   `json:"reminder"`
}

type proposeTask struct{ ts func() Tasks }

var _ tool.Typed[Params] = (*proposeTask)(nil)

// taskDoc is the tool's description (kept short: see New).
const taskDoc = `Only when the owner asks: remind (text sent as is, no model) or prompt+name (a task run with tools), at (2026-12-24T18:00), every (6h, 1d) or cron, in tz. The owner approves it on a card.`

func (t *proposeTask) Spec() tool.Spec {
	return tool.Spec{Name: "propose_task", Description: taskDoc, Action: policy.ActionWrite, Risk: policy.RiskCritical}
}

func (t *proposeTask) Prepare(ctx context.Context, p Params) (tool.Plan, error) {
	// Delivered to the chat the conversation is in, else the web page.
	s := Spec{At: p.At, Every: p.Every, Cron: p.Cron, TZ: p.TZ}
	switch remind, prompt := strings.TrimSpace(p.Remind), strings.TrimSpace(p.Prompt); {
	case remind != "" && prompt != "":
		return tool.Plan{}, tool.InvalidArgs("give remind (a reminder's text) or prompt (a task's), not both")
	case remind != "":
		if len(p.Tools) > 0 {
			return tool.Plan{}, tool.InvalidArgs("a reminder takes no tools: it calls no model")
		}
		s.Name, s.Text, s.Reminder = cmpOr(p.Name, reminderName(p.Remind)), p.Remind, true
	case prompt != "":
		if p.Name == "" {
			return tool.Plan{}, tool.InvalidArgs("name: a task needs a short name (letters, digits, - _ .)")
		}
		s.Name, s.Text, s.Tools = p.Name, p.Prompt, p.Tools
	default:
		return tool.Plan{}, tool.InvalidArgs("give remind (a reminder's text) or prompt (what a task does)")
	}
	return prepare(ctx, t.ts(), s)
}

func (t *proposeTask) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	return run(ctx, t.ts(), plan)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// owner is the caller when it is the owner; anyone else is refused before
// a body is even drafted.
func owner(ctx context.Context) (tool.Caller, error) {
	c, ok := tool.CallerFrom(ctx)
	if !ok || c.Trust != policy.TrustOwner {
		return tool.Caller{}, tool.Refuse(policy.RuleLimitTaskOwner, "only the owner's own conversation may propose a task or a reminder")
	}
	return c, nil
}

func prepare(ctx context.Context, ts Tasks, s Spec) (tool.Plan, error) {
	c, err := owner(ctx)
	if err != nil {
		return tool.Plan{}, err
	}
	if s.Deliver == "" {
		s.Deliver = deliverOf(c.Session, ts.Platforms())
	}
	s.ID, s.Since = callID(c, s), time.Now().UTC().Truncate(24*time.Hour)
	d, err := ts.Draft(ctx, s)
	if err != nil {
		return tool.Plan{}, tool.InvalidArgs("%v", err)
	}
	what := "a scheduled task"
	if s.Reminder {
		what = "a reminder"
	}
	display := fmt.Sprintf("add %s, sealed as shown (hash %s)", what, d.Hash[:12])
	return tool.NewPlan(tool.PlanSpec{
		Tool: "propose_task", Action: policy.ActionWrite, Risk: policy.RiskCritical,
		Display: display,
		// The card shows the body itself: what is approved is these bytes.
		Preview: strings.Join(d.Lines, "\n") + "\n\n" + string(d.Canonical),
		Body:    body{Canonical: string(d.Canonical), Hash: d.Hash, Reminder: s.Reminder},
	})
}

func run(ctx context.Context, ts Tasks, plan tool.Plan) (tool.Result, error) {
	c, err := owner(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	var b body
	if err := plan.Decode(&b); err != nil {
		return tool.Result{}, err
	}
	id, next, err := ts.AddApproved(ctx, []byte(b.Canonical), c.Run)
	if err != nil {
		return tool.Errorf("not added: %v", err), nil
	}
	what := "Task"
	if b.Reminder {
		what = "Reminder"
	}
	return tool.Result{Text: fmt.Sprintf("%s %s added and approved by the owner; first at %s. (homard task show %s; homard task rm %s --yes cancels it.)", what, id, next, id, id)}, nil
}

// deliverOf is where a result goes by default: the chat platform this
// conversation runs on (a chat's session is "<platform>-<chat>…"), else
// the web page.
func deliverOf(session string, platforms []string) string {
	for _, p := range platforms {
		if strings.HasPrefix(session, p+"-") {
			return p
		}
	}
	return "web"
}

// callID is the task id of a proposal: the same owner, session, tool and
// arguments give the same id (asking twice for the same reminder in one
// conversation makes one task; the second is refused as a duplicate).
func callID(c tool.Caller, s Spec) string {
	h := sha256.New()
	kind := "task"
	if s.Reminder {
		kind = "reminder"
	}
	for _, part := range append([]string{c.Owner, c.Session, kind, s.Name, s.Text, s.At, s.Every, s.Cron, s.TZ, s.Deliver}, s.Tools...) {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return "task_" + hex.EncodeToString(h.Sum(nil))[:16]
}

var nameChars = regexp.MustCompile(`[^a-z0-9]+`)

// reminderName is a task name from a reminder's first words:
// "remind-call-mum".
func reminderName(text string) string {
	words := strings.Fields(nameChars.ReplaceAllString(strings.ToLower(text), " "))
	name := "remind"
	for _, w := range words[:min(len(words), 4)] {
		if len(name)+1+len(w) > 48 {
			break
		}
		name += "-" + w
	}
	return name
}
