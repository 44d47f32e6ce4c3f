package web

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"
)

// event is one Server-Sent Event: its name and JSON data.
type event struct {
	name string
	data []byte
}

func newEvent(name string, v any) event {
	b, err := json.Marshal(v)
	if err != nil { // only plain structs are sent; cannot happen
		b = []byte(`{"error":"encode event"}`) // lang:en
	}
	return event{name: name, data: b}
}

// stream writes events to one response. JSON never holds a raw newline,
// so one data line per event is enough.
type stream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// startStream sends the event-stream headers.
func startStream(w http.ResponseWriter) *stream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8") // lang:en
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	st := &stream{w: w, rc: http.NewResponseController(w)}
	st.rc.Flush()
	return st
}

func (st *stream) send(evs ...event) error {
	for _, ev := range evs {
		if _, err := io.WriteString(st.w, "event: "+ev.name+"\ndata: "); err != nil {
			return err
		}
		if _, err := st.w.Write(ev.data); err != nil {
			return err
		}
		if _, err := io.WriteString(st.w, "\n\n"); err != nil {
			return err
		}
	}
	return st.rc.Flush()
}

func (st *stream) ping() error {
	if _, err := io.WriteString(st.w, ": ping\n\n"); err != nil { // lang:en
		return err
	}
	return st.rc.Flush()
}

// hub fans live updates out to every /api/events stream. A subscriber that
// falls behind by more than its buffer misses updates rather than slowing
// the turns that publish them.
type hub struct {
	mu   sync.Mutex // guards subs
	subs map[chan event]struct{}
}

func newHub() *hub { return &hub{subs: map[chan event]struct{}{}} }

// subscribe returns a channel of updates; call the func to stop.
func (h *hub) subscribe() (<-chan event, func()) {
	ch := make(chan event, 32)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

func (h *hub) publish(ev event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- ev:
		default: // full: this subscriber misses one update
		}
	}
}

// next waits for a value from ch, pinging st at each tick of ping; false
// when a ping fails (the client left), r's client goes or the server
// stops.
func next[T any](s *Server, r *http.Request, st *stream, ping *time.Ticker, ch <-chan T) (T, bool) {
	var zero T
	for {
		select {
		case v := <-ch:
			return v, true
		case <-ping.C:
			if st.ping() != nil {
				return zero, false
			}
		case <-r.Context().Done():
			return zero, false
		case <-s.quit:
			return zero, false
		}
	}
}
