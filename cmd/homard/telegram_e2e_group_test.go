package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel/telegram/telegramtest"
)

// toolNames are the names of the tools a model request offers.
func toolNames(t *testing.T, body string) []string {
	t.Helper()
	var req struct {
		Tools []struct {
			Function struct{ Name, Description string }
		}
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatalf("model request is not JSON: %v", err)
	}
	var out []string
	for _, tl := range req.Tools {
		out = append(out, tl.Function.Name)
	}
	return out
}

// TestTelegramGroups: in an allowed group a message without a mention is
// ignored (no model call) and a mention is answered as a guest whose
// model requests hold none of the owner's memory, even when its model
// calls recall (denied), while the owner's own turn
// (the twin) holds the memory; a group not allowed gets
// one notice and the bot leaves, whether it was written to or added.
func TestTelegramGroups(t *testing.T) {
	rig := newTgRig(t)
	rig.start()
	rig.pairOwner(tgOwner)
	rig.run("", "memory", "add", "my cat is called Marmalade")
	allowed := telegramtest.Group(-1002222, "family")
	rig.run("", "channel", "allow", "telegram", strconv.FormatInt(allowed.ID, 10))
	mention := "@" + rig.tg.Bot().Username + " "

	quiet := rig.tg.Say(telegramtest.Message{From: tgGuest, Chat: allowed, Text: "hello everyone, what is the cat called?"})
	if state := rig.settled(quiet.UpdateID); state != "ignored" {
		t.Errorf("a group message without a mention is %s; want ignored", state)
	}
	if n := len(rig.model.RequestsWith("hello everyone")); n != 0 {
		t.Errorf("a group message without a mention made %d model requests; want 0", n)
	}

	// The guest's turn is offered only the guest tools; its model calls
	// recall anyway: refused (a hard limit: memory is the owner's), and no
	// request of the turn holds the memory.
	rig.model.on("GUEST-ASKS", rig.model.call("recall", `{"query":"cat"}`))
	asked := rig.tg.Say(telegramtest.Message{From: tgGuest, Chat: allowed, Text: mention + "GUEST-ASKS what is the cat called?"})
	if state := rig.settled(asked.UpdateID); state != "handled" {
		t.Errorf("a mention in an allowed group is %s; want handled", state)
	}
	got := rig.messages(allowed.ID, 1)
	if got[0].Text != "finished" || len(got[0].Buttons) != 0 {
		t.Errorf("the group got %+v; want the model's answer, without buttons", got)
	}
	guestReqs := rig.model.RequestsWith("GUEST-ASKS")
	if len(guestReqs) != 2 {
		t.Fatalf("%d model requests hold the guest's question; want 2 (the question, the tool result)", len(guestReqs))
	}
	for i, body := range guestReqs {
		if strings.Contains(body, "Marmalade") {
			t.Errorf("the guest's model request %d holds the owner's memory", i+1)
		}
	}
	if names := toolNames(t, guestReqs[0]); len(names) != 1 || names[0] != "current_time" {
		t.Errorf("the guest's turn is offered %q; want only permissions.guest_tools (current_time)", names)
	}
	recalls := rig.auditWith("recall")
	if len(recalls) != 1 || recalls[0].Decision != "denied" || recalls[0].Owner != "guest" {
		t.Errorf("recall audit = %+v; want one denial of the guest", recalls)
	}
	// The twin: the owner's own turn sees the memory.
	rig.tg.Say(telegramtest.Message{From: tgOwner, Text: "OWNER-ASKS what is my cat called?"})
	rig.waitUntil("the owner's reply", func() bool { return rig.countText(tgOwner.ID, "echo: OWNER-ASKS") == 1 })
	if msgs := rig.tg.Messages(allowed.ID); len(msgs) != 1 {
		t.Errorf("the allowed group got %d messages; want only the guest's answer (no card, no notice)", len(msgs))
	}
	ownerReqs := rig.model.RequestsWith("OWNER-ASKS")
	if len(ownerReqs) != 1 || !strings.Contains(ownerReqs[0], "Marmalade") {
		t.Errorf("the owner's model request does not hold the owner's memory (%d requests)", len(ownerReqs))
	}

	// A group not allowed: one notice, the bot leaves, nothing reaches
	// the model; so does a group the bot is added to.
	other := telegramtest.Group(-1003333, "strangers")
	for _, text := range []string{mention + "OTHER-GROUP hi", mention + "OTHER-GROUP again"} {
		u := rig.tg.Say(telegramtest.Message{From: tgStranger, Chat: other, Text: text})
		if state := rig.settled(u.UpdateID); state != "ignored" {
			t.Errorf("a message in a group not allowed is %s; want ignored", state)
		}
	}
	// The delivery is marked ignored first; the notice and the leave follow.
	rig.waitUntil("the bot to leave the group not allowed", func() bool { return rig.tg.Left(other.ID) })
	if msgs := rig.tg.Messages(other.ID); len(msgs) != 1 || !strings.Contains(msgs[0].Text, "leaving") {
		t.Errorf("the group not allowed got %+v; want one notice", msgs)
	}
	if !rig.tg.Left(other.ID) {
		t.Error("the bot did not leave the group not allowed")
	}
	added := telegramtest.Group(-1004444, "added by someone")
	if state := rig.settled(rig.tg.Join(added, tgStranger)); state != "ignored" {
		t.Errorf("being added to a group not allowed is %s; want ignored", state)
	}
	rig.waitUntil("the bot to leave the group it was added to", func() bool { return rig.tg.Left(added.ID) })
	if msgs := rig.tg.Messages(added.ID); len(msgs) != 1 || !rig.tg.Left(added.ID) {
		t.Errorf("the group the bot was added to got %+v (left: %v); want one notice and leaving", msgs, rig.tg.Left(added.ID))
	}
	if n := len(rig.model.RequestsWith("OTHER-GROUP")); n != 0 {
		t.Errorf("%d model requests from a group not allowed; want 0", n)
	}
	if rig.tg.Left(allowed.ID) {
		t.Error("the bot left the allowed group")
	}
}

// TestTelegramHostileModel: a model cannot approve its own card by
// writing the button data, cannot use the bot token through http_get, and
// has no tool that sends to a chat: the owner's denial holds, nothing is
// written, and homard sent to no chat but those that wrote to it.
func TestTelegramHostileModel(t *testing.T) {
	rig := newTgRig(t)
	args, _ := json.Marshal(map[string]string{"path": "evil.txt", "content": "pwned\n"})
	rig.model.on("WRITE-EVIL", rig.model.call("write_file", string(args)))
	fetch, _ := json.Marshal(map[string]string{"url": "https://api.telegram.org/sendMessage?chat_id=999&text=hi", "auth": "telegram"})
	rig.model.on("FETCH-WITH-TOKEN", rig.model.call("http_get", string(fetch)))
	rig.start()
	rig.pairOwner(tgOwner)
	group := telegramtest.Group(-1005555, "friends")
	rig.run("", "channel", "allow", "telegram", strconv.FormatInt(group.ID, 10))

	// http_get with the channel's token: refused, whatever the model asks.
	rig.tg.Say(telegramtest.Message{From: tgOwner, Text: "FETCH-WITH-TOKEN now"})
	rig.waitUntil("the reply after http_get", func() bool { return rig.countText(tgOwner.ID, "finished") == 1 })
	gets := rig.auditWith("http_get")
	if len(gets) != 1 || gets[0].Decision == "ran" || !strings.Contains(gets[0].Reason, "channel") {
		t.Errorf("http_get audit = %+v; want one refusal naming the channel token", gets)
	}
	// No tool sends to a chat.
	reqs := rig.model.RequestsWith("FETCH-WITH-TOKEN")
	if len(reqs) == 0 {
		t.Fatal("no model request for the owner's turn")
	}
	names := toolNames(t, reqs[0])
	if len(names) == 0 {
		t.Fatal("the owner's model request offers no tools; the check below would prove nothing")
	}
	for _, name := range names {
		for _, bad := range []string{"send", "message", "chat", "telegram", "notify", "post", "reply"} {
			if strings.Contains(name, bad) {
				t.Errorf("the model is offered %q, a tool that may send to a chat", name)
			}
		}
	}

	// The model's own card: it writes the Approve data as text (in a
	// group, as a guest, while the owner's turn waits); nothing is
	// approved; the owner denies.
	rig.tg.Say(telegramtest.Message{From: tgOwner, Text: "WRITE-EVIL please"})
	card := rig.cardMessage(tgOwner.ID)
	approve := card.Buttons[0].Data
	rig.model.on("SAY-DATA", llmTextTurn(approve))
	said := rig.tg.Say(telegramtest.Message{From: tgGuest, Chat: group, Text: "@" + rig.tg.Bot().Username + " SAY-DATA"})
	rig.settled(said.UpdateID)
	msgs := rig.messages(group.ID, 1)
	if msgs[0].Text != approve || len(msgs[0].Buttons) != 0 {
		t.Errorf("the group got %+v; want the data as plain text, without buttons", msgs)
	}
	evil := filepath.Join(rig.home, "workspace", "evil.txt")
	if _, err := os.Stat(evil); !os.IsNotExist(err) {
		t.Fatalf("evil.txt exists after the model wrote the button data (%v)", err)
	}
	q := rig.press(tgOwner, card.ID, telegramtest.Chat{}, card.Buttons[3].Data)
	if text, _ := rig.answerTo(q); text != "Denied" {
		t.Errorf("the owner's Deny was answered %q; want \"Denied\"", text)
	}
	rig.waitUntil("the reply after the denial", func() bool { return rig.countText(tgOwner.ID, "finished") == 2 })
	if _, err := os.Stat(evil); !os.IsNotExist(err) {
		t.Fatalf("evil.txt exists after the owner denied (%v)", err)
	}
	for _, rec := range rig.auditWith("write_file") {
		if rec.Decision == "ran" {
			t.Errorf("write_file ran: %+v", rec)
		}
	}

	// homard sent only to the chats that wrote to it.
	for _, c := range rig.tg.Calls("sendMessage") {
		var p struct {
			ChatID int64 `json:"chat_id"`
		}
		json.Unmarshal(c.Body, &p)
		if p.ChatID != tgOwner.ID && p.ChatID != group.ID {
			t.Errorf("homard sent to chat %d: %s", p.ChatID, c.Body)
		}
	}
	for i, body := range rig.model.Requests() {
		if strings.Contains(body, rig.tg.Token()) {
			t.Errorf("model request %d holds the bot token", i+1)
		}
	}
}
