package browser

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// maxMessage caps one message from Chromium (a full-page screenshot or a
// large accessibility tree can be tens of megabytes).
const maxMessage = 256 << 20

// subBuffer is how many events a subscription holds before further ones
// are dropped; the subscribers here read as they go.
const subBuffer = 256

// conn is one DevTools connection over Chromium's pipe: commands are
// NUL-terminated JSON written to fd 3, responses and events are read, NUL
// by NUL, from fd 4. Sessions are flattened: a command for a target
// carries its sessionId, and so does each of its events.
type conn struct {
	w   io.WriteCloser
	wmu sync.Mutex // guards writes to w

	mu      sync.Mutex // guards next, pending, subs, err
	next    int64
	pending map[int64]chan reply
	subs    map[*sub]bool
	err     error // set when the reader ends; every later call fails with it

	// onEvent handles every event first (interception, targets), on the
	// dispatcher goroutine; it must not wait for a command's reply.
	onEvent func(event)
	queue   eventQueue
	done    chan struct{} // closed when the reader has ended
}

type reply struct {
	result json.RawMessage
	err    error
}

// event is one event from Chromium.
type event struct {
	Method    string
	Params    json.RawMessage
	SessionID sessionID
}

// sub is one subscription: the events of one method on one session.
type sub struct {
	method  string
	session sessionID
	ch      chan json.RawMessage
}

// message is any message in either direction.
type message struct {
	ID        int64           `json:"id,omitzero"`
	Method    string          `json:"method,omitzero"`
	Params    json.RawMessage `json:"params,omitzero"`
	SessionID sessionID       `json:"sessionId,omitzero"`
	Result    json.RawMessage `json:"result,omitzero"`
	Error     *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
		Data    string `json:"data,omitzero"`
	} `json:"error,omitzero"`
}

// newConn starts reading r; onEvent sees each event in order. The reader
// and the dispatcher end when r ends (Chromium exited or the pipe was
// closed); wg tracks them.
func newConn(w io.WriteCloser, r io.Reader, onEvent func(event), wg *sync.WaitGroup) *conn {
	c := &conn{
		w:       w,
		pending: map[int64]chan reply{},
		subs:    map[*sub]bool{},
		onEvent: onEvent,
		done:    make(chan struct{}),
	}
	c.queue.signal = make(chan struct{}, 1)
	wg.Go(func() { c.read(r) })
	wg.Go(c.dispatch)
	return c
}

// read delivers replies and queues events until r ends.
func (c *conn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<16)
	var err error
	for {
		var raw []byte
		raw, err = br.ReadBytes(0)
		if err != nil {
			break
		}
		if len(raw) > maxMessage {
			err = fmt.Errorf("a message of %d bytes from chromium is too large", len(raw))
			break
		}
		m, jerr := decodeMessage(raw[:len(raw)-1])
		if jerr != nil {
			continue // not ours to fail on; the caller's deadline bounds it
		}
		if m.ID != 0 {
			c.mu.Lock()
			ch := c.pending[m.ID]
			delete(c.pending, m.ID)
			c.mu.Unlock()
			if ch == nil {
				continue
			}
			rp := reply{result: m.Result}
			if m.Error != nil {
				rp.err = &protocolError{Code: m.Error.Code, Message: m.Error.Message, Data: m.Error.Data}
			}
			ch <- rp
			continue
		}
		if m.Method != "" {
			c.queue.push(event{Method: m.Method, Params: m.Params, SessionID: m.SessionID})
		}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		err = errConnClosed
	}
	c.mu.Lock()
	c.err = err
	for id, ch := range c.pending {
		ch <- reply{err: err}
		delete(c.pending, id)
	}
	c.mu.Unlock()
	c.queue.close()
	close(c.done)
}

// dispatch hands queued events to onEvent and the subscribers, in order,
// until the reader has ended and the queue is drained; it then closes
// every subscription.
func (c *conn) dispatch() {
	for {
		ev, ok := c.queue.pop()
		if !ok {
			break
		}
		if c.onEvent != nil {
			c.onEvent(ev)
		}
		c.mu.Lock()
		for s := range c.subs {
			if s.method == ev.Method && s.session == ev.SessionID {
				select {
				case s.ch <- ev.Params:
				default: // a subscriber that does not read loses events
				}
			}
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	for s := range c.subs {
		close(s.ch)
		delete(c.subs, s)
	}
	c.mu.Unlock()
}

// decodeMessage decodes one message from Chromium. A string with bytes
// that are not UTF-8 (a page's title or text may hold them) does not fail
// it: encoding/json turns each into U+FFFD, in the message as in the
// params and results decoded from it later.
func decodeMessage(b []byte) (message, error) {
	var m message
	err := json.Unmarshal(b, &m)
	return m, err
}

// errConnClosed is the error of a call on a connection whose Chromium is
// gone.
var errConnClosed = errors.New("browser: the connection to chromium is closed")

// protocolError is an error answer from Chromium.
type protocolError struct {
	Code          int64
	Message, Data string
}

func (e *protocolError) Error() string {
	if e.Data != "" {
		return fmt.Sprintf("%s (%s)", e.Message, e.Data)
	}
	return e.Message
}

// send writes one command and returns the channel its reply arrives on.
func (c *conn) send(session sessionID, method string, params any) (chan reply, error) {
	var raw json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", method, err)
		}
		raw = b
	}
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.next++
	id := c.next
	c.pending[id] = ch
	c.mu.Unlock()
	b, err := json.Marshal(message{ID: id, Method: method, Params: raw, SessionID: session})
	if err != nil {
		c.forget(id)
		return nil, fmt.Errorf("encode %s: %w", method, err)
	}
	c.wmu.Lock()
	_, err = c.w.Write(append(b, 0))
	c.wmu.Unlock()
	if err != nil {
		c.forget(id)
		return nil, fmt.Errorf("send %s: %w", method, err)
	}
	return ch, nil
}

func (c *conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// call sends a command and waits for its reply, decoding the result into
// result when it is not nil.
func (c *conn) call(ctx context.Context, session sessionID, method string, params, result any) error {
	ch, err := c.send(session, method, params)
	if err != nil {
		return err
	}
	select {
	case rp := <-ch:
		if rp.err != nil {
			return fmt.Errorf("%s: %w", method, rp.err)
		}
		if result == nil || len(rp.result) == 0 {
			return nil
		}
		if err := json.Unmarshal(rp.result, result); err != nil {
			return fmt.Errorf("decode the result of %s: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// notify sends a command whose reply nobody waits for (from the event
// dispatcher, which must not wait).
func (c *conn) notify(session sessionID, method string, params any) {
	_, _ = c.send(session, method, params)
}

// session is the connection as seen by one target: the browser itself
// (id "") or a page, frame or worker.
type session struct {
	c  *conn
	id sessionID
}

// Call runs method with params (a struct of protocol.go, or nil for
// none) and decodes its result into result (nil to drop it).
func (s session) Call(ctx context.Context, method string, params, result any) error {
	return s.c.call(ctx, s.id, method, params, result)
}

// Subscribe returns the params of each later event method of this
// session, until the returned func is called or the connection ends.
func (s session) Subscribe(method string) (<-chan json.RawMessage, func()) {
	sb := &sub{method: method, session: s.id, ch: make(chan json.RawMessage, subBuffer)}
	s.c.mu.Lock()
	if s.c.err != nil {
		s.c.mu.Unlock()
		close(sb.ch)
		return sb.ch, func() {}
	}
	s.c.subs[sb] = true
	s.c.mu.Unlock()
	return sb.ch, func() {
		s.c.mu.Lock()
		defer s.c.mu.Unlock()
		if s.c.subs[sb] {
			delete(s.c.subs, sb)
			close(sb.ch)
		}
	}
}

// eventQueue is an unbounded FIFO between the reader, which must never
// block, and the dispatcher.
type eventQueue struct {
	mu     sync.Mutex // guards items, closed
	items  []event
	closed bool
	signal chan struct{} // a token when items may be non-empty
}

func (q *eventQueue) push(ev event) {
	q.mu.Lock()
	q.items = append(q.items, ev)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// pop waits for the next event; ok is false once the queue is closed and
// empty.
func (q *eventQueue) pop() (event, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			ev := q.items[0]
			q.items[0] = event{}
			q.items = q.items[1:]
			q.mu.Unlock()
			return ev, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return event{}, false
		}
		<-q.signal
	}
}
