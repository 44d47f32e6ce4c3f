package automation

import (
	"context"
	"errors"
	"fmt"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/split"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/task"
)

// Splitter reaches the planner and worker roles for split tasks
// (TaskSpec.Split, task.Body.Split); app implements it over those roles'
// models and the agent.
type Splitter interface {
	// Planner is the planner role's model: calls without tools.
	Planner() (split.Planner, error)
	// Workers run a split task's items, each a fresh agent turn in a
	// session starting with session, held to its item's split.Limit;
	// every proposal passes d (the run's decider, which ends with the
	// arbiter) and cards are answered through ask.
	Workers(d agent.Decider, session string, ask func(context.Context, channel.Card) (channel.Choice, error), b agent.Budget, onTool func(channel.ToolEvent)) split.Workers
}

// planTask is the planner's plan of a split task's prompt, made once, at
// add: the plan the owner approves with the task and every run runs.
func (s *Service) planTask(ctx context.Context, prompt string) (*split.Plan, error) {
	if s.o.Splitter == nil {
		return nil, fmt.Errorf("%w: this homard cannot plan split tasks", ErrInvalid)
	}
	planner, err := s.o.Splitter.Planner()
	if err != nil {
		return nil, fmt.Errorf("the planner's model: %w", err)
	}
	p, err := split.Propose(ctx, planner, prompt)
	switch {
	case errors.Is(err, split.ErrPlan):
		return nil, fmt.Errorf("%w; add the task again, or rephrase the prompt", err)
	case err != nil:
		return nil, err
	case p.Question != "":
		return nil, fmt.Errorf("%w: the planner needs more before it can plan: %s — rephrase the prompt so it need not ask, and add the task again",
			ErrInvalid, p.Question)
	}
	return &p, nil
}

// splitTools are the tools p's workers may be offered that this
// registry has (no worker is offered the others): a split task's
// default ceiling is the lowest that covers them.
func (s *Service) splitTools(p *split.Plan) []string {
	known := map[string]bool{}
	for _, t := range s.o.Tools.Specs() {
		known[t.Name] = true
	}
	var tools []string
	for _, name := range p.Tools() {
		if known[name] {
			tools = append(tools, name)
		}
	}
	return tools
}

// workSplit runs a started run of a split task: its sealed plan's
// workers, then the planner's answer from their sanitised values, which
// is the run's summary. Nothing plans again and nothing asks for the
// plan's approval: the owner approved this plan with the task. Every
// worker's proposal passes the run's decider (mode, ceiling, budget,
// pause; refusals kept for the run's record), then the arbiter, which
// holds the worker to its item's limits.
func (s *Service) workSplit(ctx context.Context, row store.Task, b task.Body, runID int64, onTool func(channel.ToolEvent)) store.TaskRunEnd {
	rctx, cancel, runtime, stop := s.runContext(ctx, b)
	defer stop()
	tr := &taskRun{s: s, row: row, body: b, runID: runID, cancel: cancel}
	end := func(status, why string) store.TaskRunEnd {
		return store.TaskRunEnd{Status: status, Error: why, Usage: usageJSON(0, 0, 0), Refused: tr.refusals()}
	}
	if s.o.Splitter == nil {
		return end(store.TaskRunFailed, "this homard cannot run split tasks")
	}
	planner, err := s.o.Splitter.Planner()
	if err != nil {
		return end(store.TaskRunFailed, err.Error())
	}
	calls := int(b.Budgets.MaxCalls)
	// Each worker's own turn: one call more than the task's (the
	// decider refuses it past the run's budget, telling the worker to
	// answer); the run's calls are counted across workers by tr.
	budget := agent.Budget{MaxCalls: calls + 1, MaxUnits: 3*calls + 3, Reserve: -1,
		MaxTokens: int(b.Budgets.MaxTokens), TokensSetting: "the task's --max-tokens",
		MaxSteps: int(b.Budgets.MaxTurns), StepsSetting: "the task's --max-turns"}
	workers := s.o.Splitter.Workers(tr, approval.TaskSessionPrefix+row.ID+"-split", s.taskAsk(b), budget, onTool)
	res, err := split.RunPlan(rctx, split.Options{Task: b.Prompt, Planner: planner, Workers: workers}, *b.Split)
	// The workers' and the answer call's tokens count like a turn's, on
	// the run and towards automation.daily_tokens.
	end = func(status, why string) store.TaskRunEnd {
		return store.TaskRunEnd{Status: status, Error: why, Tokens: int64(res.Usage.Input + res.Usage.Output),
			Usage: usageJSON(res.Usage.Input, res.Usage.Output, res.Usage.Cached), Refused: tr.refusals()}
	}
	if err != nil {
		return end(runFailure(ctx, rctx, err, runtime))
	}
	e := end(store.TaskRunSucceeded, "")
	e.Summary = s.o.Redactor.Redact(res.Text())
	return e
}
