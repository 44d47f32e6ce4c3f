package telegram

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/homard/homard/internal/channel/chat"
)

// The Bot API's shapes, as far as homard reads them. Unknown fields are
// ignored: Telegram adds fields often.

type update struct {
	UpdateID          int64              `json:"update_id"`
	Message           *message           `json:"message"`
	EditedMessage     *message           `json:"edited_message"`
	ChannelPost       *message           `json:"channel_post"`
	EditedChannelPost *message           `json:"edited_channel_post"`
	CallbackQuery     *callbackQuery     `json:"callback_query"`
	MyChatMember      *chatMemberUpdated `json:"my_chat_member"`
}

type user struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Username  string `json:"username"`
	// LanguageCode is the user's IETF language tag ("en", "zh-hans"),
	// when Telegram knows it.
	LanguageCode string `json:"language_code"`
}

type chatInfo struct {
	ID    int64  `json:"id"`
	Type  string `json:"type"` // private, group, supergroup, channel
	Title string `json:"title"`
}

type entity struct {
	Type   string `json:"type"`
	Offset int    `json:"offset"` // UTF-16 code units
	Length int    `json:"length"` // UTF-16 code units
	User   *user  `json:"user"`   // text_mention
}

type message struct {
	MessageID            int64           `json:"message_id"`
	From                 *user           `json:"from"`
	SenderChat           *chatInfo       `json:"sender_chat"`
	Date                 int64           `json:"date"`
	Chat                 chatInfo        `json:"chat"`
	BusinessConnectionID string          `json:"business_connection_id"`
	ViaBot               *user           `json:"via_bot"`
	ForwardOrigin        json.RawMessage `json:"forward_origin"`
	ForwardFrom          *user           `json:"forward_from"`      // before Bot API 7.0
	ForwardFromChat      *chatInfo       `json:"forward_from_chat"` // before Bot API 7.0
	ForwardSenderName    string          `json:"forward_sender_name"`
	IsAutomaticForward   bool            `json:"is_automatic_forward"`
	ReplyToMessage       *message        `json:"reply_to_message"`
	Quote                *struct {
		Text string `json:"text"`
	} `json:"quote"`
	Text            string   `json:"text"`
	Entities        []entity `json:"entities"`
	Caption         string   `json:"caption"`
	CaptionEntities []entity `json:"caption_entities"`
}

type callbackQuery struct {
	ID      string   `json:"id"`
	From    user     `json:"from"`
	Message *message `json:"message"` // absent for inline messages; date 0 when inaccessible
	Data    string   `json:"data"`
}

type chatMember struct {
	Status string `json:"status"` // creator, administrator, member, restricted, left, kicked
	User   user   `json:"user"`
}

type chatMemberUpdated struct {
	Chat          chatInfo   `json:"chat"`
	From          user       `json:"from"`
	Date          int64      `json:"date"`
	OldChatMember chatMember `json:"old_chat_member"`
	NewChatMember chatMember `json:"new_chat_member"`
}

// inbound maps one update to a chat.Inbound, from structured fields only.
// me is the bot itself (getMe).
func inbound(u update, me *user) chat.Inbound {
	in := chat.Inbound{
		Platform:   chat.Telegram,
		Bot:        idString(me.ID),
		DeliveryID: idString(u.UpdateID),
		Kind:       chat.KindOther,
	}
	switch {
	case u.Message != nil:
		fillMessage(&in, u.Message, me)
		if in.Text != "" {
			in.Kind = chat.KindMessage
		}
	case u.EditedMessage != nil: // recorded, never acted on
		fillMessage(&in, u.EditedMessage, me)
	case u.ChannelPost != nil:
		fillMessage(&in, u.ChannelPost, me)
	case u.EditedChannelPost != nil:
		fillMessage(&in, u.EditedChannelPost, me)
	case u.CallbackQuery != nil:
		q := u.CallbackQuery
		in.Kind = chat.KindPress
		in.Sender = sender(&q.From)
		in.Lang = q.From.LanguageCode
		in.Press = &chat.Press{ID: q.ID, Data: q.Data}
		if m := q.Message; m != nil {
			in.Chat = chatOf(m.Chat)
			in.MessageID = idString(m.MessageID)
			in.Press.MessageID = in.MessageID
			in.Sender.IsChat = m.Chat.Type == "private" && q.From.ID == m.Chat.ID
		}
	case u.MyChatMember != nil:
		c := u.MyChatMember
		in.Chat = chatOf(c.Chat)
		in.Sender = sender(&c.From)
		in.At = unix(c.Date)
		if c.Chat.Type != "private" && c.NewChatMember.User.ID == me.ID &&
			present(c.NewChatMember.Status) && !present(c.OldChatMember.Status) {
			in.Kind = chat.KindJoin
		}
	}
	return in
}

// present reports a member status in which the bot is in the chat.
func present(status string) bool {
	return status == "member" || status == "administrator" || status == "creator"
}

func fillMessage(in *chat.Inbound, m *message, me *user) {
	in.Chat = chatOf(m.Chat)
	in.MessageID = idString(m.MessageID)
	in.At = unix(m.Date)
	in.Text, in.Mentioned = m.Text, mentions(m.Text, m.Entities, me)
	if in.Text == "" {
		in.Text, in.Mentioned = m.Caption, mentions(m.Caption, m.CaptionEntities, me)
	}
	if r := m.ReplyToMessage; r != nil && r.From != nil && r.From.ID == me.ID {
		in.Mentioned = true
	}
	if m.From != nil {
		in.Sender = sender(m.From)
		in.Lang = m.From.LanguageCode
	}
	if m.SenderChat != nil {
		// Sent on behalf of a chat (a channel, an anonymous admin): the
		// from field, when present, is a placeholder bot.
		in.Sender.Bot = true
		in.Sender.Name = m.SenderChat.Title
	}
	in.Sender.IsChat = m.Chat.Type == "private" && m.From != nil && m.From.ID == m.Chat.ID &&
		m.SenderChat == nil && m.BusinessConnectionID == "" && m.ViaBot == nil
	in.Forwarded = len(m.ForwardOrigin) > 0 && string(m.ForwardOrigin) != "null" ||
		m.ForwardFrom != nil || m.ForwardFromChat != nil || m.ForwardSenderName != "" || m.IsAutomaticForward
	if m.Quote != nil {
		in.Quoted = m.Quote.Text
	}
}

func sender(u *user) chat.Sender {
	return chat.Sender{ID: idString(u.ID), Name: fullName(u), Bot: u.IsBot}
}

func chatOf(c chatInfo) chat.Chat {
	return chat.Chat{ID: idString(c.ID), Direct: c.Type == "private", Title: c.Title}
}

func fullName(u *user) string {
	return strings.TrimSpace(u.FirstName + " " + u.LastName)
}

func unix(sec int64) time.Time {
	if sec <= 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0)
}

// mentions reports whether entities name the bot: a "mention" entity whose
// text is "@" + its username (usernames ignore case), a "text_mention" of
// its user id, or a "bot_command" addressed to it ("/start@name").
// Offsets and lengths count UTF-16 code units, as Telegram does.
func mentions(text string, entities []entity, me *user) bool {
	if len(entities) == 0 {
		return false
	}
	units := utf16.Encode([]rune(text))
	at := "@" + strings.ToLower(me.Username)
	for _, e := range entities {
		switch e.Type {
		case "text_mention":
			if e.User != nil && e.User.ID == me.ID {
				return true
			}
		case "mention", "bot_command":
			if me.Username == "" || e.Offset < 0 || e.Length <= 0 || e.Offset+e.Length > len(units) {
				continue
			}
			s := strings.ToLower(string(utf16.Decode(units[e.Offset : e.Offset+e.Length])))
			if e.Type == "mention" && s == at || e.Type == "bot_command" && strings.HasSuffix(s, at) {
				return true
			}
		}
	}
	return false
}
