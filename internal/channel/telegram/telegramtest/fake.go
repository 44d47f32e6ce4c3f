// Package telegramtest is a fake Telegram Bot API server for tests of the
// telegram adapter, of app and of the built binary. It speaks the real
// shapes (POST /bot<token>/<method> with JSON, answers
// {"ok":true,"result":…} or {"ok":false,"error_code":…,"description":…,
// "parameters":{"retry_after":…}}), queues scripted updates for
// getUpdates and forgets them only when a later call's offset confirms
// them, records every call with its JSON body, and keeps the messages the
// bot sent (with edits) so presses and replies can point at them.
//
// What it imitates of Telegram: 401 for a wrong token, 404 for an unknown
// method, 409 to a long poll that a newer getUpdates replaced (two pollers
// for one bot), "chat not found" for a chat it never saw, the 4096-unit
// text limit, 1–64 bytes of callback_data, "message is not modified",
// query ids answered once. Failures (429 with retry_after, 5xx, a body
// that is not JSON) are scripted with Fail.
package telegramtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultToken is the token the fake accepts unless Options say otherwise.
const DefaultToken = "7000000001:AAFakeTokenForTestsOnly_abcdefghijkl"

// DefaultBot is the bot the fake answers getMe with.
var DefaultBot = User{ID: 7000000001, FirstName: "Homard", Username: "homard_test_bot", IsBot: true}

// Options configure a Server; zero fields take the defaults above.
type Options struct {
	Token string
	Bot   User
}

// Call is one request the fake received.
type Call struct {
	Method string
	Body   json.RawMessage // the JSON body as sent
	At     time.Time       // when the fake received it
}

// Params decodes the body into a map (numbers as json.Number).
func (c Call) Params() map[string]any {
	m := map[string]any{}
	dec := json.NewDecoder(strings.NewReader(string(c.Body)))
	dec.UseNumber()
	_ = dec.Decode(&m)
	return m
}

// Failure is a scripted error answer.
type Failure struct {
	Code        int    // error_code and HTTP status, e.g. 429, 502
	Description string // e.g. "Too Many Requests: retry after 3"
	RetryAfter  int    // parameters.retry_after, seconds (0: none)
	// Body, when set, is sent instead of the Bot API JSON (a proxy's
	// HTML page, say).
	Body string
	// Accepted: the call takes effect (the message is sent) and only its
	// answer is this failure, as when a proxy or the network loses
	// Telegram's answer. Not for getUpdates.
	Accepted bool
}

// Button is one inline keyboard button of a sent message.
type Button struct {
	Text string
	Data string
}

// SentMessage is a message the bot sent, as it stands after edits.
type SentMessage struct {
	ID      int64
	Text    string
	Buttons []Button
	ReplyTo int64
	Edits   int
}

type msgKey struct{ chat, id int64 }

type stored struct {
	raw     map[string]any
	fromBot bool
	edits   int
}

func (m *stored) json() map[string]any {
	c := make(map[string]any, len(m.raw))
	for k, v := range m.raw {
		c[k] = v
	}
	return c
}

type queued struct {
	id  int64
	raw json.RawMessage
}

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	// URL is the API base to give the adapter (telegram.Options.APIBase).
	URL string

	token string
	bot   User
	srv   *httptest.Server

	mu         sync.Mutex // guards everything below
	updates    []queued
	all        map[int64]json.RawMessage // every update queued, by id
	nextUpdate int64
	nextMsg    int64
	nextQuery  int64
	chats      map[int64]Chat
	left       map[int64]bool
	messages   map[msgKey]*stored
	sentOrder  []msgKey
	queries    map[string]bool // callback query id → answered
	calls      []Call
	failures   map[string][]Failure
	polling    chan struct{} // closed to end the held long poll with 409
	changed    chan struct{} // closed and replaced on every change
}

// New starts a fake server; Close stops it.
func New(o Options) *Server {
	s := &Server{
		token:      o.Token,
		bot:        o.Bot,
		nextUpdate: 100000,
		nextMsg:    1000,
		chats:      map[int64]Chat{},
		all:        map[int64]json.RawMessage{},
		left:       map[int64]bool{},
		messages:   map[msgKey]*stored{},
		queries:    map[string]bool{},
		failures:   map[string][]Failure{},
		changed:    make(chan struct{}),
	}
	if s.token == "" {
		s.token = DefaultToken
	}
	if s.bot.ID == 0 {
		s.bot = DefaultBot
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server, ending any held long poll.
func (s *Server) Close() { s.srv.CloseClientConnections(); s.srv.Close() }

// Token is the token the fake accepts.
func (s *Server) Token() string { return s.token }

// Bot is the bot's own user.
func (s *Server) Bot() User { return s.bot }

// AddChat makes a chat known (sendMessage to an unknown chat is "chat not
// found"), as if its user had written to the bot before.
func (s *Server) AddChat(c Chat) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats[c.ID] = c
}

// Fail scripts the next call of method (in order, one Failure per call).
func (s *Server) Fail(method string, f ...Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[method] = append(s.failures[method], f...)
}

// Calls returns the calls received so far, of the given methods only when
// any are named.
func (s *Server) Calls(methods ...string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.callsLocked(methods)
}

func (s *Server) callsLocked(methods []string) []Call {
	var out []Call
	for _, c := range s.calls {
		if len(methods) == 0 || contains(methods, c.Method) {
			out = append(out, c)
		}
	}
	return out
}

// WaitCalls waits until at least n calls of method were received, and
// returns them all; it fails when ctx ends first.
func (s *Server) WaitCalls(ctx context.Context, method string, n int) ([]Call, error) {
	return waitFor(ctx, s, n, func() []Call { return s.Calls(method) })
}

// Pending returns the ids of updates not yet confirmed by an offset.
func (s *Server) Pending() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int64, len(s.updates))
	for i, u := range s.updates {
		ids[i] = u.id
	}
	return ids
}

// Messages returns what the bot sent to chatID, in order, after edits.
func (s *Server) Messages(chatID int64) []SentMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []SentMessage
	for _, k := range s.sentOrder {
		if k.chat != chatID {
			continue
		}
		m := s.messages[k]
		sm := SentMessage{ID: k.id, Edits: m.edits}
		sm.Text, _ = m.raw["text"].(string)
		if r, ok := m.raw["reply_to_message"].(map[string]any); ok {
			sm.ReplyTo, _ = r["message_id"].(int64)
		}
		if kb, ok := m.raw["reply_markup"].(inlineKeyboard); ok {
			for _, row := range kb.InlineKeyboard {
				for _, b := range row {
					sm.Buttons = append(sm.Buttons, Button{Text: b.Text, Data: b.CallbackData})
				}
			}
		}
		out = append(out, sm)
	}
	return out
}

// WaitMessages waits until the bot sent at least n messages to chatID and
// returns them (as Messages does); it fails when ctx ends first.
func (s *Server) WaitMessages(ctx context.Context, chatID int64, n int) ([]SentMessage, error) {
	return waitFor(ctx, s, n, func() []SentMessage { return s.Messages(chatID) })
}

// waitFor calls get (which takes s.mu itself) at once and at each change
// of s until it returns at least n items, and returns them; it fails,
// with what it last got, when ctx ends first.
func waitFor[T any](ctx context.Context, s *Server, n int, get func() []T) ([]T, error) {
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		got := get()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return got, ctx.Err()
		case <-changed:
		}
	}
}

// Left reports whether the bot left chatID (leaveChat).
func (s *Server) Left(chatID int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.left[chatID]
}

// queue adds an update; s.mu is held.
func (s *Server) queue(fields map[string]any) int64 {
	s.nextUpdate++
	fields["update_id"] = s.nextUpdate
	raw, err := json.Marshal(fields)
	if err != nil {
		panic("telegramtest: update does not encode: " + err.Error())
	}
	s.updates = append(s.updates, queued{id: s.nextUpdate, raw: raw})
	s.all[s.nextUpdate] = raw
	s.notify()
	return s.nextUpdate
}

// Redeliver queues again an update queued earlier, with the same
// update_id and body, as Telegram does for an update it was not told to
// forget. A poll whose offset is past the id confirms it away unseen, as
// Telegram would; a poller that starts again (offset 0) gets it. It
// reports whether the update was known.
func (s *Server) Redeliver(updateID int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, ok := s.all[updateID]
	if !ok {
		return false
	}
	s.updates = append(s.updates, queued{id: updateID, raw: raw})
	s.notify()
	return true
}

// nextMessageID numbers messages. Telegram numbers them per chat; the fake
// numbers them across chats, so a message id alone names one message.
func (s *Server) nextMessageID(chat int64) int64 {
	s.nextMsg++
	return s.nextMsg
}

// notify wakes waiters; s.mu is held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
