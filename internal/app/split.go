package app

import (
	"context"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/split"
)

// SplitRequest is one `homard run --split` task (internal/split).
type SplitRequest struct {
	Task string
	// Approve shows the plan and returns nil only if the owner approved
	// exactly it (split.ErrNotApproved otherwise).
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
func (r *Runtime) Split(ctx context.Context, req SplitRequest) (split.Result, error) {
	planner, pc, err := r.roleModel(config.RolePlanner)
	if err != nil {
		return split.Result{}, err
	}
	approve := func(ctx context.Context, p split.Plan) error {
		if err := req.Approve(ctx, p); err != nil {
			return err
		}
		return r.Owner.Audit(ctx, "split_plan", policy.RuleSplitApproved, "the owner approved the plan",
			map[string]string{"plan_hash": p.Hash(), "plan": p.String()}, nil)
	}
	return split.Run(ctx, split.Options{
		Task: req.Task, Approve: approve, OnValue: req.OnValue,
		Planner: split.ModelPlanner{Model: planner, Name: pc.Name},
		Workers: split.AgentWorkers{
			Model: func() (llm.Model, string, int, error) {
				m, c, err := r.roleModel(config.RoleWorker)
				return m, c.Name, c.ContextTokens, err
			},
			Decider: r.Arbiter, Specs: r.offer.specs, Owner: r.Config.Owner, Ask: r.asker(req.Ask),
			Budget: turnBudget(r.Config.Agent, policy.TrustOwner),
		},
	})
}
