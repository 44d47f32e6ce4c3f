package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/split"
	"github.com/homard/homard/internal/turntrace"
)

// SplitRequest is one `homard run --split` task (internal/split).
type SplitRequest struct {
	Task string
	// Session is where the plan's card and the audit belong ("" for the
	// CLI's).
	Session string
	// Approve shows the plan and returns nil only if the owner approved
	// exactly it (split.ErrNotApproved otherwise). Nil asks through the
	// approval service: a card of the plan, answered with Ask.
	Approve func(ctx context.Context, p split.Plan) error
	// Ask answers the workers' cards, as TurnRequest.Ask.
	Ask func(context.Context, channel.Card) (channel.Choice, error)
	// OnValue is told each item's sanitised value.
	OnValue func(split.Value)
}

// Split runs a task as a planner and workers (internal/split): the
// planner role's model plans, the owner approves the plan (an audit
// record), each item's worker runs with its kind's tools under hard
// limits, and the planner writes the answer from the sanitised values.
func (r *Runtime) Split(ctx context.Context, req SplitRequest) (_ split.Result, err error) {
	planner, pc, err := r.roleModel(config.RolePlanner)
	if err != nil {
		return split.Result{}, err
	}
	approve := func(ctx context.Context, p split.Plan) error {
		ok := req.Approve
		if ok == nil {
			ok = func(ctx context.Context, p split.Plan) error { return r.approvePlan(ctx, req.Session, p, req.Ask) }
		}
		if err := ok(ctx, p); err != nil {
			return err
		}
		return r.Owner.Audit(ctx, "split_plan", policy.RuleSplitApproved, "the owner approved the plan",
			map[string]string{"plan_hash": p.Hash(), "plan": p.String()}, nil)
	}
	// The planner's calls are a trace of their own (its workers' turns
	// are theirs: lapsingWorkers).
	tt := turntrace.Start(r.tracer, req.Session, policy.TrustOwner, req.Ask != nil)
	tt.Role("planner")
	steps := 0
	onCall := func(mc agent.ModelCall) { steps++; mc.Step = steps; tt.ModelCall(mc) }
	defer func() { tt.End(turntrace.Spent{}, err) }()
	return split.Run(ctx, split.Options{
		Task: req.Task, Approve: approve, OnValue: req.OnValue, Planner: split.ModelPlanner{Model: planner, Name: pc.Name, OnCall: onCall},
		Workers: r.splitWorkers(r.Arbiter, "", req.Ask, turnBudget(r.Config.Agent, policy.TrustOwner), nil),
	})
}

// splitWorkers are a split's workers: the worker role's model, the
// owner's tools, each proposal decided by d, cards answered through ask.
func (r *Runtime) splitWorkers(d agent.Decider, session string, ask func(context.Context, channel.Card) (channel.Choice, error), b agent.Budget, onTool func(channel.ToolEvent)) split.Workers {
	return lapsingWorkers{r: r, onTool: onTool, w: split.AgentWorkers{
		Model: func() (llm.Model, string, int, error) {
			m, c, err := r.roleModel(config.RoleWorker)
			return m, c.Name, c.ContextTokens, err
		},
		Decider: d, Specs: r.offer.specs, Owner: r.Config.Owner, Ask: r.asker(ask), Budget: b, Session: session,
	}}
}

// lapsingWorkers lapse the cards each worker leaves pending when its turn
// ends (its session ends with it, so nothing could use them), and tell
// onTool, when set, about each call as a turn does.
type lapsingWorkers struct {
	r      *Runtime
	w      split.AgentWorkers
	onTool func(channel.ToolEvent)
}

func (l lapsingWorkers) Work(ctx context.Context, it split.Item) (text string, u llm.Usage, err error) {
	cards := l.r.pendingOf(l.r.now())
	defer cards.lapse(ctx)
	// Each worker's turn is a trace of its own, like a conversation's.
	tt := turntrace.Start(l.r.tracer, "split-"+it.ID, policy.TrustOwner, l.w.Ask != nil)
	tt.Role("worker")
	defer func() { tt.End(turntrace.Spent{Usage: u}, err) }()
	w := l.w
	w.OnModelCall = tt.ModelCall
	w.OnEvent = func(ev agent.Event) {
		tt.Event(ev)
		switch {
		case ev.Kind == agent.EventToolResult:
			cards.add(ev.Outcome)
			if l.onTool != nil {
				out := ev.Outcome
				if out == nil || out.Decision == "" { // not proposed: a budget was spent
					out = &Outcome{Decision: arbiter.Denied, Reason: ev.Text}
				}
				l.onTool(l.r.toolEvent(ev.Call, out, ev.Step))
			}
		case ev.Kind == agent.EventToolCall && l.onTool != nil:
			l.onTool(l.r.toolEvent(ev.Call, nil, ev.Step))
		}
	}
	return w.Work(ctx, it)
}

// approvePlan asks the owner to approve plan p as an approval card bound
// to its hash (once or deny; a code with permissions.totp at its risk),
// answered with ask — a chat's buttons, or anywhere a card is answered —
// and uses that approval up.
func (r *Runtime) approvePlan(ctx context.Context, session string, p split.Plan, ask func(context.Context, channel.Card) (channel.Choice, error)) error {
	if ask == nil {
		return split.ErrNotApproved
	}
	body, _ := json.Marshal(p) // what Plan.Hash hashes
	b := approval.Binding{Tool: "split_plan", PlanHash: p.Hash(), Owner: r.Config.Owner, Session: session}
	reason := "the planner's plan: approve exactly this plan to run its workers"
	a, err := r.Approvals.Request(ctx, b, approval.Card{Display: p.String(), Plan: body, Risk: p.Risk(), Reach: p.Reach(), Rule: policy.RuleSplitPlan, Reason: reason})
	if err != nil {
		return err
	}
	card := r.card(ctx, "split_plan", arbiter.Outcome{ApprovalID: a.ID, Plan: p.String(), PlanHash: p.Hash(), Risk: p.Risk().String(), Reason: reason})
	card.OnceOnly = true // a plan runs once
	c, err := ask(ctx, card)
	if err != nil {
		return err
	}
	if c.Approves() {
		if _, err := r.recordAnswer(ctx, a.ID, channel.Once); err != nil {
			return err
		}
	}
	if _, ok, err := r.Approvals.Consume(ctx, b); err != nil || !ok {
		return cmp.Or(err, split.ErrNotApproved)
	}
	return nil
}

// chatSplitter runs a chat's /split (chats.Splitter): the plan is a card
// in the chat; the reply is the planner's answer, then each artifact.
type chatSplitter struct{ r *Runtime }

func (s chatSplitter) Split(ctx context.Context, session, task string, ask func(context.Context, channel.Card) (channel.Choice, error)) (string, error) {
	res, err := s.r.Split(ctx, SplitRequest{Task: task, Session: session, Ask: ask})
	switch {
	case errors.Is(err, split.ErrNotApproved):
		return "Not run: the plan was not approved.", nil
	case err != nil:
		return "", err
	case res.Question != "":
		return "The planner needs more before it can plan: " + res.Question, nil
	}
	return res.Text(), nil
}
