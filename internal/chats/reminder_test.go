package chats

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/store"
)

// fakeReminders knows one reminder and records snoozes.
type fakeReminders struct {
	mu      sync.Mutex
	snoozed []string
}

func (f *fakeReminders) ReminderText(_ context.Context, id string) (string, error) {
	if id != "task_0123456789abcdef" {
		return "", errors.New("no such reminder")
	}
	return "Call mum.", nil
}

func (f *fakeReminders) Snooze(_ context.Context, id string, d time.Duration, deliver string) (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snoozed = append(f.snoozed, id+" "+d.String()+" "+deliver)
	return time.Date(2026, 12, 6, 19, 0, 0, 0, time.Local), nil
}

func (f *fakeReminders) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.snoozed)
}

// TestReminderButtons: a reminder is queued with Snooze and Done; the
// owner's Snooze in their own chat snoozes it for an hour on that
// platform and edits the message, Done edits it only. The twins: a
// stranger's press, and a press naming a task that is no reminder of the
// owner's, snooze nothing.
func TestReminderButtons(t *testing.T) {
	rig := newChatRig(t)
	rem := &fakeReminders{}
	rig.s.d.Reminders = func() Reminders { return rem }
	ctx := context.Background()
	if err := rig.st.Write(ctx, func(tx *store.Tx) error {
		if err := tx.AddChatOwner(store.ChatOwner{Platform: chat.Telegram, UserID: "100", Name: "Ann", ChatID: "100", PairedAt: time.Now()}); err != nil {
			return err
		}
		_, err := rig.s.QueueReminder(tx, chat.Telegram, "100", "Reminder: Call mum.", "task_0123456789abcdef")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reminder sent", func() bool { return len(rig.fake.sentTexts("100")) == 1 })
	rig.fake.mu.Lock()
	sent := rig.fake.calls[0]
	rig.fake.mu.Unlock()
	if len(sent.Buttons) != 2 || sent.Buttons[0].Data != "r:task_0123456789abcdef:s" || sent.Buttons[1].Data != "r:task_0123456789abcdef:d" {
		t.Fatalf("buttons %+v; want Snooze and Done", sent.Buttons)
	}
	press := func(delivery, user, data string) {
		t.Helper()
		in := dm(delivery, user, "")
		in.Kind, in.Press = chat.KindPress, &chat.Press{ID: "q" + delivery, MessageID: "m1", Data: data}
		rig.push(in)
		waitFor(t, "press "+delivery, func() bool {
			s := rig.inboxState(delivery)
			return s == inboxHandled || s == inboxIgnored
		})
	}
	press("p1", "200", "r:task_0123456789abcdef:s") // a stranger
	press("p2", "100", "r:task_fedcba9876543210:s") // not a reminder of the owner's
	if rem.count() != 0 || rig.inboxState("p1") != inboxIgnored || rig.inboxState("p2") != inboxIgnored {
		t.Fatalf("snoozed %v; p1 %s, p2 %s; want nothing snoozed, both refused", rem.snoozed, rig.inboxState("p1"), rig.inboxState("p2"))
	}
	press("p3", "100", "r:task_0123456789abcdef:s")
	press("p4", "100", "r:task_0123456789abcdef:d")
	if strings.Join(rem.snoozed, "|") != "task_0123456789abcdef 1h0m0s telegram" {
		t.Errorf("snoozed %q; want the reminder for an hour on telegram", rem.snoozed)
	}
	rig.fake.mu.Lock()
	edits := strings.Join(rig.fake.edits, "|")
	rig.fake.mu.Unlock()
	if !strings.Contains(edits, "100/m1: Reminder: Call mum.\nSnoozed until 19:00.") || !strings.Contains(edits, "100/m1: Reminder: Call mum.\nDone.") {
		t.Errorf("edits %q; want the message to say snoozed, then done", edits)
	}
}
