package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/telegram/telegramtest"
)

// cardMessage waits for the approval card in chat: the first message
// with buttons.
func (r *tgRig) cardMessage(chat int64) telegramtest.SentMessage {
	r.t.Helper()
	var card telegramtest.SentMessage
	r.waitUntil("an approval card", func() bool {
		for _, m := range r.tg.Messages(chat) {
			if len(m.Buttons) > 0 {
				card = m
				return true
			}
		}
		return false
	})
	return card
}

// press presses data on message msgID as from (in chat, or the message's
// chat when zero) and waits until homard settled the press.
func (r *tgRig) press(from telegramtest.User, msgID int64, chat telegramtest.Chat, data string) (queryID string) {
	r.t.Helper()
	u, q := r.tg.Press(telegramtest.Press{From: from, MessageID: msgID, Chat: chat, Data: data})
	r.settled(u)
	return q
}

// answerTo is the text of the answerCallbackQuery call for query id q
// ("" and false when there was none within tgDeadline). It waits: the
// answer may reach Telegram after the press's inbox row is settled (a
// fresh-clone CI run on a loaded machine read the calls too early).
func (r *tgRig) answerTo(q string) (string, bool) {
	deadline := time.Now().Add(tgDeadline)
	for {
		for _, c := range r.tg.Calls("answerCallbackQuery") {
			var p struct {
				ID   string `json:"callback_query_id"`
				Text string `json:"text"`
			}
			if json.Unmarshal(c.Body, &p) == nil && p.ID == q {
				return p.Text, true
			}
		}
		if time.Now().After(deadline) {
			return "", false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTelegramApprovalByButton: the owner's turn proposes write_file (smart
// mode asks); the card reaches the owner's chat with the plan, the hash
// prefix and the four buttons. A stranger's press (in the owner's chat and
// in their own), a forged press (the right data on another message) and
// the button data written as text approve nothing, are answered and
// audited; the owner's "Approve once" writes the exact content, the
// press is answered, the card edited and the reply sent. A stranger's
// direct messages reach no model and get one notice.
func TestTelegramApprovalByButton(t *testing.T) {
	rig := newTgRig(t)
	content := "line one\nline two: exact bytes, ünïcode\n"
	args, _ := json.Marshal(map[string]string{"path": "notes.txt", "content": content})
	rig.model.on("WRITE-NOTES", rig.model.call("write_file", string(args)))
	rig.start()
	rig.pairOwner(tgOwner)

	// A stranger writes twice: no model call, one notice, audited.
	before := len(rig.model.Requests())
	s1 := rig.tg.Say(telegramtest.Message{From: tgStranger, Text: "hi bot, run WRITE-NOTES for me"})
	s2 := rig.tg.Say(telegramtest.Message{From: tgStranger, Text: "hello? WRITE-NOTES"})
	for _, u := range []int64{s1.UpdateID, s2.UpdateID} {
		if state := rig.settled(u); state != "ignored" {
			t.Errorf("stranger's update %d is %s; want ignored", u, state)
		}
	}
	if n := len(rig.model.Requests()) - before; n != 0 {
		t.Errorf("a stranger's messages made %d model requests; want 0", n)
	}
	if got := rig.messages(tgStranger.ID, 1); len(got) != 1 || !strings.Contains(got[0].Text, "private") {
		t.Errorf("stranger got %+v; want one \"private\" notice", got)
	}
	if n := len(rig.auditWith("chat.unknown-sender")); n != 2 {
		t.Errorf("%d chat.unknown-sender audit records; want 2", n)
	}

	// The owner's turn: a card with the plan and four buttons.
	turn := rig.tg.Say(telegramtest.Message{From: tgOwner, Text: "please WRITE-NOTES"})
	card := rig.cardMessage(tgOwner.ID)
	var labels []string
	for _, b := range card.Buttons {
		labels = append(labels, b.Text)
	}
	if want := []string{"Approve once", "This session", "Always", "Deny"}; !slices.Equal(labels, want) {
		t.Fatalf("card buttons = %q; want %q", labels, want)
	}
	f := strings.Split(card.Buttons[0].Data, ":")
	if len(f) != 4 || f[0] != "a" || len(f[2]) != 12 || f[3] != "o" {
		t.Fatalf("Approve once data = %q; want a:<id>:<hash12>:o", card.Buttons[0].Data)
	}
	approvalID, hash12 := f[1], f[2]
	for _, want := range []string{"write_file", "notes.txt", "plan hash: " + hash12} {
		if !strings.Contains(card.Text, want) {
			t.Errorf("card text lacks %q:\n%s", want, card.Text)
		}
	}
	notes := filepath.Join(rig.home, "workspace", "notes.txt")
	notWritten := func(when string) {
		t.Helper()
		if _, err := os.Stat(notes); !os.IsNotExist(err) {
			t.Fatalf("notes.txt exists %s (%v); want nothing written", when, err)
		}
	}

	// Refused presses: a stranger on the owner's card (in the owner's
	// chat, and from their own chat), and the owner's right data on
	// another message (a forged press).
	approve := card.Buttons[0].Data
	paired := rig.tg.Messages(tgOwner.ID)[0]
	refused := []struct {
		name string
		from telegramtest.User
		msg  int64
		chat telegramtest.Chat
	}{
		{"stranger on the card", tgStranger, card.ID, telegramtest.Chat{}},
		{"stranger from their own chat", tgStranger, card.ID, telegramtest.Private(tgStranger)},
		{"owner on another message", tgOwner, paired.ID, telegramtest.Chat{}},
	}
	for _, p := range refused {
		q := rig.press(p.from, p.msg, p.chat, approve)
		if text, ok := rig.answerTo(q); !ok || text != "This button is not for you." {
			t.Errorf("%s: press answered %q (answered: %v); want \"This button is not for you.\"", p.name, text, ok)
		}
		notWritten("after a refused press (" + p.name + ")")
	}
	var pressRefusals int
	for _, rec := range rig.auditWith("chat.press-refused") {
		if rec.ApprovalID == approvalID && rec.Decision == "denied" {
			pressRefusals++
		}
	}
	if pressRefusals != len(refused) {
		t.Errorf("%d chat.press-refused audit records for %s; want %d", pressRefusals, approvalID, len(refused))
	}
	// The stranger writes the button data as text: only text.
	txt := rig.tg.Say(telegramtest.Message{From: tgStranger, Text: approve})
	rig.settled(txt.UpdateID)
	notWritten("after the button data was sent as text")

	// The owner's press approves once: the exact content is written.
	q := rig.press(tgOwner, card.ID, telegramtest.Chat{}, approve)
	if text, ok := rig.answerTo(q); !ok || !strings.Contains(text, "Approved once") {
		t.Errorf("owner's press answered %q (answered: %v); want \"Approved once\"", text, ok)
	}
	if state := rig.settled(turn.UpdateID); state != "handled" {
		t.Errorf("the owner's turn is %s; want handled", state)
	}
	got, err := os.ReadFile(notes)
	if err != nil || string(got) != content {
		t.Fatalf("notes.txt = %q, %v; want %q", got, err, content)
	}
	rig.waitUntil("the reply after the tool", func() bool { return rig.countText(tgOwner.ID, "finished") == 1 })
	rig.waitUntil("the card edited", func() bool {
		for _, m := range rig.tg.Messages(tgOwner.ID) {
			if m.ID == card.ID {
				return m.Edits > 0 && strings.Contains(m.Text, "Answered here") && len(m.Buttons) == 0
			}
		}
		return false
	})
	var ran int
	for _, rec := range rig.auditWith("write_file") {
		if rec.Decision == "ran" {
			ran++
		}
	}
	if ran != 1 {
		t.Errorf("%d write_file runs audited; want 1", ran)
	}
	// A second press on the used card is told so, and changes nothing.
	q = rig.press(tgOwner, card.ID, telegramtest.Chat{}, approve)
	if text, _ := rig.answerTo(q); !strings.Contains(text, "already answered") {
		t.Errorf("a press on a used card answered %q; want \"already answered\"", text)
	}
	if n := len(rig.tg.Messages(tgStranger.ID)); n != 1 {
		t.Errorf("the stranger got %d messages; want the one notice", n)
	}
	if out, err := rig.cmd("audit", "--verify").CombinedOutput(); err != nil {
		t.Errorf("homard audit --verify: %v\n%s", err, out)
	}
}

// TestTelegramCrashDuringTurn: serve killed while the owner's turn waits
// on its card: after the restart the turn is not run again (its tools may
// have acted), the owner is told, and a press on the old card writes
// nothing.
func TestTelegramCrashDuringTurn(t *testing.T) {
	rig := newTgRig(t)
	args, _ := json.Marshal(map[string]string{"path": "later.txt", "content": "x\n"})
	rig.model.on("WRITE-LATER", rig.model.call("write_file", string(args)))
	rig.start()
	rig.pairOwner(tgOwner)
	turn := rig.tg.Say(telegramtest.Message{From: tgOwner, Text: "WRITE-LATER"})
	card := rig.cardMessage(tgOwner.ID)
	if state := rig.inboxState(turn.UpdateID); state != "running" {
		t.Fatalf("the turn is %s while its card waits; want running", state)
	}
	requests := len(rig.model.Requests())
	rig.kill()
	rig.start()
	rig.waitUntil("the owner to be told", func() bool { return rig.countText(tgOwner.ID, "interrupted by a restart") == 1 })
	if state := rig.inboxState(turn.UpdateID); state != "interrupted" {
		t.Errorf("the turn is %s after the restart; want interrupted", state)
	}
	q := rig.press(tgOwner, card.ID, telegramtest.Chat{}, card.Buttons[0].Data)
	text, answered := rig.answerTo(q)
	if !answered {
		t.Error("the press on the old card was not answered")
	}
	// The approval was still pending, so the press records it (a later
	// identical call in this session may use it); nothing runs now.
	t.Logf("the press on the old card was answered %q", text)
	// A later message is answered: the chat is not stuck.
	rig.tg.Say(telegramtest.Message{From: tgOwner, Text: "still there?"})
	rig.waitUntil("the next reply", func() bool { return rig.countText(tgOwner.ID, "echo: still there?") == 1 })
	if _, err := os.Stat(filepath.Join(rig.home, "workspace", "later.txt")); !os.IsNotExist(err) {
		t.Errorf("later.txt exists (%v): the interrupted turn's call ran", err)
	}
	if n := len(rig.model.Requests()); n != requests+1 {
		t.Errorf("%d model requests after the restart; want 1 (the next message; the interrupted turn is not run again)", n-requests)
	}
	for _, rec := range rig.auditWith("write_file") {
		if rec.Decision == "ran" {
			t.Errorf("write_file ran after the crash: %+v", rec)
		}
	}
}
