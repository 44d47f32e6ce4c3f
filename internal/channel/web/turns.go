package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/web/wire"
)

// turn is one running turn and the events it has produced so far. A
// watcher replays them from the start, so the client that started the
// turn misses nothing, and a late one (another tab) could join.
type turn struct {
	session string
	cancel  context.CancelFunc

	mu     sync.Mutex // guards events, done, wake
	events []event
	done   bool
	wake   chan struct{} // closed and replaced on each change
}

func (t *turn) emit(ev event, final bool) {
	t.mu.Lock()
	t.events = append(t.events, ev)
	t.done = t.done || final
	close(t.wake)
	t.wake = make(chan struct{})
	t.mu.Unlock()
}

// since returns the events after the first n, whether the turn is done,
// and a channel closed at the next change.
func (t *turn) since(n int) ([]event, bool, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.events[n:], t.done, t.wake
}

// validSession reports whether id may name a session: 1–128 printable
// characters without spaces.
func validSession(id string) bool {
	return id != "" && len(id) <= 128 && !strings.ContainsFunc(id, func(r rune) bool {
		return !unicode.IsPrint(r) || unicode.IsSpace(r)
	})
}

// chat starts a turn and streams its events until it ends or the client
// leaves; the turn goes on either way.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req wire.ChatRequest
	if !readJSONMax(w, r, &req, maxChatBody) {
		return
	}
	if strings.TrimSpace(req.Message) == "" {
		writeError(w, http.StatusBadRequest, "message is empty") // lang:en
		return
	}
	if len(req.Message) > MaxMessage {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("message: %d bytes, more than %d MiB; send less", len(req.Message), MaxMessage>>20)) // lang:en
		return
	}
	if req.Session == "" {
		req.Session = "web-" + strconv.FormatInt(s.o.Now().Unix(), 10) + "-" + randomToken()[:6]
	}
	if !validSession(req.Session) {
		writeError(w, http.StatusBadRequest, "session: want 1 to 128 printable characters without spaces") // lang:en
		return
	}
	t, status, msg := s.start(req.Session, req.Message)
	if t == nil {
		writeError(w, status, msg)
		return
	}
	s.watch(w, r, t)
}

// start registers and starts a turn in session, or says why not.
func (s *Server) start(session, text string) (*turn, int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return nil, http.StatusServiceUnavailable, "homard is shutting down" // lang:en
	}
	if _, busy := s.turns[session]; busy {
		return nil, http.StatusConflict, fmt.Sprintf("session %s is busy with another turn", session) // lang:en
	}
	if s.deleting[session] {
		return nil, http.StatusConflict, fmt.Sprintf("session %s is being deleted; try again", session) // lang:en
	}
	ctx, cancel := context.WithCancel(s.base)
	t := &turn{session: session, cancel: cancel, wake: make(chan struct{})}
	t.events = append(t.events, newEvent(wire.EventSession, wire.Session{Session: session}))
	s.turns[session] = t
	s.wg.Add(1)
	go s.run(ctx, t, text)
	return t, 0, ""
}

// run runs a turn to its end on the server's context.
func (s *Server) run(ctx context.Context, t *turn, text string) {
	defer s.wg.Done()
	defer t.cancel()
	s.hub.publish(newEvent("turn_started", map[string]string{"session": t.session}))
	res, err := s.rt.Turn(ctx, channel.TurnRequest{
		Session: t.session,
		Text:    text,
		OnText:  func(d string) { t.emit(newEvent(wire.EventDelta, wire.Delta{Text: d}), false) },
		OnTool: func(ev channel.ToolEvent) {
			te := wire.NewTool(ev)
			t.emit(newEvent(wire.EventTool, te), false)
			te.Session = t.session
			s.hub.publish(newEvent(wire.EventTool, te))
		},
		Ask: func(ctx context.Context, c channel.Card) (channel.Choice, error) { return s.await(ctx, t, c) },
	})
	// Leave the registry first: a client that reads "done" may at once
	// start the session's next turn.
	s.mu.Lock()
	delete(s.turns, t.session)
	s.mu.Unlock()
	if err != nil {
		msg := err.Error()
		if errors.Is(err, context.Canceled) {
			msg = "the turn was cancelled; nothing of it was stored" // lang:en
			s.log.Info("turn cancelled", "session", t.session)
		} else {
			s.log.Warn("turn failed", "session", t.session, "err", err)
		}
		t.emit(newEvent(wire.EventError, wire.Error{Error: msg}), true)
		s.hub.publish(newEvent("turn_done", map[string]string{"session": t.session, "error": msg}))
		return
	}
	t.emit(newEvent(wire.EventDone, wire.NewDone(res, t.session)), true)
	s.hub.publish(newEvent("turn_done", map[string]string{"session": t.session, "text": res.Text}))
}

// watch streams t's events to one client, with pings, until the turn is
// done, the client leaves or the server stops.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, t *turn) {
	st := startStream(w)
	ping := time.NewTicker(s.o.PingInterval)
	defer ping.Stop()
	n := 0
	for {
		evs, done, wake := t.since(n)
		if len(evs) > 0 {
			if st.send(evs...) != nil {
				return // the client left; the turn goes on
			}
			n += len(evs)
			continue
		}
		if done {
			return
		}
		if _, ok := next(s, r, st, ping, wake); !ok {
			return
		}
	}
}

// await holds a turn at an approval card until the card is no longer
// pending — answered through this server, in another tab, or with
// `homard approval approve` — or until the approval wait lapses, through
// the one approval waiter (Admin.Await). It never records an answer:
// whoever answered did.
func (s *Server) await(ctx context.Context, t *turn, c channel.Card) (channel.Choice, error) {
	card := wire.NewCard(c, t.session)
	t.emit(newEvent(wire.EventApproval, card), false)
	s.hub.publish(newEvent(wire.EventApproval, card))
	choice, err := s.admin.Await(ctx, c.ApprovalID, s.o.ApprovalWait)
	if err != nil || choice != channel.Recorded {
		return choice, err
	}
	// Tell the other tabs (an answer given here was told already, and
	// telling twice is harmless).
	if a, err := s.admin.Approval(ctx, c.ApprovalID); err == nil {
		s.hub.publish(newEvent("approval_decided", map[string]string{"approval_id": a.ID, "status": a.Status}))
	}
	return choice, nil
}

// cancelTurn cancels session's running turn; false when none runs.
func (s *Server) cancelTurn(session string) bool {
	s.mu.Lock()
	t, ok := s.turns[session]
	s.mu.Unlock()
	if ok {
		t.cancel()
	}
	return ok
}

// busy reports which sessions run a turn now.
func (s *Server) busy() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]bool, len(s.turns))
	for id := range s.turns {
		out[id] = true
	}
	return out
}
