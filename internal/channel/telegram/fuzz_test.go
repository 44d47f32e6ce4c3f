package telegram

import (
	"encoding/json"
	"testing"

	"github.com/homard/homard/internal/channel/chat"
)

// FuzzInbound: any update Telegram (or a broken proxy) could send maps
// without a panic, to a known kind, and an entity's offsets past the text
// never mention the bot.
func FuzzInbound(f *testing.F) {
	f.Add([]byte(`{"update_id":1,"message":{"message_id":2,"date":1,"chat":{"id":5,"type":"private"},"from":{"id":5,"is_bot":false,"first_name":"A"},"text":"😀 @homard_test_bot","entities":[{"type":"mention","offset":3,"length":16}]}}`))
	f.Add([]byte(`{"update_id":1,"message":{"message_id":2,"chat":{"id":-1,"type":"group"},"text":"@homard_test_bot","entities":[{"type":"mention","offset":-3,"length":99}]}}`))
	f.Add([]byte(`{"update_id":3,"callback_query":{"id":"q","from":{"id":5},"data":"x"}}`))
	f.Add([]byte(`{"update_id":4,"my_chat_member":{"chat":{"id":-5,"type":"supergroup"},"from":{"id":1},"old_chat_member":{"status":"left","user":{"id":7000000001}},"new_chat_member":{"status":"member","user":{"id":7000000001}}}}`))
	me := &user{ID: 7000000001, Username: "homard_test_bot", IsBot: true}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var u update
		if json.Unmarshal(raw, &u) != nil {
			return
		}
		in := inbound(u, me)
		switch in.Kind {
		case chat.KindMessage, chat.KindPress, chat.KindJoin, chat.KindOther:
		default:
			t.Fatalf("inbound(%s).Kind = %q", raw, in.Kind)
		}
		if in.Kind == chat.KindPress && in.Press == nil {
			t.Fatalf("inbound(%s): a press without Press", raw)
		}
		if in.Sender.IsChat && !in.Chat.Direct {
			t.Fatalf("inbound(%s): IsChat outside a direct chat", raw)
		}
	})
}

func TestMentionsOffsets(t *testing.T) {
	me := &user{ID: 9, Username: "homard_test_bot"}
	text := "😀 @homard_test_bot"
	cases := []struct {
		name string
		e    entity
		want bool
	}{
		{"UTF-16 offset", entity{Type: "mention", Offset: 3, Length: 16}, true},
		{"rune offset is off by one", entity{Type: "mention", Offset: 2, Length: 16}, false},
		{"byte offset", entity{Type: "mention", Offset: 5, Length: 16}, false},
		{"past the end", entity{Type: "mention", Offset: 3, Length: 17}, false},
		{"negative", entity{Type: "mention", Offset: -1, Length: 2}, false},
		{"a hashtag at the same place", entity{Type: "hashtag", Offset: 3, Length: 16}, false},
	}
	for _, c := range cases {
		if got := mentions(text, []entity{c.e}, me); got != c.want {
			t.Errorf("%s: mentions(%q, %+v) = %v; want %v", c.name, text, c.e, got, c.want)
		}
	}
}
