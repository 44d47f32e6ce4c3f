package automation

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/store/storetest"
	"github.com/homard/homard/internal/tool"
)

// The runner's tests use a real store and config; the model's turn
// (Turns), the chat core's outbox and the approval waiter are app's, so
// they are scripted here: app's own tests drive them for real.

type fixedKey []byte

func (k fixedKey) DerivedKey(string) ([]byte, error) { return k, nil }

// noTools is an empty registry: a task may use no tool but complete_task.
type noTools struct{}

func (noTools) Specs() []tool.Spec { return nil }

// redactSecret stands for the runtime's redactor: it knows one secret.
type redactSecret struct{}

func (redactSecret) Redact(s string) string { return strings.ReplaceAll(s, "sk-SECRET", "[redacted]") }

// noArbiter fails the test: the scripted turns below propose only
// complete_task, which the run's decider handles itself.
type noArbiter struct{ t *testing.T }

func (a noArbiter) Decide(context.Context, arbiter.Proposal) (arbiter.Outcome, error) {
	a.t.Error("the arbiter was asked about complete_task")
	return arbiter.Outcome{}, nil
}

// scriptedTurns calls complete_task with summary through the run's
// decider, as the agent would, and counts its turns.
type scriptedTurns struct {
	summary string
	mu      sync.Mutex
	turns   []Turn
}

func (s *scriptedTurns) RunTurn(ctx context.Context, t Turn) (agent.TurnResult, error) {
	s.mu.Lock()
	s.turns = append(s.turns, t)
	s.mu.Unlock()
	args, _ := json.Marshal(map[string]string{"summary": s.summary})
	out, err := t.Decider.Decide(ctx, arbiter.Proposal{Tool: t.EndTool, Args: args})
	if err != nil {
		return agent.TurnResult{}, err
	}
	return agent.TurnResult{Ended: out.Decision == arbiter.Ran, Usage: llm.Usage{Input: 10, Output: 5}}, nil
}

func (s *scriptedTurns) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns)
}

// chatOutbox has two owner chats on every platform and records what is
// queued to them.
type chatOutbox struct {
	mu     sync.Mutex
	queued []string // "platform/chat: text"
}

func (o *chatOutbox) OwnerChats(context.Context, string) ([]string, error) {
	return []string{"c1", "c2"}, nil
}

func (o *chatOutbox) Queue(tx *store.Tx, platform, chat, text string) (int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queued = append(o.queued, platform+"/"+chat+": "+text)
	return int64(100 + len(o.queued)), nil
}

func (o *chatOutbox) QueueReminder(tx *store.Tx, platform, chat, text, reminder string) (int64, error) {
	return o.Queue(tx, platform, chat, text+" [buttons of "+reminder+"]")
}

func (o *chatOutbox) Card(context.Context, string, channel.Card) error { return nil }

type noAnswers struct{}

func (noAnswers) Await(context.Context, string, time.Duration) (channel.Choice, error) {
	return channel.Lapsed, nil
}

func newTestService(t *testing.T, turns Turns, out Outbox) *Service {
	t.Helper()
	st := storetest.Open(t)
	cfg := config.Default(config.Paths{WorkspaceDir: t.TempDir()})
	cfg.Channels.Of("telegram").Enabled = true
	return New(Options{
		Store: st, Config: cfg, Keys: fixedKey(bytes.Repeat([]byte{9}, 32)), Tools: noTools{},
		Arbiter: noArbiter{t}, Redactor: redactSecret{},
		Model: func() (llm.Model, error) { return nil, nil },
		Turns: turns, Outbox: out, Answers: noAnswers{}, Now: time.Now,
	})
}

func addApprovedTask(t *testing.T, s *Service, spec TaskSpec) TaskInfo {
	t.Helper()
	in, err := s.Add(t.Context(), spec)
	if err != nil {
		t.Fatalf("Add(%+v): %v", spec, err)
	}
	in, err = s.Approve(t.Context(), in.ID, in.Hash)
	if err != nil {
		t.Fatalf("Approve: %v", err)
	}
	return in
}

// TestRunDeliversItsSummaryToEveryOwnerChat: a run that completes has the
// summary complete_task gave, redacted, and it goes to each owner chat of
// the task's platform; the run keeps the first chat's outbox row.
func TestRunDeliversItsSummaryToEveryOwnerChat(t *testing.T) {
	turns := &scriptedTurns{summary: "the key is sk-SECRET"}
	out := &chatOutbox{}
	s := newTestService(t, turns, out)
	in := addApprovedTask(t, s, TaskSpec{Name: "digest", Prompt: "p", Every: "1h", Deliver: "telegram"})
	run, err := s.RunNow(t.Context(), in.ID, nil)
	if err != nil {
		t.Fatalf("RunNow: %v", err)
	}
	if run.Status != store.TaskRunSucceeded || run.Summary != "the key is [redacted]" || run.Tokens != 15 {
		t.Errorf("run = %+v; want succeeded, the summary redacted, 15 tokens", run)
	}
	want := []string{
		"telegram/c1: Scheduled task digest:\n\nthe key is [redacted]",
		"telegram/c2: Scheduled task digest:\n\nthe key is [redacted]",
	}
	if strings.Join(out.queued, "|") != strings.Join(want, "|") {
		t.Errorf("queued %q; want %q", out.queued, want)
	}
	if run.Delivery != "telegram" {
		t.Errorf("delivery = %q; want telegram", run.Delivery)
	}
	if turns.count() != 1 {
		t.Fatalf("%d turns; want 1", turns.count())
	}
	tu := turns.turns[0]
	if tu.Caller.Session != "task-"+in.ID || tu.EndTool != CompleteTaskTool || len(tu.Tools) != 1 || tu.Tools[0].Name != CompleteTaskTool {
		t.Errorf("turn = session %q, end tool %q, tools %v; want the task's session, complete_task its only tool", tu.Caller.Session, tu.EndTool, tu.Tools)
	}
}

// TestRefusedSlotRunsNoTurn: a claimed slot of a task whose approval
// ended is refused before any turn; the owner is told only that it did
// not run, and the task has no next run until it is renewed.
func TestRefusedSlotRunsNoTurn(t *testing.T) {
	turns := &scriptedTurns{summary: "ran"}
	out := &chatOutbox{}
	s := newTestService(t, turns, out)
	in := addApprovedTask(t, s, TaskSpec{Name: "digest", Prompt: "p", Every: "1h", Deliver: "telegram", Expires: time.Hour})
	later := time.Now().Add(2 * time.Hour)
	s.o.Now = func() time.Time { return later }
	row, err := s.o.Store.Task(t.Context(), in.ID)
	if err != nil {
		t.Fatal(err)
	}
	var runID int64
	err = s.o.Store.Write(t.Context(), func(tx *store.Tx) error {
		runID, _, err = tx.ClaimSlot(in.ID, "slot-1", later, later)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	end := s.runTaskSlot(t.Context(), row, runID, later)
	if end.Status != store.TaskRunRefused || !strings.Contains(end.Error, "expired") {
		t.Errorf("run = %+v; want refused as expired", end)
	}
	if turns.count() != 0 {
		t.Errorf("%d turns ran for a refused slot; want none", turns.count())
	}
	want := "telegram/c1: Scheduled task digest did not run. `homard task show " + in.ID + "` says what to do."
	if len(out.queued) != 2 || out.queued[0] != want {
		t.Errorf("queued %q; want the bare notice %q to both chats", out.queued, want)
	}
	info, err := s.Info(t.Context(), in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !info.NextRunAt.IsZero() || !strings.Contains(info.Problem, "expired") {
		t.Errorf("after the refusal: next run %v, problem %q; want none, and expired", info.NextRunAt, info.Problem)
	}
}

// TestDeliveryNamesRefusedCalls: what the owner is sent about a run that
// had calls refused (above its ceiling) lists them after the result; a
// run that never started says only that.
func TestDeliveryNamesRefusedCalls(t *testing.T) {
	tk := store.Task{ID: "task_1", Name: "digest"}
	const line = "write_file: this call writes files or runs a command; the task's ceiling is read (ceiling.exceeded)"
	for _, c := range []struct {
		end     store.TaskRunEnd
		refused bool
		want    []string
		not     string
	}{
		{store.TaskRunEnd{Status: store.TaskRunSucceeded, Summary: "done", Refused: line}, false, []string{"done", "Refused during the run:\n" + line}, ""},
		{store.TaskRunEnd{Status: store.TaskRunFailed, Error: "no complete_task", Refused: line}, false, []string{"did not finish", line}, ""},
		{store.TaskRunEnd{Status: store.TaskRunSucceeded, Summary: "done"}, false, []string{"done"}, "Refused"},
		{store.TaskRunEnd{Status: store.TaskRunRefused, Error: "expired", Refused: line}, true, []string{"did not run"}, "Refused"},
	} {
		got := taskDeliveryText(tk, false, c.end, c.refused)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("taskDeliveryText(%+v) = %q; want it to contain %q", c.end, got, w)
			}
		}
		if c.not != "" && strings.Contains(got, c.not) {
			t.Errorf("taskDeliveryText(%+v) = %q; want no %q", c.end, got, c.not)
		}
	}
}

// TestReminderRunsNoModel: a reminder's run delivers its sealed text as it
// is to every owner chat — no turn, no model — and a reminder that asks
// for tools is refused when added. The twin, a task with a prompt, runs a
// turn (TestRunDeliversItsSummaryToEveryOwnerChat).
func TestReminderRunsNoModel(t *testing.T) {
	turns := &scriptedTurns{summary: "never"}
	out := &chatOutbox{}
	s := newTestService(t, turns, out)
	s.o.Model = func() (llm.Model, error) { t.Error("a reminder asked for the model"); return nil, nil }
	in := addApprovedTask(t, s, TaskSpec{Name: "mum", Prompt: "Call mum.", At: time.Now().Add(time.Hour).Format(time.RFC3339), Deliver: "telegram", Reminder: true})
	if !in.Body.Reminder || len(in.Body.Tools) != 0 {
		t.Fatalf("body %+v; want a reminder with no tools", in.Body)
	}
	run, err := s.RunNow(t.Context(), in.ID, nil)
	if err != nil {
		t.Fatalf("RunNow: %v", err)
	}
	if run.Status != store.TaskRunSucceeded || run.Summary != "Call mum." || run.Tokens != 0 {
		t.Errorf("run = %+v; want succeeded with the text, no tokens", run)
	}
	buttons := " [buttons of " + in.ID + "]"
	if want := "telegram/c1: Reminder: Call mum." + buttons + "|telegram/c2: Reminder: Call mum." + buttons; strings.Join(out.queued, "|") != want {
		t.Errorf("queued %q; want %q", out.queued, want)
	}
	if turns.count() != 0 {
		t.Errorf("%d turns ran for a reminder; want none", turns.count())
	}
	if _, err := s.Add(t.Context(), TaskSpec{Name: "x", Prompt: "p", Every: "1h", Reminder: true, Tools: []string{"read_file"}}); err == nil {
		t.Error("a reminder with tools was added")
	}
}

// TestSnooze: snoozing the owner's reminder adds a sealed, active one-off
// copy of its text due about an hour later on the platform asked; a task
// that is no reminder is refused.
func TestSnooze(t *testing.T) {
	s := newTestService(t, &scriptedTurns{}, &chatOutbox{})
	in := addApprovedTask(t, s, TaskSpec{Name: "mum", Prompt: "Call mum.", Every: "1d", Deliver: "telegram", Reminder: true})
	at, err := s.Snooze(t.Context(), in.ID, time.Hour, "telegram")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(at); d < 59*time.Minute || d > 62*time.Minute {
		t.Errorf("snoozed until %v; want about an hour from now", at)
	}
	list, err := s.List(t.Context())
	if err != nil || len(list) != 2 {
		t.Fatalf("tasks %v, %v; want the reminder and its snooze", list, err)
	}
	var got TaskInfo
	for _, x := range list {
		if x.ID != in.ID {
			got = x
		}
	}
	if got.Status != store.TaskActive || !got.Body.Reminder || got.Body.Prompt != "Call mum." || got.Body.Sched.Kind != "at" || got.Seal == "" {
		t.Errorf("snooze %+v; want an active sealed one-off reminder of the same text", got)
	}
	task := addApprovedTask(t, s, TaskSpec{Name: "digest", Prompt: "p", Every: "1d"})
	if _, err := s.Snooze(t.Context(), task.ID, time.Hour, "telegram"); err == nil {
		t.Error("a task that is no reminder was snoozed")
	}
}
