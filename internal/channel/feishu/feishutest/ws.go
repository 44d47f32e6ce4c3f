package feishutest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/coder/websocket"

	"github.com/homard/homard/internal/channel/feishu/frame"
)

// serviceID is the service the fake's connection URL names.
const serviceID = 7

func (s *Server) pingInterval() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.PingInterval > 0 {
		return s.PingInterval
	}
	return 120
}

func (s *Server) endpoint(w http.ResponseWriter, r *http.Request) {
	var in struct {
		AppID     string `json:"AppID"`
		AppSecret string `json:"AppSecret"`
	}
	if json.NewDecoder(r.Body).Decode(&in) != nil || in.AppID != s.AppID || in.AppSecret != s.AppSecret {
		reply(w, http.StatusOK, answer{Code: 1000040344, Msg: "app id or secret invalid"})
		return
	}
	u := "ws" + strings.TrimPrefix(s.srv.URL, "http") + fmt.Sprintf("/ws?device_id=dev1&service_id=%d", serviceID)
	reply(w, http.StatusOK, answer{Data: map[string]any{
		"URL": u,
		"ClientConfig": map[string]int{
			"ReconnectCount": -1, "ReconnectInterval": 120, "ReconnectNonce": 30, "PingInterval": s.pingInterval(),
		},
	}})
}

func (s *Server) websocket(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	c.SetReadLimit(16 << 20)
	s.Drop() // one client at a time: the newest wins
	s.mu.Lock()
	s.conn = c
	s.conns++
	s.notify()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.conn == c {
			s.conn = nil
		}
		s.notify()
		s.mu.Unlock()
		c.CloseNow()
	}()
	for {
		typ, msg, err := c.Read(r.Context())
		if err != nil {
			return
		}
		if typ != websocket.MessageBinary {
			continue
		}
		f, err := frame.Unmarshal(msg)
		if err != nil {
			continue
		}
		s.mu.Lock()
		s.fromConn = append(s.fromConn, f)
		if f.Method == frame.MethodData {
			delete(s.unacked, f.Get(frame.HeaderMessageID))
		}
		s.notify()
		s.mu.Unlock()
		if f.Method == frame.MethodControl && f.Get(frame.HeaderType) == frame.TypePing {
			pong := frame.Frame{Service: f.Service, Method: frame.MethodControl,
				Headers: []frame.Header{{Key: frame.HeaderType, Value: frame.TypePong}},
				Payload: []byte(`{"PingInterval":120}`)}
			_ = c.Write(r.Context(), websocket.MessageBinary, pong.Marshal())
		}
	}
}

// ErrNoClient: no client holds the long connection.
var ErrNoClient = errors.New("feishutest: no client is connected")

// WaitConnected waits until the n-th connection (counting from 1) is up.
func (s *Server) WaitConnected(ctx context.Context, n int) error {
	return s.wait(ctx, func() bool { return s.conn != nil && s.conns >= n })
}

// Drop closes the client's connection (the client should reconnect).
func (s *Server) Drop() {
	// CloseNow waits for the connection's reader, which takes mu: call it
	// without holding mu.
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		c.CloseNow()
	}
}

func (s *Server) write(ctx context.Context, f frame.Frame) error {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c == nil {
		return ErrNoClient
	}
	return c.Write(ctx, websocket.MessageBinary, f.Marshal())
}

// Push sends one event payload in one data frame of type "event" and
// returns the frame's message_id (what its ack carries).
func (s *Server) Push(ctx context.Context, payload []byte) (string, error) {
	return s.PushSplit(ctx, payload, 1)
}

// PushSplit sends payload split into n parts (headers sum and seq), last
// part first, as Feishu may deliver them in any order.
func (s *Server) PushSplit(ctx context.Context, payload []byte, n int) (string, error) {
	if n < 1 || n > len(payload) {
		return "", fmt.Errorf("feishutest: cannot split %d bytes into %d parts", len(payload), n)
	}
	s.mu.Lock()
	s.nextSeq++
	id := fmt.Sprintf("msg-%d", s.nextSeq)
	seq := s.nextSeq
	s.unacked[id] = payload
	s.mu.Unlock()
	size := (len(payload) + n - 1) / n
	for i := n - 1; i >= 0; i-- {
		end := min((i+1)*size, len(payload))
		f := frame.Frame{SeqID: seq, LogID: seq, Service: serviceID, Method: frame.MethodData,
			Headers: []frame.Header{
				{Key: frame.HeaderType, Value: frame.TypeEvent},
				{Key: frame.HeaderMessageID, Value: id},
				{Key: frame.HeaderSum, Value: fmt.Sprint(n)},
				{Key: frame.HeaderSeq, Value: fmt.Sprint(i)},
				{Key: frame.HeaderTraceID, Value: "trace-" + id},
			},
			Payload: payload[i*size : end]}
		if err := s.write(ctx, f); err != nil {
			return "", err
		}
	}
	return id, nil
}

// Redeliver sends every event not acknowledged yet again, under a new
// message_id each, as Feishu does, and returns how many.
func (s *Server) Redeliver(ctx context.Context) (int, error) {
	s.mu.Lock()
	var again [][]byte
	for id, p := range s.unacked {
		again = append(again, p)
		delete(s.unacked, id)
	}
	s.mu.Unlock()
	for _, p := range again {
		if _, err := s.Push(ctx, p); err != nil {
			return 0, err
		}
	}
	return len(again), nil
}

// Unacked counts events pushed and not acknowledged.
func (s *Server) Unacked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.unacked)
}

// Ping sends a control ping (the client answers pong).
func (s *Server) Ping(ctx context.Context) error {
	return s.write(ctx, frame.Frame{Service: serviceID, Method: frame.MethodControl,
		Headers: []frame.Header{{Key: frame.HeaderType, Value: frame.TypePing}}})
}

// Frames returns every frame the client wrote.
func (s *Server) Frames() []frame.Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]frame.Frame(nil), s.fromConn...)
}

// WaitFrame waits for a frame from the client that match accepts, among
// the frames from index from on (len(Frames()) before an action: only
// what came after it). match runs with the fake's lock held: it must not
// call the fake.
func (s *Server) WaitFrame(ctx context.Context, from int, match func(frame.Frame) bool) (frame.Frame, error) {
	var got frame.Frame
	err := s.wait(ctx, func() bool {
		for _, f := range s.fromConn[min(from, len(s.fromConn)):] {
			if match(f) {
				got = f
				return true
			}
		}
		return false
	})
	return got, err
}

// Ack is a client's answer to a data frame.
type Ack struct {
	Code int    `json:"code"`
	Data []byte `json:"data"` // a card callback's answer (JSON)
}

// WaitAck waits for the ack of the data frame messageID and decodes it.
func (s *Server) WaitAck(ctx context.Context, messageID string) (Ack, frame.Frame, error) {
	f, err := s.WaitFrame(ctx, 0, func(f frame.Frame) bool {
		return f.Method == frame.MethodData && f.Get(frame.HeaderMessageID) == messageID
	})
	if err != nil {
		return Ack{}, f, err
	}
	var a Ack
	if err := json.Unmarshal(f.Payload, &a); err != nil {
		return Ack{}, f, fmt.Errorf("feishutest: ack payload %q: %w", f.Payload, err)
	}
	return a, f, nil
}

// Toast is the toast text of a card callback's answer ("" when none).
func (a Ack) Toast() string {
	var r struct {
		Toast struct {
			Content string `json:"content"`
		} `json:"toast"`
	}
	_ = json.Unmarshal(a.Data, &r)
	return r.Toast.Content
}

// Acked reports whether the client acknowledged data frame messageID.
func (s *Server) Acked(messageID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.fromConn {
		if f.Method == frame.MethodData && f.Get(frame.HeaderMessageID) == messageID {
			return true
		}
	}
	return false
}
