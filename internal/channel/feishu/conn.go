package feishu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/feishu/frame"
)

// Long-connection limits.
const (
	// ackWindow: Feishu redelivers an event not acknowledged within 3 s.
	ackWindow = 3 * time.Second
	// remember: how long a handled event id stays in memory. Feishu
	// retries for hours; the inbox key is the real guard.
	remember = 8 * time.Hour
	// maxParts bounds a split payload; partsTTL drops an incomplete one.
	maxParts = 64
	partsTTL = 10 * time.Second
)

// endpointConfig is what /callback/ws/endpoint and pong frames carry.
type endpointConfig struct {
	ReconnectCount    int `json:"ReconnectCount"`
	ReconnectInterval int `json:"ReconnectInterval"` // seconds
	ReconnectNonce    int `json:"ReconnectNonce"`    // seconds of jitter
	PingInterval      int `json:"PingInterval"`      // seconds
}

// Run holds the long connection until ctx ends (it then returns
// ctx.Err()) or Feishu refuses the app for good. It learns the bot's own
// id first (Info), reconnects with backoff, and for each event calls
// sink.Receive and acknowledges the frame only when Receive returned nil
// within Feishu's 3 s window; otherwise Feishu redelivers it.
//
// A card press (chat.KindPress) is acknowledged a little later: Feishu
// shows the presser what the ack's body says, so Run waits until AckPress
// hands it the notice or Options.AckWait (2.5 s) has passed since the
// frame arrived, then acknowledges with the notice as a toast.
//
// In callback mode (Options.Callback) Run opens no connection: it learns
// the bot's id and lends sink to ServeHTTP until ctx ends.
func (a *Adapter) Run(ctx context.Context, sink chat.Sink) error {
	if a.opt.Callback {
		return a.runCallback(ctx, sink)
	}
	backoff := a.opt.Backoff
	for {
		a.mu.Lock()
		known := a.botID != ""
		a.mu.Unlock()
		var err error
		served := false
		if !known {
			_, err = a.Info(ctx)
		}
		if err == nil {
			served, err = a.connectOnce(ctx, sink)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var retry *chat.RetryError
		if errors.Is(err, chat.ErrUnauthorized) || errors.Is(err, errRefused) ||
			(err != nil && !errors.As(err, &retry) && !errors.Is(err, errDropped)) {
			return fmt.Errorf("feishu long connection: %w", err)
		}
		if a.opt.Report != nil && err != nil {
			a.opt.Report(fmt.Errorf("feishu long connection: %w", err))
		}
		if served {
			backoff = a.opt.Backoff
		}
		wait := backoff + rand.N(backoff/2+1)
		if backoff < 2*time.Minute {
			backoff *= 2
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

var (
	// errRefused: the endpoint refused the app (not a passing failure).
	errRefused = errors.New("feishu refused the long connection")
	// errDropped: the connection ended; reconnect.
	errDropped = errors.New("long connection dropped")
)

// endpoint asks for a connection URL and its settings.
func (a *Adapter) endpoint(ctx context.Context) (string, endpointConfig, error) {
	body, _ := json.Marshal(map[string]string{"AppID": a.opt.AppID, "AppSecret": a.opt.AppSecret})
	var out struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
		Data struct {
			URL          string         `json:"URL"`
			ClientConfig endpointConfig `json:"ClientConfig"`
		} `json:"data"`
	}
	status, _, err := a.roundTrip(ctx, http.MethodPost, "/callback/ws/endpoint", "", body, &out)
	switch {
	case err != nil:
		return "", endpointConfig{}, err
	case status >= 500 || out.Code == 1 || out.Code == 1000040343: // busy, internal error
		return "", endpointConfig{}, &chat.RetryError{Err: &APIError{Status: status, Code: out.Code, Msg: out.Msg}}
	case out.Code != 0 || status != http.StatusOK:
		return "", endpointConfig{}, fmt.Errorf("%w: %v; check the app id and secret and that the app's event mode is the long connection", errRefused, &APIError{Status: status, Code: out.Code, Msg: out.Msg})
	case out.Data.URL == "":
		return "", endpointConfig{}, &chat.RetryError{Err: errors.New("endpoint answer has no URL")}
	}
	return out.Data.URL, out.Data.ClientConfig, nil
}

// connectOnce dials one connection and serves it until it drops. served
// reports whether the connection came up (the backoff then starts over).
func (a *Adapter) connectOnce(ctx context.Context, sink chat.Sink) (served bool, err error) {
	wsURL, cfg, err := a.endpoint(ctx)
	if err != nil {
		return false, err
	}
	u, err := url.Parse(wsURL)
	if err != nil {
		return false, &chat.RetryError{Err: fmt.Errorf("endpoint URL: %w", err)}
	}
	service, _ := strconv.ParseInt(u.Query().Get("service_id"), 10, 32)
	conn, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPClient: a.hc})
	if err != nil {
		if resp != nil && resp.Header.Get("Handshake-Status") == "403" {
			return false, fmt.Errorf("%w: handshake forbidden: %s", errRefused, resp.Header.Get("Handshake-Msg"))
		}
		return false, &chat.RetryError{Err: fmt.Errorf("dial long connection: %w", err)}
	}
	defer conn.CloseNow()
	conn.SetReadLimit(16 << 20)
	s := &session{a: a, conn: conn, sink: sink, service: int32(service), parts: map[string]*parts{}}
	s.setPing(cfg.PingInterval)
	return true, s.serve(ctx)
}

// session is one websocket connection.
type session struct {
	a       *Adapter
	conn    *websocket.Conn
	sink    chat.Sink
	service int32

	mu   sync.Mutex    // guards ping
	ping time.Duration // the server's ping interval

	parts map[string]*parts // split payloads by message_id; read loop only
	wg    sync.WaitGroup    // press acks waiting for AckPress
}

type parts struct {
	first time.Time
	bufs  [][]byte
}

func (s *session) setPing(sec int) {
	if sec <= 0 {
		sec = 120
	}
	s.mu.Lock()
	s.ping = time.Duration(sec) * time.Second
	s.mu.Unlock()
}

func (s *session) pingEvery() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ping
}

// serve reads frames until the connection or ctx ends; a ping loop runs
// beside it and press acks may be pending: both end before serve returns.
func (s *session) serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); s.wg.Wait() }()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.pingLoop(ctx)
	}()
	for {
		typ, msg, err := s.conn.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%w: %v", errDropped, err)
		}
		if typ != websocket.MessageBinary {
			continue
		}
		f, err := frame.Unmarshal(msg)
		if err != nil {
			continue // one bad frame does not end the connection
		}
		switch f.Method {
		case frame.MethodControl:
			s.control(ctx, f)
		case frame.MethodData:
			s.data(ctx, f)
		}
	}
}

func (s *session) pingLoop(ctx context.Context) {
	for {
		t := time.NewTimer(s.pingEvery())
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		f := frame.Frame{Service: s.service, Method: frame.MethodControl, Headers: []frame.Header{{Key: frame.HeaderType, Value: frame.TypePing}}}
		_ = s.conn.Write(ctx, websocket.MessageBinary, f.Marshal()) // a dead connection shows in Read
	}
}

func (s *session) control(ctx context.Context, f frame.Frame) {
	switch f.Get(frame.HeaderType) {
	case frame.TypePing: // answer the server's ping
		f.Set(frame.HeaderType, frame.TypePong)
		f.Payload = nil
		_ = s.conn.Write(ctx, websocket.MessageBinary, f.Marshal())
	case frame.TypePong: // may carry new settings
		var cfg endpointConfig
		if len(f.Payload) > 0 && json.Unmarshal(f.Payload, &cfg) == nil && cfg.PingInterval > 0 {
			s.setPing(cfg.PingInterval)
		}
	}
}

// data handles a data frame: reassembles a split payload, then hands the
// event to the sink and acknowledges it.
func (s *session) data(ctx context.Context, f frame.Frame) {
	arrived := s.a.opt.Now()
	typ := f.Get(frame.HeaderType)
	if typ != frame.TypeEvent && typ != frame.TypeCard {
		return
	}
	payload := f.Payload
	if sum := f.GetInt(frame.HeaderSum); sum > 1 {
		if payload = s.combine(f.Get(frame.HeaderMessageID), sum, f.GetInt(frame.HeaderSeq), payload, arrived); payload == nil {
			return
		}
	}
	in, err := s.a.Decode(ctx, payload)
	if err != nil {
		if s.a.opt.Report != nil {
			s.a.opt.Report(err)
		}
		return // not saved, not acknowledged: Feishu redelivers
	}
	if s.a.handled(in.DeliveryID) {
		s.ack(ctx, f, arrived, nil)
		return
	}
	var notice chan string
	if in.Kind == chat.KindPress && in.Press.ID != "" {
		notice = s.a.expectAck(in.Press.ID)
	}
	if err := s.sink.Receive(ctx, in); err != nil {
		if notice != nil {
			s.a.dropAck(in.Press.ID)
		}
		return
	}
	s.a.remember(in.DeliveryID)
	if notice == nil {
		s.ack(ctx, f, arrived, nil)
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.a.dropAck(in.Press.ID)
		answer, ok := s.a.pressAnswer(ctx, notice, arrived)
		if !ok {
			return
		}
		body, _ := json.Marshal(answer)
		s.ack(ctx, f, arrived, body)
	}()
}

// pressAnswer waits, until the press that arrived then must be answered
// (AckWait), for the notice its handler sends, and returns the answer: {}
// or, with a notice, a toast showing it. ok is false when ctx ended first.
func (a *Adapter) pressAnswer(ctx context.Context, notice <-chan string, arrived time.Time) (answer any, ok bool) {
	t := time.NewTimer(a.opt.AckWait - a.opt.Now().Sub(arrived))
	defer t.Stop()
	var text string
	select {
	case <-ctx.Done():
		return nil, false
	case text = <-notice:
	case <-t.C:
	}
	if text == "" {
		return struct{}{}, true
	}
	return map[string]any{"toast": map[string]string{"type": "info", "content": text}}, true
}

// ack answers a data frame with the same frame carrying {"code":200} (and
// data, a card callback's answer) — unless Feishu's window has passed.
func (s *session) ack(ctx context.Context, f frame.Frame, arrived time.Time, data []byte) {
	took := s.a.opt.Now().Sub(arrived)
	if took > ackWindow {
		return // too late to count; Feishu redelivers and the inbox knows it
	}
	resp := struct {
		Code    int               `json:"code"`
		Headers map[string]string `json:"headers,omitempty"`
		Data    []byte            `json:"data,omitempty"` // base64 in JSON, as Feishu expects
	}{Code: http.StatusOK, Data: data}
	f.Payload, _ = json.Marshal(resp)
	f.Set(frame.HeaderBizRt, strconv.FormatInt(took.Milliseconds(), 10))
	_ = s.conn.Write(ctx, websocket.MessageBinary, f.Marshal())
}

// combine stores one part; it returns the whole payload once every part
// is there.
func (s *session) combine(id string, sum, seq int, p []byte, now time.Time) []byte {
	for k, v := range s.parts {
		if now.Sub(v.first) > partsTTL {
			delete(s.parts, k)
		}
	}
	if sum > maxParts || seq < 0 || seq >= sum || id == "" {
		return nil
	}
	ps := s.parts[id]
	if ps == nil || len(ps.bufs) != sum {
		ps = &parts{first: now, bufs: make([][]byte, sum)}
		s.parts[id] = ps
	}
	ps.bufs[seq] = append([]byte{}, p...)
	var whole []byte
	for _, b := range ps.bufs {
		if b == nil {
			return nil
		}
		whole = append(whole, b...)
	}
	delete(s.parts, id)
	return whole
}

// handled reports whether eventID was saved by this process within the
// last 8 hours (a pre-filter; the inbox key is the guard).
func (a *Adapter) handled(eventID string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	at, ok := a.seen[eventID]
	return ok && a.opt.Now().Sub(at) < remember
}

func (a *Adapter) remember(eventID string) {
	now := a.opt.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.seen) >= 4096 && len(a.seen)%1024 == 0 { // prune now and then
		for k, at := range a.seen {
			if now.Sub(at) >= remember {
				delete(a.seen, k)
			}
		}
	}
	a.seen[eventID] = now
}

func (a *Adapter) expectAck(token string) chan string {
	ch := make(chan string, 1)
	a.mu.Lock()
	a.pending[token] = ch
	a.mu.Unlock()
	return ch
}

func (a *Adapter) dropAck(token string) {
	a.mu.Lock()
	delete(a.pending, token)
	a.mu.Unlock()
}

// AckPress hands notice to the pending acknowledgement of press p: Feishu
// shows it to the presser as a toast. A press whose window (Options.AckWait
// after it arrived) has passed was already acknowledged without a notice;
// AckPress then does nothing and returns nil.
func (a *Adapter) AckPress(ctx context.Context, p chat.Press, notice string) error {
	a.mu.Lock()
	ch := a.pending[p.ID]
	delete(a.pending, p.ID)
	a.mu.Unlock()
	if ch != nil {
		ch <- notice // buffered: never blocks
	}
	return nil
}
