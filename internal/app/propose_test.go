package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/store"
)

// TestScenarioProposeReminder: the owner asks for a reminder; the model's
// propose_task is asked on a card in autopilot (critical: every mode
// asks) showing the exact body; once approved the task exists, sealed and
// active, and its run delivers the text with no model request. The twins:
// nobody answering leaves no task at all; a guest's propose_task is
// refused and stores nothing; a task profile naming propose_task is
// refused when the task is added.
func TestScenarioProposeReminder(t *testing.T) {
	at := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
	args := `{"at":"` + at + `","remind":"Call mum."}`
	r := newTestRuntime(t, "autopilot")
	srv := runServer(t, r, append(script(proposal{"propose_task", args}), script(proposal{"propose_task", args})...)...)
	var card channel.Card
	approve := func(_ context.Context, c channel.Card) (channel.Choice, error) { card = c; return channel.Once, nil }

	// Nobody answers: the card waits, no task exists.
	_, outs := turn(t, r, "mine", "remind me in two hours to call mum", nil)
	if len(outs) != 1 || outs[0].Status != channel.Pending || outs[0].Rule != "risk.critical" {
		t.Fatalf("unanswered: %+v; want the call pending by risk.critical", outs)
	}
	if list, _ := r.Tasks.List(context.Background()); len(list) != 0 {
		t.Fatalf("%d tasks before any approval; want none", len(list))
	}

	_, outs = turn(t, r, "mine", "remind me in two hours to call mum", approve)
	if len(outs) != 2 || outs[0].Status != channel.Pending || outs[1].Status != channel.Ran || outs[1].Rule != "approval.once" {
		t.Fatalf("approved: %+v; want the call asked, then run by the approval", outs)
	}
	if !strings.Contains(card.Preview, `"reminder":true`) || !strings.Contains(card.Preview, `"prompt":"Call mum."`) || card.OnceOnly == false {
		t.Errorf("card preview %q (once only %v); want the exact body, once only", card.Preview, card.OnceOnly)
	}
	list, err := r.Tasks.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("tasks %v, %v; want the reminder", list, err)
	}
	in := list[0]
	if in.Status != store.TaskActive || !in.Body.Reminder || in.Body.Prompt != "Call mum." || in.Seal == "" {
		t.Fatalf("task %+v; want an active, sealed reminder", in)
	}
	before := len(srv.Requests())
	run, err := r.Tasks.RunNow(context.Background(), in.ID, nil)
	if err != nil || run.Status != store.TaskRunSucceeded || run.Summary != "Call mum." {
		t.Fatalf("run %+v, %v; want the text delivered", run, err)
	}
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("the reminder's run made %d model requests; want none", n)
	}

	// A guest cannot propose one.
	res, err := r.Call(context.Background(), CallRequest{Tool: "propose_task", Args: args, As: "guest", Session: "theirs"})
	if err != nil || res.Decision != arbiter.Denied {
		t.Errorf("guest propose_task = %+v, %v; want denied", res, err)
	}
	if list, _ := r.Tasks.List(context.Background()); len(list) != 1 {
		t.Errorf("%d tasks after the guest's call; want still 1", len(list))
	}
	// A task may not list the tool that proposes tasks.
	if _, err := r.Tasks.Add(context.Background(), TaskSpec{Name: "x", Prompt: "p", Every: "1h", Tools: []string{"propose_task"}}); err == nil {
		t.Error("a task profile with propose_task was added")
	}
}
