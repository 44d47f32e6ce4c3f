package telegram

import (
	"testing"

	"github.com/homard/homard/internal/channel/chat"
)

// TestLanguageCode: a message's and a button press's from.language_code
// is Inbound.Lang; a user Telegram gives none for has none.
func TestLanguageCode(t *testing.T) {
	me := &user{ID: 1, IsBot: true}
	zh := user{ID: 42, FirstName: "Ada", LanguageCode: "zh-hans"}
	pm := &message{MessageID: 5, Chat: chatInfo{ID: 42, Type: "private"}, From: &user{ID: 42}, Text: "hi"}
	cases := []struct {
		name string
		u    update
		want string
	}{
		{"message", update{UpdateID: 1, Message: &message{MessageID: 5, Chat: chatInfo{ID: 42, Type: "private"}, From: &zh, Text: "你好"}}, "zh-hans"},
		{"press", update{UpdateID: 2, CallbackQuery: &callbackQuery{ID: "q", From: zh, Data: "x", Message: pm}}, "zh-hans"},
		{"message without one", update{UpdateID: 3, Message: pm}, ""},
	}
	for _, c := range cases {
		if in := inbound(c.u, me); in.Lang != c.want || in.Kind == chat.KindOther {
			t.Errorf("%s: Lang = %q (kind %s); want %q", c.name, in.Lang, in.Kind, c.want)
		}
	}
}
