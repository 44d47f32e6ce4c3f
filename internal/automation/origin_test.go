package automation

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/store"
)

// TestTaskOrigin: each way a task is added records where it came from,
// beside the body and never in it: Add from the CLI (the default) and
// from the web, AddApproved (a proposal approved in a conversation) and
// Snooze (a button under a reminder in a chat) as chat. The same spec
// added from the CLI and from the web gives bodies that differ only by
// their id, so the origin cannot change what is sealed. Add refuses an
// origin that is not its own to give.
func TestTaskOrigin(t *testing.T) {
	s := newTestService(t, &scriptedTurns{}, &chatOutbox{})
	now := time.Now()
	s.o.Now = func() time.Time { return now } // both bodies count from the same instant
	ctx := t.Context()
	spec := TaskSpec{Name: "digest", Prompt: "Summarise inbox.txt", Every: "1h", Tools: []string{}}
	cli, err := s.Add(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.Origin = store.TaskFromWeb
	web, err := s.Add(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ReplaceAll(web.Canonical, web.ID, cli.ID) != cli.Canonical {
		t.Errorf("the web task's body\n%s\nis not the CLI task's\n%s\nbut for its id", web.Canonical, cli.Canonical)
	}

	d, err := s.Draft(ctx, TaskSpec{Name: "mum", Prompt: "Call mum.", At: now.Add(2 * time.Hour).Format(time.RFC3339), Deliver: "telegram", Reminder: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Info.Origin != store.TaskFromChat {
		t.Errorf("Draft's origin %q; want chat (what AddApproved will store)", d.Info.Origin)
	}
	proposed, err := s.AddApproved(ctx, d.Canonical, "ap_1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Snooze(ctx, proposed.ID, time.Hour, "telegram"); err != nil {
		t.Fatal(err)
	}

	list, err := s.List(ctx)
	if err != nil || len(list) != 4 {
		t.Fatalf("List = %v, %v; want 4 tasks", list, err)
	}
	want := map[string]string{cli.ID: "cli", web.ID: "web", proposed.ID: "chat"}
	for _, in := range list {
		w, ok := want[in.ID]
		if !ok {
			w = "chat" // the snooze
		}
		if in.Origin != w {
			t.Errorf("task %s (%s) has origin %q; want %q", in.ID, in.Name, in.Origin, w)
		}
		if got, err := s.Info(ctx, in.ID); err != nil || got.Origin != w {
			t.Errorf("Info(%s).Origin = %q, %v; want %q", in.ID, got.Origin, err, w)
		}
	}
	for _, in := range []TaskInfo{cli, web} {
		if in.Origin != want[in.ID] {
			t.Errorf("Add's answer has origin %q; want %q", in.Origin, want[in.ID])
		}
	}

	for _, o := range []string{store.TaskFromChat, "mcp"} {
		spec.Origin = o
		if _, err := s.Add(ctx, spec); !errors.Is(err, ErrInvalid) {
			t.Errorf("Add with origin %q = %v; want ErrInvalid", o, err)
		}
	}
}
