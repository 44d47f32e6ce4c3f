package telegramtest

import (
	"strings"
	"time"
	"unicode/utf16"
)

// User is a Telegram user (or bot).
type User struct {
	ID        int64
	FirstName string
	LastName  string
	Username  string
	IsBot     bool
	// LanguageCode is the user's client language ("zh-hans"); Telegram
	// leaves it out when it does not know it.
	LanguageCode string
}

func (u User) json() map[string]any {
	m := map[string]any{"id": u.ID, "is_bot": u.IsBot, "first_name": u.FirstName}
	putText(m, "language_code", u.LanguageCode)
	putText(m, "last_name", u.LastName)
	putText(m, "username", u.Username)
	return m
}

// putText sets m[key] to v unless v is empty: Telegram leaves an optional
// string out rather than send it empty.
func putText(m map[string]any, key, v string) {
	if v != "" {
		m[key] = v
	}
}

// Chat is a Telegram chat. Type is "private", "group", "supergroup" or
// "channel".
type Chat struct {
	ID    int64
	Type  string
	Title string
}

// Private is u's private chat with the bot: its id is u's id.
func Private(u User) Chat {
	return Chat{ID: u.ID, Type: "private"}
}

// Group is a supergroup (ids of supergroups start with -100).
func Group(id int64, title string) Chat {
	return Chat{ID: id, Type: "supergroup", Title: title}
}

func (c Chat) json() map[string]any {
	m := map[string]any{"id": c.ID, "type": c.Type}
	putText(m, "title", c.Title)
	return m
}

// Message is a message someone writes to the bot.
type Message struct {
	From User
	// Chat is where it is written; zero means From's private chat.
	Chat Chat
	// Text gets the entities Telegram would give it: "mention" for each
	// @username, "bot_command" for a leading /command (offsets in UTF-16
	// units), unless Entities is set.
	Text     string
	Entities []Entity
	// ReplyTo is the id of a message in the same chat this one answers
	// (one the bot sent or one said with Say).
	ReplyTo int64
	// Quote is the quoted part of the replied-to message.
	Quote string
	// ForwardFrom makes the message a forward of this user's message.
	ForwardFrom *User
	// SenderChat: sent on behalf of this chat (a channel, an anonymous
	// admin of the group).
	SenderChat *Chat
	// ViaBot: sent through this inline bot.
	ViaBot *User
	// BusinessConnectionID: sent by a business account's connected bot.
	BusinessConnectionID string
}

// Entity is a message entity; Offset and Length count UTF-16 units.
type Entity struct {
	Type   string
	Offset int
	Length int
	User   *User // text_mention
}

func (e Entity) json() map[string]any {
	m := map[string]any{"type": e.Type, "offset": e.Offset, "length": e.Length}
	if e.User != nil {
		m["user"] = e.User.json()
	}
	return m
}

// Entities computes what Telegram marks in text: a "mention" for each
// @username (5 to 32 letters, digits or underscores, not inside a word)
// and a "bot_command" for a /command at the start, with UTF-16 offsets.
func Entities(text string) []Entity {
	var out []Entity
	runes := []rune(text)
	unit := func(i int) int { return len(utf16.Encode(runes[:i])) }
	word := func(r rune) bool {
		return r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	for i := 0; i < len(runes); i++ {
		if runes[i] != '@' && (runes[i] != '/' || i != 0) {
			continue
		}
		if i > 0 && word(runes[i-1]) {
			continue
		}
		j := i + 1
		for j < len(runes) && word(runes[j]) {
			j++
		}
		if runes[i] == '/' {
			if j == i+1 {
				continue
			}
			if j < len(runes) && runes[j] == '@' { // /cmd@botname
				k := j + 1
				for k < len(runes) && word(runes[k]) {
					k++
				}
				j = k
			}
			out = append(out, Entity{Type: "bot_command", Offset: unit(i), Length: unit(j) - unit(i)})
			i = j - 1
			continue
		}
		if n := j - i - 1; n >= 5 && n <= 32 {
			out = append(out, Entity{Type: "mention", Offset: unit(i), Length: unit(j) - unit(i)})
		}
		i = j - 1
	}
	return out
}

func (s *Server) messageJSON(id int64, from *User, chat Chat, m Message) map[string]any {
	msg := map[string]any{"message_id": id, "date": time.Now().Unix(), "chat": chat.json()}
	if from != nil {
		msg["from"] = from.json()
	}
	if m.Text != "" {
		msg["text"] = m.Text
		ents := m.Entities
		if ents == nil {
			ents = Entities(m.Text)
		}
		putEntities(msg, ents)
	}
	if m.ReplyTo != 0 {
		if r, ok := s.messages[msgKey{chat.ID, m.ReplyTo}]; ok {
			msg["reply_to_message"] = r.json()
		}
	}
	if m.Quote != "" {
		msg["quote"] = map[string]any{"text": m.Quote, "position": 0}
	}
	if f := m.ForwardFrom; f != nil {
		msg["forward_origin"] = map[string]any{"type": "user", "sender_user": f.json(), "date": time.Now().Add(-time.Hour).Unix()}
	}
	if c := m.SenderChat; c != nil {
		msg["sender_chat"] = c.json()
	}
	if v := m.ViaBot; v != nil {
		msg["via_bot"] = v.json()
	}
	putText(msg, "business_connection_id", m.BusinessConnectionID)
	return msg
}

// putEntities sets msg's "entities" to ents, unless there are none.
func putEntities(msg map[string]any, ents []Entity) {
	if len(ents) == 0 {
		return
	}
	list := make([]any, len(ents))
	for i, e := range ents {
		list[i] = e.json()
	}
	msg["entities"] = list
}

// Sent names what Say queued.
type Sent struct {
	UpdateID  int64
	MessageID int64
}

// Say queues a new message (a "channel_post" in a channel, a "message"
// elsewhere) and returns its update and message ids.
func (s *Server) Say(m Message) Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	chat := m.Chat
	if chat.ID == 0 {
		chat = Private(m.From)
	}
	s.chats[chat.ID] = chat
	from := &m.From
	if chat.Type == "channel" {
		from = nil
	}
	id := s.nextMessageID(chat.ID)
	msg := s.messageJSON(id, from, chat, m)
	s.messages[msgKey{chat.ID, id}] = &stored{raw: msg}
	kind := "message"
	if chat.Type == "channel" {
		kind = "channel_post"
	}
	return Sent{UpdateID: s.queue(map[string]any{kind: msg}), MessageID: id}
}

// EditMessage queues an edit of a message said earlier (edited_message,
// or edited_channel_post in a channel) with new text.
func (s *Server) EditMessage(chatID, messageID int64, text string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg := map[string]any{}
	if old, ok := s.messages[msgKey{chatID, messageID}]; ok {
		for k, v := range old.raw {
			msg[k] = v
		}
	}
	msg["text"], msg["edit_date"] = text, time.Now().Unix()
	delete(msg, "entities")
	putEntities(msg, Entities(text))
	kind := "edited_message"
	if s.chats[chatID].Type == "channel" {
		kind = "edited_channel_post"
	}
	return s.queue(map[string]any{kind: msg})
}

// Press is a button press.
type Press struct {
	From User
	// MessageID is the message whose button is pressed.
	MessageID int64
	// Chat is where that message is; zero means the chat of the message
	// the bot sent with MessageID (the fake looks it up; a forged press
	// may name another chat).
	Chat Chat
	Data string
}

// Press queues a callback_query and returns its update id and query id.
func (s *Server) Press(p Press) (updateID int64, queryID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	chat := p.Chat
	if chat.ID == 0 {
		for k, m := range s.messages {
			if k.id == p.MessageID && m.fromBot {
				chat = s.chats[k.chat]
				break
			}
		}
	}
	var msg map[string]any
	if m, ok := s.messages[msgKey{chat.ID, p.MessageID}]; ok {
		msg = m.json()
	} else {
		msg = map[string]any{"message_id": p.MessageID, "date": time.Now().Unix(), "chat": chat.json()}
	}
	s.nextQuery++
	queryID = "cq" + strings.Repeat("0", 3) + itoa(s.nextQuery)
	s.queries[queryID] = false
	q := map[string]any{
		"id": queryID, "from": p.From.json(), "message": msg,
		"chat_instance": "-" + itoa(chat.ID*7+13), "data": p.Data,
	}
	return s.queue(map[string]any{"callback_query": q}), queryID
}

// Join queues a my_chat_member update: by added the bot to chat.
func (s *Server) Join(chat Chat, by User) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats[chat.ID] = chat
	delete(s.left, chat.ID)
	return s.queue(map[string]any{"my_chat_member": map[string]any{
		"chat": chat.json(), "from": by.json(), "date": time.Now().Unix(),
		"old_chat_member": map[string]any{"status": "left", "user": s.bot.json()},
		"new_chat_member": map[string]any{"status": "member", "user": s.bot.json()},
	}})
}

// Push queues an update given as JSON fields (without update_id, which
// Push sets) and returns its update id: for shapes the helpers above do
// not make.
func (s *Server) Push(fields map[string]any) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queue(fields)
}
