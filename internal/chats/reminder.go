package chats

import (
	"context"
	"strings"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/store"
)

// Reminders is the task service as a reminder's buttons need it (app
// wires automation.Service).
type Reminders interface {
	// ReminderText is the sealed text of the owner's reminder id.
	ReminderText(ctx context.Context, id string) (string, error)
	// Snooze adds a one-off copy of reminder id due in d, delivered to
	// deliver, and returns when.
	Snooze(ctx context.Context, id string, d time.Duration, deliver string) (time.Time, error)
}

// snoozeFor is how long Snooze puts a reminder off.
const snoozeFor = time.Hour

// QueueReminder queues a reminder's delivery to chatID with a Snooze and a
// Done button. A button's data is "r:<task id>:<s|d>".
func (s *Service) QueueReminder(tx *store.Tx, platform, chatID, text, reminder string) (int64, error) {
	p := s.txPrinter(tx, platform, chatID)
	buttons := []chat.Button{{Label: p.T("Snooze 1h"), Data: "r:" + reminder + ":s"}, {Label: p.T("Done"), Data: "r:" + reminder + ":d"}}
	first, _, err := queueChat(tx, platform, chatID, text, "", buttons, 0, s.d.Now())
	return first, err
}

// parseReminderButton reads "r:<task id>:<s|d>".
func parseReminderButton(data string) (id string, snooze, ok bool) {
	f := strings.Split(data, ":")
	if len(f) != 3 || f[0] != "r" || !strings.HasPrefix(f[1], "task_") || (f[2] != "s" && f[2] != "d") {
		return "", false, false
	}
	return f[1], f[2] == "s", true
}

// reminderPress handles Snooze and Done under a reminder: only a paired
// owner who is the chat, in their own direct chat (the checks of a card's
// press); the reminder must be theirs (the task service checks). Snooze
// adds a sealed one-off copy due in an hour; both edit the message to say
// what was done and drop its buttons.
func (c *Runner) reminderPress(ctx context.Context, a chat.Adapter, row store.InboxRow, in chat.Inbound, refuse func(string), ack func(string)) {
	p := *in.Press
	id, snooze, _ := parseReminderButton(p.Data)
	if !c.ownerPressed(ctx, row, in, refuse) {
		return
	}
	if c.s.d.Reminders == nil {
		refuse("reminders are not available here") // lang:en
		return
	}
	rem := c.s.d.Reminders()
	text, err := rem.ReminderText(ctx, id)
	if err != nil {
		refuse("not a reminder of the owner's: " + err.Error()) // lang:en
		return
	}
	pr := c.replyPrinter(ctx, row.Platform, in)
	line, note := pr.T("Done."), "done"
	if snooze {
		at, err := rem.Snooze(ctx, id, snoozeFor, row.Platform)
		if err != nil {
			c.log.Warn("snooze", "task", id, "err", err)
			c.finish(ctx, row, inboxHandled, "snooze failed") // lang:en
			ack(pr.Sprintf("Could not snooze it: %s", err))
			return
		}
		line, note = pr.Sprintf("Snoozed until %s.", at.Local().Format("15:04")), "snoozed"
	}
	c.finish(ctx, row, inboxHandled, "reminder "+note)
	ack(line)
	out := chat.Outbound{ChatID: in.Chat.ID, Text: "Reminder: " + text + "\n" + line} // lang:en: as automation sent it
	if err := a.Edit(ctx, in.Chat.ID, p.MessageID, out); err != nil && ctx.Err() == nil {
		c.log.Warn("edit reminder", "platform", row.Platform, "err", err)
	}
}
