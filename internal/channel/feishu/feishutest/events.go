package feishutest

import (
	"encoding/json"
	"fmt"
)

// Message describes an im.message.receive_v1 event.
type Message struct {
	EventID   string
	MessageID string
	ChatID    string
	ChatType  string // p2p or group
	Sender    string // open_id
	// SenderType is user, app, … Zero means user.
	SenderType string
	// MsgType zero means text.
	MsgType string
	Text    string   // for text messages
	Content string   // raw content JSON for other types (overrides Text)
	Mention []string // open_ids mentioned, as @_user_1, @_user_2…
	// ParentID is the message this one replies to.
	ParentID string
}

func envelope(eventID, eventType string, event any) []byte {
	b, _ := json.Marshal(map[string]any{
		"schema": "2.0",
		"header": map[string]string{
			"event_id": eventID, "event_type": eventType, "create_time": "1764600000000",
			"token": "verification-token", "app_id": "cli_test", "tenant_key": "tenant",
		},
		"event": event,
	})
	return b
}

// Event is m as the payload Feishu sends.
func (m Message) Event() []byte {
	st := m.SenderType
	if st == "" {
		st = "user"
	}
	typ := m.MsgType
	if typ == "" {
		typ = "text"
	}
	content := m.Content
	if content == "" {
		c, _ := json.Marshal(map[string]string{"text": m.Text})
		content = string(c)
	}
	var mentions []map[string]any
	for i, id := range m.Mention {
		mentions = append(mentions, map[string]any{
			"key": fmt.Sprintf("@_user_%d", i+1), "name": "someone", "tenant_key": "tenant",
			"id": map[string]string{"open_id": id, "union_id": "on_" + id, "user_id": ""},
		})
	}
	return envelope(m.EventID, "im.message.receive_v1", map[string]any{
		"sender": map[string]any{
			"sender_id":   map[string]string{"open_id": m.Sender, "union_id": "on_" + m.Sender, "user_id": ""},
			"sender_type": st, "tenant_key": "tenant",
		},
		"message": map[string]any{
			"message_id": m.MessageID, "root_id": m.ParentID, "parent_id": m.ParentID, "create_time": "1764600000000",
			"chat_id": m.ChatID, "chat_type": m.ChatType, "message_type": typ, "content": content,
			"mentions": mentions,
		},
	})
}

// CardPress is a card.action.trigger event: operator pressed a button
// whose value is {"d": data} on messageID in chatID; token is what the
// client's AckPress names.
func CardPress(eventID, token, operator, chatID, messageID, data string) []byte {
	return envelope(eventID, "card.action.trigger", map[string]any{
		"operator": map[string]string{"open_id": operator, "union_id": "on_" + operator, "tenant_key": "tenant"},
		"token":    token,
		"action":   map[string]any{"tag": "button", "value": map[string]string{"d": data}},
		"host":     "im_message",
		"context":  map[string]string{"open_message_id": messageID, "open_chat_id": chatID},
	})
}

// BotAdded is an im.chat.member.bot.added_v1 event.
func BotAdded(eventID, chatID, operator, name string) []byte {
	return envelope(eventID, "im.chat.member.bot.added_v1", map[string]any{
		"chat_id":     chatID,
		"operator_id": map[string]string{"open_id": operator, "union_id": "on_" + operator},
		"external":    false, "name": name,
	})
}

// Other is an event of any other type (a reaction, a read receipt…).
func Other(eventID, eventType string) []byte {
	return envelope(eventID, eventType, map[string]any{"anything": true})
}
