// Package discordtest is a fake of Discord for tests: an httptest server
// speaking the REST shapes the discord adapter uses (/users/@me,
// /gateway and /gateway/bot, channel messages with enforce_nonce, typing,
// interaction callbacks, leaving a guild) and a websocket gateway speaking
// the real handshake (HELLO op 10 with heartbeat_interval, IDENTIFY op 2 →
// READY op 0 with the user and a session_id, heartbeat op 1 → ACK op 11,
// RESUME op 6 → the missed dispatches and RESUMED, dispatches op 0 with a
// rising sequence "s").
//
// It records every REST call, answers scripted 429s and 5xx, and sends
// scripted gateway events. It is a fake: it checks the shapes homard sends,
// not everything Discord would refuse.
package discordtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/gorilla/websocket"
)

// APIPath is where the fake serves REST, as Discord's /api/v10.
const APIPath = "/api/v10"

// Options configure a Server.
type Options struct {
	// Token is the bot token the fake accepts (sent as "Bot <token>").
	// Zero means "test-token".
	Token string
	// BotID and Username are the bot's user. Zero means "100" and
	// "homard".
	BotID, Username string
	// HeartbeatMillis is the heartbeat_interval in HELLO. Zero means
	// 41250 (Discord's usual value).
	HeartbeatMillis int
}

// Call is one REST request the fake received.
type Call struct {
	Method string
	Path   string // without APIPath, e.g. /channels/7/messages
	// Authorized: the Authorization header held the right token.
	Authorized bool
	Body       json.RawMessage
}

// Identify is what the client sent in IDENTIFY.
type Identify struct {
	Token   string `json:"token"`
	Intents int    `json:"intents"`
}

// Server is the fake. Its methods may be called concurrently.
type Server struct {
	opts Options
	http *httptest.Server
	up   websocket.Upgrader

	mu        sync.Mutex
	calls     []Call                // guarded by mu
	scripted  []scripted            // guarded by mu: answers for coming calls
	nonces    map[string]string     // guarded by mu: nonce → message id
	messages  map[string]string     // guarded by mu: message id → content
	nextID    int                   // guarded by mu
	seq       int64                 // guarded by mu
	history   []json.RawMessage     // guarded by mu: every dispatch sent, for RESUME
	conn      *conn                 // guarded by mu: the current gateway connection
	ready     chan struct{}         // guarded by mu: closed when conn is READY or RESUMED
	identify  []Identify            // guarded by mu
	resumes   int                   // guarded by mu
	sessionID string                // guarded by mu
	waiting   map[chan struct{}]int // guarded by mu: waiters for a call count
}

type scripted struct {
	method, prefix string
	status         int
	body           string
}

type conn struct {
	ws *websocket.Conn
	mu sync.Mutex // guards writes to ws
}

func (c *conn) send(v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ws.WriteJSON(v)
}

// New starts a fake. Close it when done.
func New(o Options) *Server {
	if o.Token == "" {
		o.Token = "test-token"
	}
	if o.BotID == "" {
		o.BotID = "100"
	}
	if o.Username == "" {
		o.Username = "homard"
	}
	if o.HeartbeatMillis == 0 {
		o.HeartbeatMillis = 41250
	}
	s := &Server{opts: o, nonces: map[string]string{}, messages: map[string]string{}, nextID: 5000,
		ready: make(chan struct{}), sessionID: "fake-session", waiting: map[chan struct{}]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/gateway", s.gateway)
	mux.HandleFunc("/gateway/", s.gateway) // discordgo adds a trailing slash
	mux.HandleFunc(APIPath+"/", s.rest)
	s.http = httptest.NewServer(mux)
	return s
}

// APIBase is the REST root to give the adapter (Options.APIBase).
func (s *Server) APIBase() string { return s.http.URL + APIPath }

// BotID is the bot's user id.
func (s *Server) BotID() string { return s.opts.BotID }

// Close stops the server and drops the gateway connection.
func (s *Server) Close() {
	s.Disconnect()
	s.http.Close()
}

// Calls returns the REST calls received so far, oldest first.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CallsTo returns the calls with this method whose path starts with prefix.
func (s *Server) CallsTo(method, prefix string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Method == method && strings.HasPrefix(c.Path, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// WaitCalls blocks until the fake has received at least n REST calls in
// all, or ctx ends.
func (s *Server) WaitCalls(ctx context.Context, n int) error {
	s.mu.Lock()
	if len(s.calls) >= n {
		s.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	s.waiting[ch] = n
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.waiting, ch)
		s.mu.Unlock()
		return fmt.Errorf("wait for %d REST calls: %w", n, ctx.Err())
	}
}

// RateLimitNext answers the next call with this method and path prefix
// with 429 and Discord's body, retry_after in seconds (a float).
func (s *Server) RateLimitNext(method, prefix string, retryAfter float64) {
	body := fmt.Sprintf(`{"message":"You are being rate limited.","retry_after":%g,"global":false}`, retryAfter)
	s.script(scripted{method, prefix, http.StatusTooManyRequests, body})
}

// FailNext answers the next call with this method and path prefix with
// status and a Discord error body.
func (s *Server) FailNext(method, prefix string, status int) {
	body := fmt.Sprintf(`{"message":"%d: scripted failure","code":0}`, status)
	s.script(scripted{method, prefix, status, body})
}

func (s *Server) script(sc scripted) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripted = append(s.scripted, sc)
}

// Message returns the content of a message the fake holds (sent or
// edited through it).
func (s *Server) Message(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.messages[id]
	return c, ok
}

// WaitReady blocks until a gateway connection has been identified (READY)
// or resumed (RESUMED), or ctx ends.
func (s *Server) WaitReady(ctx context.Context) error {
	s.mu.Lock()
	ch := s.ready
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the gateway's READY: %w", ctx.Err())
	}
}

// Identified returns every IDENTIFY received, oldest first.
func (s *Server) Identified() []Identify {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Identify(nil), s.identify...)
}

// Resumes is how many RESUMEs the gateway accepted.
func (s *Server) Resumes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resumes
}

// Dispatch sends one event (op 0, type t, payload d) with the next
// sequence number. It is kept for a RESUME: an event dispatched while no
// connection is up is sent when the client resumes.
func (s *Server) Dispatch(t string, d any) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("dispatch %s: %w", t, err)
	}
	s.mu.Lock()
	s.seq++
	frame, _ := json.Marshal(map[string]any{"op": 0, "t": t, "s": s.seq, "d": json.RawMessage(raw)})
	s.history = append(s.history, frame)
	c := s.conn
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.ws.WriteMessage(websocket.TextMessage, frame); err != nil {
		return fmt.Errorf("dispatch %s: %w", t, err)
	}
	return nil
}

// Disconnect drops the gateway connection as a network failure would.
func (s *Server) Disconnect() {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.ready = make(chan struct{})
	s.mu.Unlock()
	if c != nil {
		c.ws.Close()
	}
}

func (s *Server) gateway(w http.ResponseWriter, r *http.Request) {
	ws, err := s.up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &conn{ws: ws}
	defer ws.Close()
	// When this connection ends (the client closed it: homard stopped or
	// reconnects), it no longer takes dispatches and the next client must
	// get READY again before WaitReady returns.
	defer func() {
		s.mu.Lock()
		if s.conn == c {
			s.conn = nil
			s.ready = make(chan struct{})
		}
		s.mu.Unlock()
	}()
	if err := c.send(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": s.opts.HeartbeatMillis}}); err != nil {
		return
	}
	for {
		var f struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if err := ws.ReadJSON(&f); err != nil {
			return
		}
		switch f.Op {
		case 1:
			if c.send(map[string]any{"op": 11}) != nil {
				return
			}
		case 2:
			if !s.onIdentify(c, f.D) {
				return
			}
		case 6:
			if !s.onResume(c, f.D) {
				return
			}
		}
	}
}

func (s *Server) onIdentify(c *conn, d json.RawMessage) bool {
	var id Identify
	if err := json.Unmarshal(d, &id); err != nil || id.Token != "Bot "+s.opts.Token {
		// Discord closes with 4004 Authentication failed.
		c.mu.Lock()
		c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."))
		c.mu.Unlock()
		return false
	}
	s.mu.Lock()
	s.identify = append(s.identify, id)
	s.seq++
	seq := s.seq
	s.conn = c
	ready := s.ready
	s.mu.Unlock()
	err := c.send(map[string]any{"op": 0, "t": "READY", "s": seq, "d": map[string]any{
		"v":                  10,
		"user":               map[string]any{"id": s.opts.BotID, "username": s.opts.Username, "bot": true},
		"session_id":         s.sessionID,
		"resume_gateway_url": "ws://" + s.http.Listener.Addr().String() + "/gateway",
		"guilds":             []any{},
		"application":        map[string]any{"id": s.opts.BotID},
	}})
	if err != nil {
		return false
	}
	s.markReady(ready)
	return true
}

func (s *Server) onResume(c *conn, d json.RawMessage) bool {
	var r struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	if err := json.Unmarshal(d, &r); err != nil || r.Token != "Bot "+s.opts.Token || r.SessionID != s.sessionID {
		// Invalid session, not resumable: the client must IDENTIFY.
		return c.send(map[string]any{"op": 9, "d": false}) == nil
	}
	s.mu.Lock()
	var missed []json.RawMessage
	for _, f := range s.history {
		var h struct {
			S int64 `json:"s"`
		}
		if json.Unmarshal(f, &h) == nil && h.S > r.Seq {
			missed = append(missed, f)
		}
	}
	s.resumes++
	s.seq++
	seq := s.seq
	s.conn = c
	ready := s.ready
	s.mu.Unlock()
	c.mu.Lock()
	for _, f := range missed {
		if c.ws.WriteMessage(websocket.TextMessage, f) != nil {
			c.mu.Unlock()
			return false
		}
	}
	c.mu.Unlock()
	if c.send(map[string]any{"op": 0, "t": "RESUMED", "s": seq, "d": map[string]any{}}) != nil {
		return false
	}
	s.markReady(ready)
	return true
}

// markReady closes ready unless it is closed already.
func (s *Server) markReady(ready chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-ready:
	default:
		close(ready)
	}
}
