// Package automation is homard's scheduled tasks: the task service (add,
// approve, pause, resume, renew, remove, show; bodies sealed with a key
// from the vault), the runner that runs one slot of a sealed task within
// its profile, mode and budgets, and the scheduler that decides which
// slots run. Its contract: nothing runs that the owner did not approve
// exactly as stored (the seal, the expiry and this config's rules are
// checked before every run, and a refused run never calls the model);
// every proposal of a run passes the run's decider and then the arbiter,
// so a run can only be refused more than an owner's turn, never less.
//
// It reaches the rest of homard through small interfaces that app
// implements: Turns runs an agent turn, Outbox queues to the owner's
// chats, Answers waits for an approval's answer, Splitter reaches the
// planner and worker models of split tasks (a plan made at add, sealed
// in the body, run by split.RunPlan). It never imports app. On PostgreSQL
// its river client also runs the chat outbox's deliveries, a job per
// chat whose work the chat core hands it (river_chat.go).
package automation

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/tool"
)

// Turns runs agent turns; app implements it over the agent, its approval
// cards and its sessions.
type Turns interface {
	// RunTurn runs one agent turn as t says, from an empty conversation
	// with t.User as the user message. The approvals its calls leave
	// pending lapse when it ends. When it ends without error its
	// conversation is stored in session t.Caller.Session. An error from
	// the model is explained for a person.
	RunTurn(ctx context.Context, t Turn) (agent.TurnResult, error)
}

// Turn is one agent turn of a task run, as Turns runs it.
type Turn struct {
	Model   llm.Model
	Caller  arbiter.Caller
	Decider agent.Decider
	Tools   []tool.Spec
	System  string
	User    string
	Budget  agent.Budget
	// EndTool ends the turn once the decider returns Ran for it.
	EndTool string
	// Ask shows a pending call's card and waits for the owner's choice;
	// the turn records the answer as the owner's (app's asker).
	Ask func(context.Context, channel.Card) (channel.Choice, error)
	// OnTool, when set, is told about each tool call as it is proposed
	// and decided.
	OnTool func(channel.ToolEvent)
}

// Outbox queues messages to the owner's direct chats on a chat platform;
// app implements it over the chat core.
type Outbox interface {
	// OwnerChats are the direct chats of the owners paired on platform.
	OwnerChats(ctx context.Context, platform string) ([]string, error)
	// Queue queues text to chat on platform inside tx (in parts, if
	// long) and returns its first part's outbox row id.
	Queue(tx *store.Tx, platform, chat, text string) (int64, error)
	// QueueReminder queues a reminder's delivery, text, with the buttons
	// that snooze it or mark it done; reminder is its task's id.
	QueueReminder(tx *store.Tx, platform, chat, text, reminder string) (int64, error)
	// Card queues an approval card of a run to the first owner chat on
	// platform and records it, so a press there is checked exactly as in
	// an owner's own turn. Its buttons offer once and deny.
	Card(ctx context.Context, platform string, card channel.Card) error
}

// Answers waits for the owner's answer to an approval; app implements it
// over the one approval waiter (approval.Service.Wait).
type Answers interface {
	// Await waits until approval id is answered anywhere
	// (channel.Recorded) or within passes or it expires (channel.Lapsed).
	// It records nothing.
	Await(ctx context.Context, id string, within time.Duration) (channel.Choice, error)
}

// Keys derives the key that seals task bodies; *secrets.Vault is one.
type Keys interface {
	DerivedKey(purpose string) ([]byte, error)
}

// Tools lists the tools a task may name; *tool.Registry is one.
type Tools interface {
	Specs() []tool.Spec
}

// Redactor removes secrets from what is stored or sent; *secrets.Redactor
// is one.
type Redactor interface {
	Redact(s string) string
}

// Options configure a Service. Every field but Log and Splitter is
// required.
type Options struct {
	Store  *store.Store
	Config *config.Config
	Keys   Keys
	Tools  Tools
	// Arbiter decides every proposal of a run after the run's decider.
	Arbiter  agent.Decider
	Redactor Redactor
	// Model is the configured model; an error fails a run before
	// anything is sent.
	Model   func() (llm.Model, error)
	Turns   Turns
	Outbox  Outbox
	Answers Answers
	// Splitter plans split tasks at add and runs their workers; nil
	// refuses split tasks.
	Splitter Splitter
	// Now is the clock of the task service and the runs (the scheduler's
	// loop reads time.Now).
	Now func() time.Time
	// Log is where runs and notices log; nil means slog.Default. It is
	// called at each use: serve sets its logger after the service is
	// built.
	Log func() *slog.Logger
}

// Service is the owner's scheduled tasks: the task service the CLI and the
// web UI call, the runner, and serve's scheduler.
type Service struct {
	o Options
	// wake is the Wake of the scheduler serve built (Scheduler), if any.
	wake atomic.Pointer[func()]
}

// New returns the service over o.
func New(o Options) *Service {
	return &Service{o: o}
}

func (s *Service) now() time.Time { return s.o.Now() }

func (s *Service) logger() *slog.Logger {
	if s.o.Log != nil {
		if l := s.o.Log(); l != nil {
			return l
		}
	}
	return slog.Default()
}

// wakeScheduler tells the scheduler of this process, if any, that tasks
// changed (an approval, a resume from the web UI).
func (s *Service) wakeScheduler() {
	if f := s.wake.Load(); f != nil {
		(*f)()
	}
}

// Scheduler is serve's scheduler over this service's ledger: it runs each
// claimed slot with this service's runner, and the service wakes it when
// tasks change. On a shared store (PostgreSQL) in a build with -tags
// postgres it is river's (river.go): the same ticks, each slot run as a
// job by whichever replica fetches it; else the built-in one. Build one
// per process.
func (s *Service) Scheduler(log *slog.Logger) Scheduler {
	sc := s.taskScheduler(log)
	f := sc.Wake // river's Wake is its ticks'
	s.wake.Store(&f)
	if r := newRiverScheduler(sc, s.o.Store); r != nil {
		return r
	}
	return sc
}

// taskScheduler is a scheduler over this service's ledger; Plan uses one
// with a nil log that nothing wakes.
func (s *Service) taskScheduler(log *slog.Logger) *sqliteScheduler {
	return newScheduler(schedulerDeps{
		Store: s.o.Store, Owner: s.o.Config.Owner, Auto: s.o.Config.Automation, Log: log,
		Run: func(ctx context.Context, t store.Task, runID int64, slot time.Time) {
			s.runTaskSlot(ctx, t, runID, slot)
		},
		Refuse: s.refuseBrokenTask, Notify: s.notifyTask,
	})
}
