package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/telegram/telegramtest"
)

// TestTelegramReminderE2E: through the fake Telegram, the owner asks for a
// reminder; the model proposes it (propose_task), and the card — only
// Approve once and Deny, in smart mode as in every mode — shows its exact
// body. Nothing exists before the press; after it `homard serve` delivers
// "Reminder: Call mum." at its time with no model request at all, with
// Snooze 1h and Done. Snooze adds a sealed one-off copy an hour later and
// edits the message. The twin: a stranger asking gets no model call, no
// card and no task. Verified offline against the fake Telegram.
func TestTelegramReminderE2E(t *testing.T) {
	rig := newTgRig(t)
	at := time.Now().Add(20 * time.Second).UTC().Truncate(time.Second)
	rig.model.on("REMIND-MUM", rig.model.call("propose_task", `{"at":"`+at.Format(time.RFC3339)+`","remind":"Call mum."}`))
	rig.start()
	rig.pairOwner(tgOwner)

	before := len(rig.model.Requests())
	s := rig.tg.Say(telegramtest.Message{From: tgStranger, Text: "REMIND-MUM at six"})
	rig.settled(s.UpdateID)
	if n := len(rig.model.Requests()) - before; n != 0 {
		t.Errorf("a stranger's request made %d model requests; want 0", n)
	}

	rig.tg.Say(telegramtest.Message{From: tgOwner, Text: "REMIND-MUM: remind me to call mum"})
	card := rig.cardMessage(tgOwner.ID)
	var labels []string
	for _, b := range card.Buttons {
		labels = append(labels, b.Text)
	}
	if want := []string{"Approve once", "Deny"}; !slices.Equal(labels, want) {
		t.Fatalf("card buttons = %q; want %q (a critical card)", labels, want)
	}
	for _, want := range []string{"propose_task", `"reminder":true`, `"prompt":"Call mum."`, `"deliver":"telegram"`} {
		if !strings.Contains(card.Text, want) {
			t.Errorf("the card lacks %q:\n%s", want, card.Text)
		}
	}
	if out := rig.run("", "task", "list"); strings.Contains(out, "remind-call-mum") {
		t.Fatalf("a task exists before the press:\n%s", out)
	}
	rig.press(tgOwner, card.ID, telegramtest.Chat{}, card.Buttons[0].Data)
	rig.waitUntil("the reminder to be added", func() bool {
		return strings.Contains(rig.run("", "task", "list"), "remind-call-mum")
	})
	approved := len(rig.model.Requests())

	var reminder telegramtest.SentMessage
	rig.waitUntil("the reminder at its time", func() bool {
		for _, m := range rig.tg.Messages(tgOwner.ID) {
			if m.Text == "Reminder: Call mum." {
				reminder = m
				return true
			}
		}
		return false
	})
	if time.Now().Before(at) {
		t.Errorf("the reminder arrived before its time %s", at)
	}
	// The turn that proposed it ends with one more request (the answer
	// after the tool); the reminder itself asks the model nothing.
	if n := len(rig.model.Requests()) - approved; n > 1 {
		t.Errorf("%d model requests after the approval; want at most the turn's last one", n)
	}
	labels = labels[:0]
	for _, b := range reminder.Buttons {
		labels = append(labels, b.Text)
	}
	if want := []string{"Snooze 1h", "Done"}; !slices.Equal(labels, want) {
		t.Fatalf("reminder buttons = %q; want %q", labels, want)
	}
	rig.press(tgOwner, reminder.ID, telegramtest.Chat{}, reminder.Buttons[0].Data)
	rig.waitUntil("the snoozed copy", func() bool {
		return strings.Contains(rig.run("", "task", "list"), "remind-call-mum-snoozed")
	})
	rig.waitUntil("the message to say snoozed", func() bool {
		for _, c := range rig.tg.Calls("editMessageText") {
			if strings.Contains(string(c.Body), "Snoozed until") {
				return true
			}
		}
		return false
	})
}
