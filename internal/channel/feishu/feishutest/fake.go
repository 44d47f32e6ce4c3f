// Package feishutest is a fake Feishu Open Platform for tests: an
// httptest server speaking the API shapes homard uses (tenant access
// token, bot info, im/v1 messages, reply, edit, chat info, leaving a
// chat) and the long connection (the ws endpoint and a websocket that
// sends protobuf frames: events, split payloads, pings, and records the
// client's acks). It is a fake of the platform, not the platform: it
// checks what homard relies on and nothing more.
package feishutest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/coder/websocket"

	"github.com/homard/homard/internal/channel/feishu/frame"
)

// Sent is one message a client posted (or replied with).
type Sent struct {
	ID       string // the message id the fake gave it
	ChatID   string // receive_id (empty on a reply)
	ReplyTo  string // the message replied to
	MsgType  string // text or interactive
	Content  string // the content JSON as sent
	UUID     string
	Attempts int // sends with this uuid (Feishu answers the first message again)
}

// Edit is one PATCH (card) or PUT (text) of a message.
type Edit struct {
	Method, MessageID, MsgType, Content string
}

// Server is the fake. Create it with New; Close it when done.
type Server struct {
	AppID, AppSecret string
	BotOpenID        string
	BotName          string
	// PingInterval is the ping interval (seconds) the ws endpoint tells
	// clients. Zero means 120, Feishu's usual value. Set it before the
	// client connects.
	PingInterval int

	srv *httptest.Server

	mu        sync.Mutex // guards everything below
	changed   chan struct{}
	tokens    map[string]bool
	issued    int
	sent      []*Sent
	byUUID    map[string]*Sent
	types     map[string]string // message id → msg_type
	edits     []Edit
	left      []string
	chatModes map[string]string
	rateLimit int // the next rateLimit sends answer 429
	resetSec  int
	conn      *websocket.Conn
	conns     int
	fromConn  []frame.Frame     // every frame the client wrote
	unacked   map[string][]byte // message_id → payload, until acked
	nextSeq   uint64
}

// New starts a fake with fixed credentials and bot identity.
func New() *Server {
	s := &Server{
		AppID: "cli_test", AppSecret: "secret-test",
		BotOpenID: "ou_bot", BotName: "homard-test",
		changed: make(chan struct{}),
		tokens:  map[string]bool{}, byUUID: map[string]*Sent{}, types: map[string]string{},
		chatModes: map[string]string{}, unacked: map[string][]byte{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the fake's base URL: pass it as Options.APIBase.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the fake and its websocket.
func (s *Server) Close() {
	s.Drop()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// notify wakes every waiter; the caller holds mu.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Wait blocks until cond (called with the fake's lock held) is true or ctx
// ends.
func (s *Server) wait(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ok, ch := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// SetChatMode sets what im/v1/chats/{chatID} answers as chat_mode (p2p,
// group). An unknown chat answers code 232011, as Feishu does for a chat
// the bot is not in.
func (s *Server) SetChatMode(chatID, mode string) {
	s.mu.Lock()
	s.chatModes[chatID] = mode
	s.mu.Unlock()
}

// RateLimit makes the next n sends answer HTTP 429 with code 99991400
// and x-ogw-ratelimit-reset: resetSec.
func (s *Server) RateLimit(n, resetSec int) {
	s.mu.Lock()
	s.rateLimit, s.resetSec = n, resetSec
	s.mu.Unlock()
}

// ExpireTokens makes every issued token invalid (code 99991663).
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	s.tokens = map[string]bool{}
	s.mu.Unlock()
}

// TokensIssued counts tenant access tokens handed out.
func (s *Server) TokensIssued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

// Sent returns copies of the messages posted so far.
func (s *Server) Sent() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Sent, len(s.sent))
	for i, m := range s.sent {
		out[i] = *m
	}
	return out
}

// Edits returns the edits so far.
func (s *Server) Edits() []Edit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Edit(nil), s.edits...)
}

// Left returns the chats the bot left.
func (s *Server) Left() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.left...)
}

type answer struct {
	Code int    `json:"code"`
	Msg  string `json:"msg"`
	Data any    `json:"data,omitempty"`
}

func reply(w http.ResponseWriter, status int, a any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(a)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/open-apis/auth/v3/tenant_access_token/internal" && r.Method == http.MethodPost:
		s.token(w, r)
	case p == "/callback/ws/endpoint" && r.Method == http.MethodPost:
		s.endpoint(w, r)
	case p == "/ws":
		s.websocket(w, r)
	case !s.authorized(r):
		reply(w, http.StatusBadRequest, answer{Code: 99991663, Msg: "Invalid access token for authorization. Please make a request with token attached."})
	case p == "/open-apis/bot/v3/info" && r.Method == http.MethodGet:
		reply(w, http.StatusOK, map[string]any{"code": 0, "msg": "ok",
			"bot": map[string]any{"activate_status": 2, "app_name": s.BotName, "open_id": s.BotOpenID}})
	case p == "/open-apis/im/v1/messages" && r.Method == http.MethodPost:
		s.send(w, r, "")
	case strings.HasPrefix(p, "/open-apis/im/v1/messages/") && strings.HasSuffix(p, "/reply") && r.Method == http.MethodPost:
		s.send(w, r, strings.TrimSuffix(strings.TrimPrefix(p, "/open-apis/im/v1/messages/"), "/reply"))
	case strings.HasPrefix(p, "/open-apis/im/v1/messages/"):
		s.message(w, r, strings.TrimPrefix(p, "/open-apis/im/v1/messages/"))
	case strings.HasPrefix(p, "/open-apis/im/v1/chats/"):
		s.chat(w, r, strings.TrimPrefix(p, "/open-apis/im/v1/chats/"))
	default:
		reply(w, http.StatusNotFound, answer{Code: 404, Msg: "the fake has no " + r.Method + " " + p})
	}
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	var in struct {
		AppID     string `json:"app_id"`
		AppSecret string `json:"app_secret"`
	}
	if json.NewDecoder(r.Body).Decode(&in) != nil || in.AppID != s.AppID {
		reply(w, http.StatusOK, answer{Code: 10003, Msg: "invalid param app_id"})
		return
	}
	if in.AppSecret != s.AppSecret {
		reply(w, http.StatusOK, answer{Code: 10014, Msg: "app secret invalid"})
		return
	}
	s.mu.Lock()
	s.issued++
	tok := fmt.Sprintf("t-%d", s.issued)
	s.tokens[tok] = true
	s.mu.Unlock()
	reply(w, http.StatusOK, map[string]any{"code": 0, "msg": "ok", "tenant_access_token": tok, "expire": 7200})
}

func (s *Server) authorized(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	defer s.mu.Unlock()
	return ok && s.tokens[tok]
}

func (s *Server) send(w http.ResponseWriter, r *http.Request, replyTo string) {
	var in struct {
		ReceiveID string `json:"receive_id"`
		MsgType   string `json:"msg_type"`
		Content   string `json:"content"`
		UUID      string `json:"uuid"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.MsgType == "" || !json.Valid([]byte(in.Content)) {
		reply(w, http.StatusBadRequest, answer{Code: 230001, Msg: "invalid message content"})
		return
	}
	if replyTo == "" && (r.URL.Query().Get("receive_id_type") != "chat_id" || in.ReceiveID == "") {
		reply(w, http.StatusBadRequest, answer{Code: 230001, Msg: "receive_id_type=chat_id and receive_id are required"})
		return
	}
	if len(in.UUID) > 50 {
		reply(w, http.StatusBadRequest, answer{Code: 230001, Msg: "uuid longer than 50 characters"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rateLimit > 0 {
		s.rateLimit--
		w.Header().Set("x-ogw-ratelimit-reset", fmt.Sprint(s.resetSec))
		reply(w, http.StatusTooManyRequests, answer{Code: 99991400, Msg: "request trigger frequency limit"})
		return
	}
	if m := s.byUUID[in.UUID]; in.UUID != "" && m != nil {
		m.Attempts++
		reply(w, http.StatusOK, answer{Data: map[string]string{"message_id": m.ID}})
		return
	}
	m := &Sent{ID: fmt.Sprintf("om_%d", len(s.sent)+1), ChatID: in.ReceiveID, ReplyTo: replyTo,
		MsgType: in.MsgType, Content: in.Content, UUID: in.UUID, Attempts: 1}
	s.sent = append(s.sent, m)
	s.types[m.ID] = m.MsgType
	if in.UUID != "" {
		s.byUUID[in.UUID] = m
	}
	s.notify()
	reply(w, http.StatusOK, answer{Data: map[string]string{"message_id": m.ID, "chat_id": in.ReceiveID, "msg_type": in.MsgType}})
}

func (s *Server) message(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	typ, ok := s.types[id]
	s.mu.Unlock()
	if !ok {
		reply(w, http.StatusBadRequest, answer{Code: 230011, Msg: "the message is not found"})
		return
	}
	var in struct {
		MsgType string `json:"msg_type"`
		Content string `json:"content"`
	}
	switch r.Method {
	case http.MethodGet:
		// Every message the fake knows was sent by the app.
		reply(w, http.StatusOK, answer{Data: map[string]any{"items": []map[string]any{{
			"message_id": id, "msg_type": typ,
			"sender": map[string]string{"id": s.AppID, "id_type": "app_id", "sender_type": "app"},
		}}}})
		return
	case http.MethodPatch, http.MethodPut:
		if json.NewDecoder(r.Body).Decode(&in) != nil || !json.Valid([]byte(in.Content)) {
			reply(w, http.StatusBadRequest, answer{Code: 230001, Msg: "invalid content"})
			return
		}
	default:
		reply(w, http.StatusMethodNotAllowed, answer{Code: 405, Msg: "method not allowed"})
		return
	}
	// Feishu: PATCH edits cards only; PUT edits text and post messages only.
	if (r.Method == http.MethodPatch) != (typ == "interactive") {
		reply(w, http.StatusBadRequest, answer{Code: 230001, Msg: r.Method + " cannot edit a " + typ + " message"})
		return
	}
	s.mu.Lock()
	s.edits = append(s.edits, Edit{Method: r.Method, MessageID: id, MsgType: in.MsgType, Content: in.Content})
	s.notify()
	s.mu.Unlock()
	reply(w, http.StatusOK, answer{})
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request, rest string) {
	id, members := strings.CutSuffix(rest, "/members")
	switch {
	case r.Method == http.MethodGet && !members:
		s.mu.Lock()
		mode, ok := s.chatModes[id]
		s.mu.Unlock()
		if !ok {
			reply(w, http.StatusBadRequest, answer{Code: 232011, Msg: "operator is not in the chat"})
			return
		}
		reply(w, http.StatusOK, answer{Data: map[string]string{"chat_mode": mode, "name": "chat " + id}})
	case r.Method == http.MethodDelete && members:
		var in struct {
			IDList []string `json:"id_list"`
		}
		if r.URL.Query().Get("member_id_type") != "app_id" || json.NewDecoder(r.Body).Decode(&in) != nil ||
			len(in.IDList) != 1 || in.IDList[0] != s.AppID {
			reply(w, http.StatusBadRequest, answer{Code: 232001, Msg: "member_id_type=app_id and the app's id are required"})
			return
		}
		s.mu.Lock()
		s.left = append(s.left, id)
		s.notify()
		s.mu.Unlock()
		reply(w, http.StatusOK, answer{})
	default:
		reply(w, http.StatusNotFound, answer{Code: 404, Msg: "the fake has no " + r.Method + " chats/" + rest})
	}
}
