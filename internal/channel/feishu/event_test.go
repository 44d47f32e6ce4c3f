package feishu

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/feishu/feishutest"
)

func TestDecode(t *testing.T) {
	srv, a := newPair(t)
	ctx := context.Background()
	if _, err := a.Info(ctx); err != nil { // learns the bot's open_id
		t.Fatal(err)
	}
	srv.SetChatMode("oc_dm", "p2p")
	srv.SetChatMode("oc_grp", "group")
	botMsg, err := a.Send(ctx, chat.Outbound{ChatID: "oc_grp", Text: "an answer"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1764600000000).UTC()
	base := chat.Inbound{Platform: chat.Feishu, Bot: srv.BotOpenID, At: at}
	with := func(f func(*chat.Inbound)) chat.Inbound { in := base; f(&in); return in }
	cases := []struct {
		name    string
		payload []byte
		want    chat.Inbound
	}{
		{"p2p from its user (owner-shaped)",
			feishutest.Message{EventID: "e1", MessageID: "om_1", ChatID: "oc_dm", ChatType: "p2p", Sender: "ou_owner", Text: "hello"}.Event(),
			with(func(in *chat.Inbound) {
				in.DeliveryID, in.Kind, in.MessageID, in.Text = "e1", chat.KindMessage, "om_1", "hello"
				in.Chat = chat.Chat{ID: "oc_dm", Direct: true}
				in.Sender = chat.Sender{ID: "ou_owner", IsChat: true}
			})},
		{"group message mentioning the bot",
			feishutest.Message{EventID: "e2", MessageID: "om_2", ChatID: "oc_grp", ChatType: "group", Sender: "ou_guest", Text: "@_user_1 hi", Mention: []string{"ou_bot"}}.Event(),
			with(func(in *chat.Inbound) {
				in.DeliveryID, in.Kind, in.MessageID, in.Text, in.Mentioned = "e2", chat.KindMessage, "om_2", "@_user_1 hi", true
				in.Chat = chat.Chat{ID: "oc_grp"}
				in.Sender = chat.Sender{ID: "ou_guest"}
			})},
		{"group message mentioning someone else",
			feishutest.Message{EventID: "e3", MessageID: "om_3", ChatID: "oc_grp", ChatType: "group", Sender: "ou_guest", Text: "@_user_1 hi", Mention: []string{"ou_other"}}.Event(),
			with(func(in *chat.Inbound) {
				in.DeliveryID, in.Kind, in.MessageID, in.Text = "e3", chat.KindMessage, "om_3", "@_user_1 hi"
				in.Chat = chat.Chat{ID: "oc_grp"}
				in.Sender = chat.Sender{ID: "ou_guest"}
			})},
		{"group reply to the bot's own message",
			feishutest.Message{EventID: "e11", MessageID: "om_11", ChatID: "oc_grp", ChatType: "group", Sender: "ou_guest", Text: "why?", ParentID: botMsg}.Event(),
			with(func(in *chat.Inbound) {
				in.DeliveryID, in.Kind, in.MessageID, in.Text, in.Mentioned = "e11", chat.KindMessage, "om_11", "why?", true
				in.Chat = chat.Chat{ID: "oc_grp"}
				in.Sender = chat.Sender{ID: "ou_guest"}
			})},
		{"group reply to someone else's message",
			feishutest.Message{EventID: "e12", MessageID: "om_12", ChatID: "oc_grp", ChatType: "group", Sender: "ou_guest", Text: "yes", ParentID: "om_not_the_bots"}.Event(),
			with(func(in *chat.Inbound) {
				in.DeliveryID, in.Kind, in.MessageID, in.Text = "e12", chat.KindMessage, "om_12", "yes"
				in.Chat = chat.Chat{ID: "oc_grp"}
				in.Sender = chat.Sender{ID: "ou_guest"}
			})},
		{"p2p from an app (bot sender)",
			feishutest.Message{EventID: "e4", MessageID: "om_4", ChatID: "oc_dm", ChatType: "p2p", Sender: "ou_app", SenderType: "app", Text: "beep"}.Event(),
			with(func(in *chat.Inbound) {
				in.DeliveryID, in.Kind, in.MessageID, in.Text = "e4", chat.KindMessage, "om_4", "beep"
				in.Chat = chat.Chat{ID: "oc_dm", Direct: true}
				in.Sender = chat.Sender{ID: "ou_app", Bot: true}
			})},
		{"image (not text)",
			feishutest.Message{EventID: "e5", MessageID: "om_5", ChatID: "oc_dm", ChatType: "p2p", Sender: "ou_owner", MsgType: "image", Content: `{"image_key":"img_1"}`}.Event(),
			with(func(in *chat.Inbound) {
				in.DeliveryID, in.Kind, in.MessageID = "e5", chat.KindOther, "om_5"
				in.Chat = chat.Chat{ID: "oc_dm", Direct: true}
				in.Sender = chat.Sender{ID: "ou_owner", IsChat: true}
			})},
		{"rich text (post)",
			feishutest.Message{EventID: "e6", MessageID: "om_6", ChatID: "oc_dm", ChatType: "p2p", Sender: "ou_owner", MsgType: "post",
				Content: `{"title":"T","content":[[{"tag":"text","text":"a "},{"tag":"at","user_id":"@_user_1"}],[{"tag":"a","text":"link","href":"https://x"}]]}`}.Event(),
			with(func(in *chat.Inbound) {
				in.DeliveryID, in.Kind, in.MessageID, in.Text = "e6", chat.KindMessage, "om_6", "T\na @_user_1\nlink"
				in.Chat = chat.Chat{ID: "oc_dm", Direct: true}
				in.Sender = chat.Sender{ID: "ou_owner", IsChat: true}
			})},
		{"card press in a p2p chat",
			feishutest.CardPress("e7", "c-tok", "ou_owner", "oc_dm", "om_card", "a:42:0123456789ab"),
			with(func(in *chat.Inbound) {
				in.DeliveryID, in.Kind, in.MessageID = "e7", chat.KindPress, "om_card"
				in.Chat = chat.Chat{ID: "oc_dm", Direct: true}
				in.Sender = chat.Sender{ID: "ou_owner", IsChat: true}
				in.Press = &chat.Press{ID: "c-tok", MessageID: "om_card", Data: "a:42:0123456789ab"}
			})},
		{"card press in a group",
			feishutest.CardPress("e8", "c-tok2", "ou_guest", "oc_grp", "om_card", "a:42:0123456789ab"),
			with(func(in *chat.Inbound) {
				in.DeliveryID, in.Kind, in.MessageID = "e8", chat.KindPress, "om_card"
				in.Chat = chat.Chat{ID: "oc_grp"}
				in.Sender = chat.Sender{ID: "ou_guest"}
				in.Press = &chat.Press{ID: "c-tok2", MessageID: "om_card", Data: "a:42:0123456789ab"}
			})},
		{"bot added to a group",
			feishutest.BotAdded("e9", "oc_new", "ou_adder", "Team"),
			with(func(in *chat.Inbound) {
				in.DeliveryID, in.Kind = "e9", chat.KindJoin
				in.Chat = chat.Chat{ID: "oc_new", Title: "Team"}
				in.Sender = chat.Sender{ID: "ou_adder"}
			})},
		{"any other event",
			feishutest.Other("e10", "im.message.reaction.created_v1"),
			with(func(in *chat.Inbound) { in.DeliveryID, in.Kind = "e10", chat.KindOther })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := a.Decode(ctx, c.payload)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Decode =\n%+v\nwant\n%+v", got, c.want)
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	_, a := newPair(t)
	ctx := context.Background()
	for _, p := range []string{``, `{}`, `{"schema":"1.0","header":{"event_id":"e"}}`, `{"schema":"2.0","header":{}}`, `[1]`} {
		if _, err := a.Decode(ctx, []byte(p)); !errors.Is(err, ErrNotEvent) {
			t.Errorf("Decode(%q) err = %v; want ErrNotEvent", p, err)
		}
	}
	// A press in a chat Feishu does not know cannot say whether it is
	// direct: an error, so it is not acknowledged.
	if _, err := a.Decode(ctx, feishutest.CardPress("e", "t", "ou_x", "oc_unknown", "om_1", "d")); err == nil {
		t.Error("Decode of a press in an unknown chat succeeded; want an error")
	}
}
