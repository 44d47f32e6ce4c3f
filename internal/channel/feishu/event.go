package feishu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/homard/homard/internal/channel/chat"
)

// Event types homard maps; every other type is chat.KindOther.
const (
	EventMessage  = "im.message.receive_v1"
	EventBotAdded = "im.chat.member.bot.added_v1"
	EventCard     = "card.action.trigger"
)

// envelope is an event of schema 2.0.
type envelope struct {
	Schema string `json:"schema"`
	Header struct {
		EventID    string `json:"event_id"`
		EventType  string `json:"event_type"`
		CreateTime string `json:"create_time"` // ms since the epoch
		AppID      string `json:"app_id"`
	} `json:"header"`
	Event json.RawMessage `json:"event"`
}

type userID struct {
	OpenID string `json:"open_id"`
}

type messageEvent struct {
	Sender struct {
		SenderID   userID `json:"sender_id"`
		SenderType string `json:"sender_type"`
	} `json:"sender"`
	Message struct {
		MessageID   string `json:"message_id"`
		ParentID    string `json:"parent_id"`
		ChatID      string `json:"chat_id"`
		ChatType    string `json:"chat_type"`
		MessageType string `json:"message_type"`
		Content     string `json:"content"`
		Mentions    []struct {
			Key string `json:"key"`
			ID  userID `json:"id"`
		} `json:"mentions"`
	} `json:"message"`
}

type botAddedEvent struct {
	ChatID     string `json:"chat_id"`
	Name       string `json:"name"`
	OperatorID userID `json:"operator_id"`
}

type cardEvent struct {
	Operator userID `json:"operator"`
	Token    string `json:"token"`
	Action   struct {
		Value json.RawMessage `json:"value"`
	} `json:"action"`
	Context struct {
		OpenMessageID string `json:"open_message_id"`
		OpenChatID    string `json:"open_chat_id"`
	} `json:"context"`
}

// ErrNotEvent: the payload is not a schema 2.0 event.
var ErrNotEvent = errors.New("feishu: payload is not a schema 2.0 event")

// Decode maps one event payload (the long connection's frame payload, or
// an HTTP callback's body after VerifyCallback) to a chat.Inbound. Every
// field but Text and Press.Data comes from the event's structured fields.
// A card press asks Feishu once per chat whether the chat is a p2p chat
// (the press event does not say); the answer is cached. Call Info first
// (Run does): Inbound.Bot and Mentioned need the bot's open_id.
func (a *Adapter) Decode(ctx context.Context, payload []byte) (chat.Inbound, error) {
	var env envelope
	if err := json.Unmarshal(payload, &env); err != nil || env.Schema != "2.0" || env.Header.EventID == "" {
		return chat.Inbound{}, ErrNotEvent
	}
	a.mu.Lock()
	bot := a.botID
	a.mu.Unlock()
	in := chat.Inbound{
		Platform:   chat.Feishu,
		Bot:        bot,
		DeliveryID: env.Header.EventID,
		Kind:       chat.KindOther,
	}
	if ms, err := strconv.ParseInt(env.Header.CreateTime, 10, 64); err == nil {
		in.At = time.UnixMilli(ms).UTC()
	}
	var err error
	switch env.Header.EventType {
	case EventMessage:
		var parent string
		if parent, err = decodeMessage(env.Event, bot, &in); err == nil && parent != "" && !in.Mentioned && !in.Chat.Direct {
			in.Mentioned, err = a.sentByBot(ctx, parent)
		}
	case EventBotAdded:
		var ev botAddedEvent
		if err = json.Unmarshal(env.Event, &ev); err == nil {
			in.Kind = chat.KindJoin
			in.Chat = chat.Chat{ID: ev.ChatID, Title: ev.Name}
			in.Sender = chat.Sender{ID: ev.OperatorID.OpenID}
		}
	case EventCard:
		err = a.decodeCard(ctx, env.Event, &in)
	}
	if err != nil {
		return chat.Inbound{}, fmt.Errorf("feishu event %s: %w", env.Header.EventType, err)
	}
	return in, nil
}

// decodeMessage fills in from an im.message.receive_v1 event and returns
// the id of the message it replies to ("" when none).
func decodeMessage(raw json.RawMessage, bot string, in *chat.Inbound) (string, error) {
	var ev messageEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return "", err
	}
	m := ev.Message
	direct := m.ChatType == "p2p"
	user := ev.Sender.SenderType == "user"
	in.Chat = chat.Chat{ID: m.ChatID, Direct: direct}
	in.Sender = chat.Sender{ID: ev.Sender.SenderID.OpenID, Bot: !user, IsChat: direct && user}
	in.MessageID = m.MessageID
	for _, mn := range m.Mentions {
		if bot != "" && mn.ID.OpenID == bot {
			in.Mentioned = true
		}
	}
	switch m.MessageType {
	case "text":
		var c struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(m.Content), &c); err != nil {
			return "", fmt.Errorf("text content: %w", err)
		}
		in.Kind, in.Text = chat.KindMessage, c.Text
	case "post":
		in.Kind, in.Text = chat.KindMessage, postText(m.Content)
	default: // images, files, stickers, merged forwards, cards...
		in.Kind = chat.KindOther
	}
	return m.ParentID, nil
}

// sentByBot reports whether messageID was sent by this app (a group
// message replying to it counts as mentioning the bot). A message Feishu
// will not show (deleted, or in another chat) is not the bot's; a passing
// failure is an error, so the event is not acknowledged and comes again.
func (a *Adapter) sentByBot(ctx context.Context, messageID string) (bool, error) {
	var out struct {
		Items []struct {
			Sender struct {
				ID         string `json:"id"`
				IDType     string `json:"id_type"`
				SenderType string `json:"sender_type"`
			} `json:"sender"`
		} `json:"items"`
	}
	err := a.call(ctx, http.MethodGet, "/open-apis/im/v1/messages/"+url.PathEscape(messageID), nil, &out)
	var apiErr *APIError
	switch {
	case errors.As(err, &apiErr) && apiErr.Status < 500 && apiErr.Status != http.StatusTooManyRequests && apiErr.Code != codeRateLimited:
		return false, nil
	case err != nil:
		return false, fmt.Errorf("replied-to message: %w", err)
	}
	for _, it := range out.Items {
		if it.Sender.SenderType == "app" && it.Sender.IDType == "app_id" && it.Sender.ID == a.opt.AppID {
			return true, nil
		}
	}
	return false, nil
}

// postText flattens a rich-text ("post") message to its text runs, one
// paragraph a line; mentions stay as their @_user_N placeholders.
func postText(content string) string {
	var p struct {
		Title   string `json:"title"`
		Content [][]struct {
			Tag    string `json:"tag"`
			Text   string `json:"text"`
			UserID string `json:"user_id"`
		} `json:"content"`
	}
	if json.Unmarshal([]byte(content), &p) != nil {
		return ""
	}
	var lines []string
	if p.Title != "" {
		lines = append(lines, p.Title)
	}
	for _, para := range p.Content {
		var b strings.Builder
		for _, el := range para {
			switch el.Tag {
			case "text", "a", "code_block":
				b.WriteString(el.Text)
			case "at":
				b.WriteString(el.UserID)
			}
		}
		lines = append(lines, b.String())
	}
	return strings.Join(lines, "\n")
}

func (a *Adapter) decodeCard(ctx context.Context, raw json.RawMessage, in *chat.Inbound) error {
	var ev cardEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return err
	}
	var value struct {
		D string `json:"d"`
	}
	_ = json.Unmarshal(ev.Action.Value, &value) // forgeable data; a foreign shape is just empty
	in.Kind = chat.KindPress
	in.MessageID = ev.Context.OpenMessageID
	in.Press = &chat.Press{ID: ev.Token, MessageID: ev.Context.OpenMessageID, Data: value.D}
	// Only a person can press a card button.
	in.Sender = chat.Sender{ID: ev.Operator.OpenID}
	in.Chat = chat.Chat{ID: ev.Context.OpenChatID}
	if ev.Context.OpenChatID != "" {
		mode, err := a.chatMode(ctx, ev.Context.OpenChatID)
		if err != nil {
			return err
		}
		in.Chat.Direct = mode == "p2p"
		// In a p2p chat the only person besides the bot is its user.
		in.Sender.IsChat = in.Chat.Direct && in.Sender.ID != ""
	}
	return nil
}

// chatMode asks im/v1/chats/{id} for chat_mode (p2p, group, topic); a
// chat's mode never changes, so the answer is cached.
func (a *Adapter) chatMode(ctx context.Context, chatID string) (string, error) {
	a.mu.Lock()
	mode, ok := a.chatModes[chatID]
	a.mu.Unlock()
	if ok {
		return mode, nil
	}
	var out struct {
		ChatMode string `json:"chat_mode"`
	}
	if err := a.call(ctx, http.MethodGet, "/open-apis/im/v1/chats/"+url.PathEscape(chatID), nil, &out); err != nil {
		return "", fmt.Errorf("chat mode: %w", err)
	}
	a.mu.Lock()
	if len(a.chatModes) > 10000 { // a bound, not a policy: start over
		a.chatModes = map[string]string{}
	}
	a.chatModes[chatID] = out.ChatMode
	a.mu.Unlock()
	return out.ChatMode, nil
}
