package telegramtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

type inlineButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

type inlineKeyboard struct {
	InlineKeyboard [][]inlineButton `json:"inline_keyboard"`
}

// answer is a method's outcome: a result, or an error answer.
type answer struct {
	result      any
	code        int
	description string
	retryAfter  int
	body        string
}

func ok(result any) answer { return answer{result: result} }

func refuse(code int, description string) answer {
	return answer{code: code, description: description}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rest, found := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, slash := strings.Cut(rest, "/")
	if !found || !slash || method == "" {
		write(w, refuse(http.StatusNotFound, "Not Found"))
		return
	}
	if token != s.token {
		write(w, refuse(http.StatusUnauthorized, "Unauthorized"))
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}

	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: method, Body: json.RawMessage(body), At: time.Now()})
	s.notify()
	var lost *Failure // an accepted call whose answer is lost
	if f := s.failures[method]; len(f) > 0 {
		s.failures[method] = f[1:]
		if !f[0].Accepted {
			s.mu.Unlock()
			write(w, answer{code: f[0].Code, description: f[0].Description, retryAfter: f[0].RetryAfter, body: f[0].Body})
			return
		}
		lost = &f[0]
	}
	if method == "getUpdates" {
		// Confirm under the same lock that recorded the call, so a test
		// that saw the call sees the updates before its offset gone.
		var p struct {
			Offset int64 `json:"offset"`
		}
		if json.Unmarshal(body, &p) == nil && p.Offset > 0 {
			s.confirmLocked(p.Offset)
		}
		s.mu.Unlock()
		write(w, s.getUpdates(r, body))
		return
	}
	defer s.mu.Unlock()
	var a answer
	switch method {
	case "getMe":
		me := s.bot.json()
		me["can_join_groups"], me["can_read_all_group_messages"], me["supports_inline_queries"] = true, false, false
		a = ok(me)
	case "getWebhookInfo":
		a = ok(map[string]any{"url": "", "has_custom_certificate": false, "pending_update_count": len(s.updates)})
	case "sendMessage":
		a = s.sendMessage(body)
	case "editMessageText":
		a = s.editMessageText(body)
	case "answerCallbackQuery":
		a = s.answerCallbackQuery(body)
	case "sendChatAction":
		a = s.chatCall(body, false)
	case "leaveChat":
		a = s.chatCall(body, true)
	default:
		a = refuse(http.StatusNotFound, "Not Found")
	}
	if lost != nil {
		a = answer{code: lost.Code, description: lost.Description, retryAfter: lost.RetryAfter, body: lost.Body}
	}
	write(w, a)
}

func write(w http.ResponseWriter, a answer) {
	if a.body != "" {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(a.code)
		io.WriteString(w, a.body)
		return
	}
	env := map[string]any{"ok": a.code == 0}
	status := http.StatusOK
	if a.code != 0 {
		status = a.code
		env["error_code"], env["description"] = a.code, a.description
		if a.retryAfter > 0 {
			env["parameters"] = map[string]any{"retry_after": a.retryAfter}
		}
	} else {
		env["result"] = a.result
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(env)
}

// getUpdates answers a long poll. A newer poll ends a held one with 409,
// as Telegram does when two clients poll for one bot.
func (s *Server) getUpdates(r *http.Request, body []byte) answer {
	var p struct {
		Offset         int64    `json:"offset"`
		Limit          int      `json:"limit"`
		Timeout        int      `json:"timeout"`
		AllowedUpdates []string `json:"allowed_updates"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return refuse(http.StatusBadRequest, "Bad Request: can't parse JSON object")
	}
	if p.Limit <= 0 || p.Limit > 100 {
		p.Limit = 100
	}
	s.mu.Lock()
	if s.polling != nil {
		close(s.polling)
	}
	mine := make(chan struct{})
	s.polling = mine
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.polling == mine {
			s.polling = nil
		}
		s.mu.Unlock()
	}()

	timer := time.NewTimer(time.Duration(p.Timeout) * time.Second)
	defer timer.Stop()
	for {
		s.mu.Lock()
		var batch []json.RawMessage
		for _, u := range s.updates {
			if len(batch) < p.Limit && allowed(u.raw, p.AllowedUpdates) {
				batch = append(batch, u.raw)
			}
		}
		changed := s.changed
		s.mu.Unlock()
		if len(batch) > 0 || p.Timeout <= 0 {
			if batch == nil {
				batch = []json.RawMessage{}
			}
			return ok(batch)
		}
		select {
		case <-mine:
			return refuse(http.StatusConflict, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
		case <-r.Context().Done():
			return ok([]json.RawMessage{})
		case <-timer.C:
			return ok([]json.RawMessage{})
		case <-changed:
		}
	}
}

// confirmLocked forgets the updates before offset, as Telegram does when
// a getUpdates call names it; s.mu is held.
func (s *Server) confirmLocked(offset int64) {
	kept := s.updates[:0]
	for _, u := range s.updates {
		if u.id >= offset {
			kept = append(kept, u)
		}
	}
	s.updates = kept
}

// allowed reports whether an update's kind is in the list (an empty list
// allows every kind but the few Telegram sends only on request).
func allowed(raw json.RawMessage, list []string) bool {
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(raw, &fields)
	for k := range fields {
		if k == "update_id" {
			continue
		}
		if len(list) == 0 {
			return k != "chat_member" && k != "message_reaction"
		}
		return contains(list, k)
	}
	return false
}

// chatID reads chat_id, a number or a numeric string.
func chatID(raw json.RawMessage) (int64, bool) {
	var n int64
	if json.Unmarshal(raw, &n) == nil {
		return n, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// chatParams decodes a method's JSON body into p and returns the chat
// its chat_id (chatID, a field of p) names; a non-nil answer refuses the
// call as Telegram does. s.mu is held.
func (s *Server) chatParams(body []byte, p any, chatID *json.RawMessage) (Chat, *answer) {
	if err := json.Unmarshal(body, p); err != nil {
		a := refuse(http.StatusBadRequest, "Bad Request: can't parse JSON object")
		return Chat{}, &a
	}
	return s.knownChat(*chatID)
}

// knownChat checks chat_id; s.mu is held.
func (s *Server) knownChat(raw json.RawMessage) (Chat, *answer) {
	id, good := chatID(raw)
	if !good {
		a := refuse(http.StatusBadRequest, "Bad Request: chat_id is empty")
		return Chat{}, &a
	}
	c, known := s.chats[id]
	if !known {
		a := refuse(http.StatusBadRequest, "Bad Request: chat not found")
		return Chat{}, &a
	}
	if s.left[id] {
		a := refuse(http.StatusForbidden, "Forbidden: bot is not a member of the "+c.Type+" chat")
		return Chat{}, &a
	}
	return c, nil
}

func checkKeyboard(raw json.RawMessage) (*inlineKeyboard, *answer) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var kb inlineKeyboard
	if err := json.Unmarshal(raw, &kb); err != nil {
		a := refuse(http.StatusBadRequest, "Bad Request: can't parse reply keyboard markup JSON object")
		return nil, &a
	}
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			if b.Text == "" {
				a := refuse(http.StatusBadRequest, "Bad Request: text buttons are unallowed in the inline keyboard")
				return nil, &a
			}
			if n := len(b.CallbackData); n == 0 || n > 64 {
				a := refuse(http.StatusBadRequest, "Bad Request: BUTTON_DATA_INVALID")
				return nil, &a
			}
		}
	}
	if len(kb.InlineKeyboard) == 0 {
		return nil, nil
	}
	return &kb, nil
}

func checkText(text string) *answer {
	if strings.TrimSpace(text) == "" {
		a := refuse(http.StatusBadRequest, "Bad Request: message text is empty")
		return &a
	}
	if len(utf16.Encode([]rune(text))) > 4096 {
		a := refuse(http.StatusBadRequest, "Bad Request: message is too long")
		return &a
	}
	return nil
}

func (s *Server) sendMessage(body []byte) answer {
	var p struct {
		ChatID          json.RawMessage `json:"chat_id"`
		Text            string          `json:"text"`
		ReplyParameters *struct {
			MessageID                int64 `json:"message_id"`
			AllowSendingWithoutReply bool  `json:"allow_sending_without_reply"`
		} `json:"reply_parameters"`
		ReplyMarkup json.RawMessage `json:"reply_markup"`
	}
	c, bad := s.chatParams(body, &p, &p.ChatID)
	if bad != nil {
		return *bad
	}
	if bad := checkText(p.Text); bad != nil {
		return *bad
	}
	kb, bad := checkKeyboard(p.ReplyMarkup)
	if bad != nil {
		return *bad
	}
	id := s.nextMessageID(c.ID)
	bot := s.bot
	msg := map[string]any{"message_id": id, "from": bot.json(), "chat": c.json(), "date": time.Now().Unix(), "text": p.Text}
	if rp := p.ReplyParameters; rp != nil {
		if r, found := s.messages[msgKey{c.ID, rp.MessageID}]; found {
			msg["reply_to_message"] = r.json()
		} else if !rp.AllowSendingWithoutReply {
			return refuse(http.StatusBadRequest, "Bad Request: message to be replied not found")
		}
	}
	if kb != nil {
		msg["reply_markup"] = *kb
	}
	k := msgKey{c.ID, id}
	s.messages[k] = &stored{raw: msg, fromBot: true}
	s.sentOrder = append(s.sentOrder, k)
	return ok(msg)
}

func (s *Server) editMessageText(body []byte) answer {
	var p struct {
		ChatID      json.RawMessage `json:"chat_id"`
		MessageID   int64           `json:"message_id"`
		Text        string          `json:"text"`
		ReplyMarkup json.RawMessage `json:"reply_markup"`
	}
	c, bad := s.chatParams(body, &p, &p.ChatID)
	if bad != nil {
		return *bad
	}
	m, found := s.messages[msgKey{c.ID, p.MessageID}]
	if !found {
		return refuse(http.StatusBadRequest, "Bad Request: message to edit not found")
	}
	if !m.fromBot {
		return refuse(http.StatusBadRequest, "Bad Request: message can't be edited")
	}
	if bad := checkText(p.Text); bad != nil {
		return *bad
	}
	kb, bad := checkKeyboard(p.ReplyMarkup)
	if bad != nil {
		return *bad
	}
	oldKB, _ := m.raw["reply_markup"].(inlineKeyboard)
	var newKB inlineKeyboard
	if kb != nil {
		newKB = *kb
	}
	oldJSON, _ := json.Marshal(oldKB)
	newJSON, _ := json.Marshal(newKB)
	if m.raw["text"] == p.Text && bytes.Equal(oldJSON, newJSON) {
		return refuse(http.StatusBadRequest, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	m.raw["text"], m.raw["edit_date"] = p.Text, time.Now().Unix()
	delete(m.raw, "reply_markup")
	if kb != nil {
		m.raw["reply_markup"] = *kb
	}
	m.edits++
	return ok(m.json())
}

func (s *Server) answerCallbackQuery(body []byte) answer {
	var p struct {
		ID   string `json:"callback_query_id"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return refuse(http.StatusBadRequest, "Bad Request: can't parse JSON object")
	}
	if answered, found := s.queries[p.ID]; !found || answered {
		return refuse(http.StatusBadRequest, "Bad Request: query is too old and response timeout expired or query ID is invalid")
	}
	if len(p.Text) > 200 {
		return refuse(http.StatusBadRequest, "Bad Request: MESSAGE_TOO_LONG")
	}
	s.queries[p.ID] = true
	return ok(true)
}

// chatCall is sendChatAction, or leaveChat when leave is set.
func (s *Server) chatCall(body []byte, leave bool) answer {
	var p struct {
		ChatID json.RawMessage `json:"chat_id"`
		Action string          `json:"action"`
	}
	c, bad := s.chatParams(body, &p, &p.ChatID)
	if bad != nil {
		return *bad
	}
	if leave {
		if c.Type == "private" {
			return refuse(http.StatusBadRequest, "Bad Request: chat member status can't be changed in private chats")
		}
		s.left[c.ID] = true
		return ok(true)
	}
	if p.Action != "typing" && p.Action != "upload_document" && p.Action != "upload_photo" {
		return refuse(http.StatusBadRequest, "Bad Request: wrong parameter action in request")
	}
	return ok(true)
}
