package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel/telegram/telegramtest"
)

// TestTelegramCardInChinese (issue 26 point 3): the owner's message from
// a client whose language_code is "zh-hans" gets its approval card in
// Chinese, buttons included, with the plan shown exactly as it is and
// the button data unchanged; the press is answered, and the card edited,
// in Chinese; the model's system prompt asks for Simplified Chinese. Its
// twin: the same owner writing from a client set to "en" gets the card,
// the press notice and the system prompt in English as before.
func TestTelegramCardInChinese(t *testing.T) {
	rig := newTgRig(t)
	args, _ := json.Marshal(map[string]string{"path": "notes/中文.txt", "content": "line one\n"})
	rig.model.on("WRITE-ZH", rig.model.call("write_file", string(args)))
	args2, _ := json.Marshal(map[string]string{"path": "notes/en.txt", "content": "line two\n"})
	rig.model.on("WRITE-EN", rig.model.call("write_file", string(args2)))
	rig.start()
	rig.pairOwner(tgOwner)
	zh, en := tgOwner, tgOwner
	zh.LanguageCode, en.LanguageCode = "zh-hans", "en"

	labels := func(m telegramtest.SentMessage) []string {
		var out []string
		for _, b := range m.Buttons {
			out = append(out, b.Text)
		}
		return out
	}
	const line = "Answer in Simplified Chinese unless the owner writes in another language."

	// Chinese.
	turn := rig.tg.Say(telegramtest.Message{From: zh, Text: "请 WRITE-ZH"})
	card := rig.cardMessage(tgOwner.ID)
	if want := []string{"批准一次", "本会话", "始终", "拒绝"}; !slices.Equal(labels(card), want) {
		t.Errorf("card buttons = %q; want %q", labels(card), want)
	}
	f := strings.Split(card.Buttons[0].Data, ":")
	if len(f) != 4 || f[0] != "a" || len(f[2]) != 12 || f[3] != "o" {
		t.Fatalf("批准一次 data = %q; want a:<id>:<hash12>:o, as in English", card.Buttons[0].Data)
	}
	for _, want := range []string{"需要批准：write_file", "notes/中文.txt", "计划哈希：" + f[2]} {
		if !strings.Contains(card.Text, want) {
			t.Errorf("card text lacks %q:\n%s", want, card.Text)
		}
	}
	if strings.Contains(card.Text, "Approval needed") {
		t.Errorf("Chinese card still says Approval needed:\n%s", card.Text)
	}
	if n := len(rig.model.RequestsWith(line)); n == 0 {
		t.Errorf("no model request of the Chinese turn carries the language line")
	}
	q := rig.press(zh, card.ID, telegramtest.Chat{}, card.Buttons[0].Data)
	if text, ok := rig.answerTo(q); !ok || text != "已批准一次" {
		t.Errorf("press answered %q (answered: %v); want 已批准一次", text, ok)
	}
	if state := rig.settled(turn.UpdateID); state != "handled" {
		t.Errorf("the Chinese turn is %s; want handled", state)
	}
	rig.waitUntil("the Chinese card edited", func() bool {
		for _, m := range rig.tg.Messages(tgOwner.ID) {
			if m.ID == card.ID {
				return m.Edits > 0 && strings.Contains(m.Text, "已在此处回复：已批准一次。") && len(m.Buttons) == 0
			}
		}
		return false
	})

	// The twin: English.
	before := len(rig.model.Requests())
	turn = rig.tg.Say(telegramtest.Message{From: en, Text: "please WRITE-EN"})
	var card2 telegramtest.SentMessage
	rig.waitUntil("the English card", func() bool {
		for _, m := range rig.tg.Messages(tgOwner.ID) {
			if len(m.Buttons) > 0 && m.ID != card.ID {
				card2 = m
				return true
			}
		}
		return false
	})
	if want := []string{"Approve once", "This session", "Always", "Deny"}; !slices.Equal(labels(card2), want) {
		t.Errorf("English card buttons = %q; want %q", labels(card2), want)
	}
	for _, want := range []string{"Approval needed: write_file", "notes/en.txt", "plan hash: "} {
		if !strings.Contains(card2.Text, want) {
			t.Errorf("English card text lacks %q:\n%s", want, card2.Text)
		}
	}
	for _, body := range rig.model.Requests()[before:] {
		if strings.Contains(body, line) {
			t.Errorf("a model request of the English turn carries the language line")
		}
	}
	q = rig.press(en, card2.ID, telegramtest.Chat{}, card2.Buttons[0].Data)
	if text, ok := rig.answerTo(q); !ok || text != "Approved once" {
		t.Errorf("English press answered %q (answered: %v); want Approved once", text, ok)
	}
	if state := rig.settled(turn.UpdateID); state != "handled" {
		t.Errorf("the English turn is %s; want handled", state)
	}
}
