package app

import (
	"context"
	"time"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/automation"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/provider"
	"github.com/homard/homard/internal/split"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/turntrace"
)

// The scheduled tasks live in internal/automation; Runtime.Tasks is its
// service. These names are what cmd/homard uses of it.
type (
	// TaskService is the task service's type (Runtime.Tasks).
	TaskService = automation.Service
	// TaskSpec is what `homard task add` asks for.
	TaskSpec = automation.TaskSpec
	// TaskInfo is a task as the CLI and the web UI show it.
	TaskInfo = automation.TaskInfo
)

// ErrTaskInvalid marks a task, or a request about one, that breaks a rule
// (the task service's ErrBadRequest).
var ErrTaskInvalid = automation.ErrInvalid

// taskForbiddenTools are the memory tools, which neither a task nor a
// client of `homard mcp serve` may use.
var taskForbiddenTools = automation.ForbiddenTools

// newTasks builds the task service over this runtime's store, vault,
// registry, arbiter and model; its runs' turns, chat messages and
// approval waits, and split tasks' planner and workers, go through
// taskWiring.
func (r *Runtime) newTasks() *automation.Service {
	w := taskWiring{r}
	return automation.New(automation.Options{
		Store: r.Store, Config: r.Config, Keys: r.Vault, Tools: r.Registry, Arbiter: r.Arbiter,
		Redactor: r.redactor, Model: r.Model, Turns: w, Outbox: w, Answers: w, Splitter: w, Log: r.logger,
		// Read at each use: the task service keeps the runtime's clock,
		// which tests move after Open.
		Now: func() time.Time { return r.now() },
	})
}

// taskWiring is what the task service needs of the runtime: agent turns
// (automation.Turns), the chat core's outbox (automation.Outbox) and the
// one approval waiter (automation.Answers).
type taskWiring struct{ r *Runtime }

var (
	_ automation.Turns    = taskWiring{}
	_ automation.Outbox   = taskWiring{}
	_ automation.Answers  = taskWiring{}
	_ automation.Splitter = taskWiring{}
)

// Planner is the planner role's model, for split tasks.
func (w taskWiring) Planner() (split.Planner, error) {
	m, c, err := w.r.roleModel(config.RolePlanner)
	return split.ModelPlanner{Model: m, Name: c.Name}, err
}

// Workers are a split task's workers, as Split's, decided by d.
func (w taskWiring) Workers(d agent.Decider, session string, ask func(context.Context, channel.Card) (channel.Choice, error), b agent.Budget, onTool func(channel.ToolEvent)) split.Workers {
	return w.r.splitWorkers(d, session, ask, b, onTool)
}

// RunTurn runs a task run's turn with the runtime's asker (cards shown,
// answers recorded as the owner's), reports its calls as channel events,
// lapses the approvals it left pending, and keeps its conversation in its
// session, so `homard session show task-ID` shows what runs did.
func (w taskWiring) RunTurn(ctx context.Context, t automation.Turn) (res agent.TurnResult, err error) {
	r := w.r
	orphans := r.pendingOf(r.now())
	defer orphans.lapse(ctx)
	// Traced like Run's turns (internal/turntrace).
	tt := turntrace.Start(r.tracer, t.Caller.Session, t.Caller.Trust, t.Ask != nil)
	tt.Model(r.mainModel().Name)
	defer func() {
		tt.End(turntrace.Spent{Calls: res.Calls, Units: res.Units, Pending: len(res.Pending), Usage: res.Usage, Stopped: res.Stopped}, err)
	}()
	a := agent.New(agent.Options{
		Model: t.Model, ModelName: r.mainModel().Name, Decider: t.Decider, Tools: t.Tools, System: t.System,
		Caller: t.Caller, Ask: r.asker(t.Ask),
		Context: agent.ContextBudget{MaxTokens: r.mainModel().ContextTokens},
		Budget:  t.Budget, EndTool: t.EndTool, OnModelCall: tt.ModelCall,
	})
	onEvent := func(ev agent.Event) {
		tt.Event(ev)
		if ev.Kind == agent.EventToolResult {
			orphans.add(ev.Outcome)
		}
		if t.OnTool == nil {
			return
		}
		switch ev.Kind {
		case agent.EventToolCall:
			t.OnTool(r.toolEvent(ev.Call, nil, ev.Step))
		case agent.EventToolResult:
			out := ev.Outcome
			if out == nil || out.Decision == "" {
				out = &Outcome{Decision: arbiter.Denied, Reason: ev.Text}
			}
			t.OnTool(r.toolEvent(ev.Call, out, ev.Step))
		}
	}
	res, err = a.Continue(ctx, agent.Conversation{}, t.User, onEvent)
	if err != nil {
		return res, provider.Explain(r.mainModel(), err)
	}
	r.storeTaskTurn(ctx, t.Caller.Session, t.Caller.Owner, res)
	return res, nil
}

// storeTaskTurn keeps the run's conversation in its task's session. A
// failure is logged: the audit already holds every call.
func (r *Runtime) storeTaskTurn(ctx context.Context, session, owner string, res agent.TurnResult) {
	rows, err := r.messageRows(res.Messages, nil)
	if err == nil {
		usage := store.Usage{Input: res.Usage.Input, Output: res.Usage.Output, Cached: res.Usage.Cached}
		err = r.Store.Write(context.WithoutCancel(ctx), func(tx *store.Tx) error {
			_, err := tx.AppendTurn(session, owner, rows, usage, res.Stopped, r.now())
			return err
		})
	}
	if err != nil {
		r.logger().Warn("store task run conversation", "session", session, "err", err)
	}
}

// OwnerChats are the direct chats of the owners paired on platform.
func (w taskWiring) OwnerChats(ctx context.Context, platform string) ([]string, error) {
	return w.r.Chats.OwnerChats(ctx, platform)
}

// Queue queues text to chat through the chat core's outbox.
func (w taskWiring) Queue(tx *store.Tx, platform, chat, text string) (int64, error) {
	return w.r.Chats.Queue(tx, platform, chat, text)
}

func (w taskWiring) QueueReminder(tx *store.Tx, platform, chat, text, reminder string) (int64, error) {
	return w.r.Chats.QueueReminder(tx, platform, chat, text, reminder)
}

// Card queues a run's approval card to the owner's chat.
func (w taskWiring) Card(ctx context.Context, platform string, card channel.Card) error {
	return w.r.Chats.QueueCard(ctx, platform, card)
}

// Await waits through the one approval waiter (awaitAnswer).
func (w taskWiring) Await(ctx context.Context, id string, within time.Duration) (channel.Choice, error) {
	return w.r.awaitAnswer(ctx, id, within, 0)
}
