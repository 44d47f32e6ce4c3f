package automation

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/store"
)

// TestAdminAddTask: the web's AddTask adds a task exactly as `task add`
// does — pending, the configured defaults, origin web — and only the
// hash of the body it returned approves it. A spec that breaks a rule
// is channel.ErrInvalid (400) with words that say what to fix, and
// nothing is stored.
func TestAdminAddTask(t *testing.T) {
	s := newTestService(t, &scriptedTurns{}, &chatOutbox{})
	ctx := t.Context()
	a := s.Admin()
	got, err := a.AddTask(ctx, channel.TaskSpec{Name: "digest", Prompt: "Summarise inbox.txt", Every: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	in, err := s.Info(ctx, got.ID)
	if err != nil {
		t.Fatal(err)
	}
	a0 := s.o.Config.Automation
	if got.Status != store.TaskPending || got.Origin != store.TaskFromWeb || in.Origin != store.TaskFromWeb ||
		got.Canonical != in.Canonical || got.Hash != in.Hash || got.Seal != "" || in.Body.Deliver != "web" ||
		string(in.Body.Mode) != a0.Mode || in.Body.Budgets.MaxCalls != int64(a0.MaxCalls) {
		t.Fatalf("AddTask = %+v, stored %+v; want pending, from the web, with the configured defaults", got, in)
	}
	if _, err := a.ApproveTask(ctx, got.ID, strings.Repeat("0", 64)); !errors.Is(err, channel.ErrConflict) {
		t.Errorf("approve with another hash = %v; want ErrConflict", err)
	}
	ok, err := a.ApproveTask(ctx, got.ID, got.Hash)
	if err != nil || ok.Status != store.TaskActive || ok.Origin != store.TaskFromWeb {
		t.Fatalf("approve with the hash AddTask returned = %+v, %v; want active, from the web", ok, err)
	}

	past := time.Now().Add(-time.Hour).Format(time.RFC3339)
	for _, c := range []struct {
		name string
		spec channel.TaskSpec
		want string
	}{
		{"no schedule", channel.TaskSpec{Name: "x", Prompt: "p"}, "exactly one of"},
		{"two schedules", channel.TaskSpec{Name: "x", Prompt: "p", Every: "1h", Cron: "0 9 * * *", TZ: "UTC"}, "exactly one of"},
		{"in the past", channel.TaskSpec{Name: "x", Prompt: "p", At: past}, "in the past"},
		{"bad name", channel.TaskSpec{Name: "a b", Prompt: "p", Every: "1h"}, "task name"},
		{"no prompt", channel.TaskSpec{Name: "x", Every: "1h"}, "prompt is empty"},
		{"reminder with tools", channel.TaskSpec{Name: "x", Prompt: "p", Every: "1h", Reminder: true, Tools: []string{"read_file"}}, "reminder takes no"},
		{"unknown tool", channel.TaskSpec{Name: "x", Prompt: "p", Every: "1h", Tools: []string{"nope"}}, "does not exist"},
		{"memory tool", channel.TaskSpec{Name: "x", Prompt: "p", Every: "1h", Tools: []string{"remember"}}, "never use memory"},
		{"mode above the ceiling", channel.TaskSpec{Name: "x", Prompt: "p", Every: "1h", Mode: "yolo"}, "max_mode"},
		{"channel off", channel.TaskSpec{Name: "x", Prompt: "p", Every: "1h", Deliver: "discord"}, "not enabled"},
		{"bad ceiling", channel.TaskSpec{Name: "x", Prompt: "p", Every: "1h", Ceiling: "everything"}, "--ceiling"},
		{"too dense", channel.TaskSpec{Name: "x", Prompt: "p", Every: "1m"}, "min_interval"},
		{"negative budget", channel.TaskSpec{Name: "x", Prompt: "p", Every: "1h", MaxCalls: -1}, "max calls"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := a.AddTask(ctx, c.spec)
			if !errors.Is(err, channel.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("AddTask(%+v) = %v; want ErrInvalid saying %q", c.spec, err, c.want)
			}
		})
	}
	if list, _ := s.List(ctx); len(list) != 1 {
		t.Errorf("%d tasks after the refusals; want the one added", len(list))
	}
}
