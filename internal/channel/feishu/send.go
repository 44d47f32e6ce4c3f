package feishu

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/homard/homard/internal/channel/chat"
)

// Send posts one message to m.ChatID (a chat_id), or replies to
// m.ReplyTo. Text without buttons is a text message; with buttons it is
// an interactive card. m.Key goes out as uuid, Feishu's duplicate-send
// guard (one hour): a second send with the same key returns the first
// message instead of posting again.
func (a *Adapter) Send(ctx context.Context, m chat.Outbound) (string, error) {
	typ, content, err := encodeContent(m)
	if err != nil {
		return "", fmt.Errorf("feishu send: %w", err)
	}
	body := map[string]string{"msg_type": typ, "content": content}
	if m.Key != "" {
		body["uuid"] = sendUUID(m.Key)
	}
	path := "/open-apis/im/v1/messages?receive_id_type=chat_id"
	if m.ReplyTo != "" {
		path = "/open-apis/im/v1/messages/" + url.PathEscape(m.ReplyTo) + "/reply"
	} else {
		if m.ChatID == "" {
			return "", errors.New("feishu send: no chat id")
		}
		body["receive_id"] = m.ChatID
	}
	var out struct {
		MessageID string `json:"message_id"`
	}
	if err := a.call(ctx, http.MethodPost, path, body, &out); err != nil {
		return "", fmt.Errorf("feishu send: %w", err)
	}
	if out.MessageID == "" {
		return "", errors.New("feishu send: the answer has no message_id")
	}
	return out.MessageID, nil
}

// Edit replaces a message homard sent. Feishu edits a card with PATCH
// (card content only) and a text message with PUT, so Edit first asks
// which one messageID is. A card stays a card: with no buttons its action
// row is dropped.
func (a *Adapter) Edit(ctx context.Context, chatID, messageID string, m chat.Outbound) error {
	path := "/open-apis/im/v1/messages/" + url.PathEscape(messageID)
	var got struct {
		Items []struct {
			MsgType string `json:"msg_type"`
		} `json:"items"`
	}
	if err := a.call(ctx, http.MethodGet, path, nil, &got); err != nil {
		return fmt.Errorf("feishu edit: read message: %w", err)
	}
	if len(got.Items) > 0 && got.Items[0].MsgType == "interactive" {
		content, err := cardJSON(m.Text, m.Buttons)
		if err != nil {
			return fmt.Errorf("feishu edit: %w", err)
		}
		if err := a.call(ctx, http.MethodPatch, path, map[string]string{"content": content}, nil); err != nil {
			return fmt.Errorf("feishu edit card: %w", err)
		}
		return nil
	}
	if len(m.Buttons) > 0 {
		return errors.New("feishu edit: a text message cannot gain buttons; send a new card")
	}
	typ, content, err := encodeContent(m)
	if err != nil {
		return fmt.Errorf("feishu edit: %w", err)
	}
	if err := a.call(ctx, http.MethodPut, path, map[string]string{"msg_type": typ, "content": content}, nil); err != nil {
		return fmt.Errorf("feishu edit text: %w", err)
	}
	return nil
}

// Leave removes the bot from a group chat.
func (a *Adapter) Leave(ctx context.Context, chatID string) error {
	path := "/open-apis/im/v1/chats/" + url.PathEscape(chatID) + "/members?member_id_type=app_id"
	body := map[string][]string{"id_list": {a.opt.AppID}}
	if err := a.call(ctx, http.MethodDelete, path, body, nil); err != nil {
		return fmt.Errorf("feishu leave chat: %w", err)
	}
	return nil
}

// encodeContent returns msg_type and content for m.
func encodeContent(m chat.Outbound) (typ, content string, err error) {
	if len(m.Buttons) > 0 {
		c, err := cardJSON(m.Text, m.Buttons)
		return "interactive", c, err
	}
	b, err := json.Marshal(map[string]string{"text": EscapeText(m.Text)})
	return "text", string(b), err
}

// EscapeText makes text inert in a Feishu text message, whose content
// parses <at user_id="…"></at> (a mention that notifies someone) and a
// few style tags: a zero-width space after every '<' breaks every tag
// while people read the same text.
func EscapeText(s string) string {
	return strings.ReplaceAll(s, "<", "<\u200b")
}

// cardJSON is an interactive card: the text as one plain_text element
// (cards do not parse plain_text) and, when there are buttons, one action
// row whose buttons carry {"d": data} as their value.
func cardJSON(text string, buttons []chat.Button) (string, error) {
	type plain struct {
		Tag     string `json:"tag"`
		Content string `json:"content"`
	}
	type button struct {
		Tag   string            `json:"tag"`
		Text  plain             `json:"text"`
		Type  string            `json:"type"`
		Value map[string]string `json:"value"`
	}
	elements := []any{map[string]any{"tag": "div", "text": plain{"plain_text", text}}}
	if len(buttons) > 0 {
		row := make([]button, 0, len(buttons))
		for _, b := range buttons {
			if len(b.Data) > chat.MaxButtonData {
				return "", fmt.Errorf("button %q: data is longer than %d bytes", b.Label, chat.MaxButtonData)
			}
			row = append(row, button{Tag: "button", Text: plain{"plain_text", b.Label}, Type: "default", Value: map[string]string{"d": b.Data}})
		}
		elements = append(elements, map[string]any{"tag": "action", "actions": row})
	}
	card := map[string]any{
		// update_multi: a card every viewer sees the same way, which PATCH requires.
		"config":   map[string]bool{"wide_screen_mode": true, "update_multi": true},
		"elements": elements,
	}
	b, err := json.Marshal(card)
	return string(b), err
}

// sendUUID is the uuid for an outbox key: the key itself when it fits
// Feishu's 50 characters, else a hex digest of it (48 characters).
func sendUUID(key string) string {
	if len(key) <= 50 {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:24])
}
