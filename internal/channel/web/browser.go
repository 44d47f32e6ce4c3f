package web

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/web/wire"
)

// The owner's view of the isolated browser (docs/API.md "Browser"): its
// state, taking it over and handing it back, loading a page, the owner's
// mouse and keys, and a stream of frames. The gateway only relays: the
// refusal of the model's browser tools while the owner has the browser
// is enforced by the tools (channel.BrowserControl), not here.

const (
	// frameGap is the least time between two frames of one stream: at
	// most 10 a second; frames in between are dropped.
	frameGap = 100 * time.Millisecond
	// maxBrowserBody caps a browser request's body.
	maxBrowserBody = 16 << 10
	// maxInputText caps the text of one input request, in bytes.
	maxInputText = 4 << 10
	// maxURL caps the URL the owner opens, in bytes.
	maxURL = 8 << 10
	// maxCoord bounds a mouse coordinate, in CSS pixels.
	maxCoord = 1 << 15
)

// browserKeys are the keys POST /api/browser/input passes on by name.
var browserKeys = map[string]bool{
	"Enter": true, "Backspace": true, "Tab": true, "Escape": true, "Delete": true,
	"ArrowUp": true, "ArrowDown": true, "ArrowLeft": true, "ArrowRight": true,
	"Home": true, "End": true, "PageUp": true, "PageDown": true,
}

// browserRoutes adds the browser view's routes (lang:en).
func (s *Server) browserRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/browser", s.withBrowser(s.browserState))
	mux.HandleFunc("POST /api/browser/take", s.withBrowser(s.browserAction(channel.BrowserControl.Take)))
	mux.HandleFunc("POST /api/browser/give", s.withBrowser(s.browserAction(channel.BrowserControl.Give)))
	mux.HandleFunc("POST /api/browser/open", s.withBrowser(s.browserOpen))
	mux.HandleFunc("POST /api/browser/input", s.withBrowser(s.browserInput))
	mux.HandleFunc("GET /api/browser/frames", s.withBrowser(s.browserFrames))
}

// browserHandler is a route that needs the browser.
type browserHandler func(w http.ResponseWriter, r *http.Request, b channel.BrowserControl)

// withBrowser answers 404 when the server has no browser, and caps the
// body of a POST.
func (s *Server) withBrowser(h browserHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.o.Browser == nil {
			writeError(w, http.StatusNotFound, channel.ErrBrowserOff.Error())
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxBrowserBody)
		}
		h(w, r, s.o.Browser)
	}
}

// browserFail answers a BrowserControl error.
func (s *Server) browserFail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, channel.ErrNotTaken):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, channel.ErrBrowserOff):
		writeError(w, http.StatusNotFound, err.Error())
	default:
		s.fail(w, err)
	}
}

func (s *Server) browserState(w http.ResponseWriter, r *http.Request, b channel.BrowserControl) {
	st, err := b.State(r.Context())
	if err != nil {
		s.browserFail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.NewBrowser(st))
}

// browserChanged answers with the state after an action and tells the
// other tabs.
func (s *Server) browserChanged(w http.ResponseWriter, r *http.Request, b channel.BrowserControl) {
	st, err := b.State(r.Context())
	if err != nil {
		s.browserFail(w, err)
		return
	}
	out := wire.NewBrowser(st)
	s.hub.publish(newEvent("browser_changed", out))
	writeJSON(w, http.StatusOK, out)
}

// browserAction serves take and give. Like every POST it needs
// Content-Type application/json (the guard); the body is ignored.
func (s *Server) browserAction(act func(channel.BrowserControl, context.Context) error) browserHandler {
	return func(w http.ResponseWriter, r *http.Request, b channel.BrowserControl) {
		if err := act(b, r.Context()); err != nil {
			s.browserFail(w, err)
			return
		}
		s.browserChanged(w, r, b)
	}
}

func (s *Server) browserOpen(w http.ResponseWriter, r *http.Request, b channel.BrowserControl) {
	var req wire.BrowserOpen
	if !readJSONMax(w, r, &req, maxBrowserBody) {
		return
	}
	if err := checkOpenURL(req.URL); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := b.Open(r.Context(), req.URL); err != nil {
		s.browserFail(w, err)
		return
	}
	s.browserChanged(w, r, b)
}

// checkOpenURL accepts an absolute http or https URL. Where it may go is
// the browser's egress rules' to say; this only keeps other schemes
// (javascript:, file:, chrome:) from reaching it.
func checkOpenURL(raw string) error {
	if len(raw) > maxURL {
		return fmt.Errorf("url: more than %d bytes", maxURL) // lang:en
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("url: want an absolute http:// or https:// address") // lang:en
	}
	return nil
}

func (s *Server) browserInput(w http.ResponseWriter, r *http.Request, b channel.BrowserControl) {
	var in wire.BrowserInput
	if !readJSONMax(w, r, &in, maxBrowserBody) {
		return
	}
	if err := checkInput(in); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var err error
	switch in.Kind {
	case wire.InputKey, wire.InputText:
		err = b.Key(r.Context(), in.Key, in.Text)
	default:
		err = b.Mouse(r.Context(), in.Kind, *in.X, *in.Y)
	}
	if err != nil {
		s.browserFail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// checkInput says what is wrong with an input request: a mouse event has
// x and y (0 to 32768) and nothing else; a key has a key of browserKeys
// and nothing else; text has 1 to 4096 bytes of UTF-8 without control
// characters and nothing else.
func checkInput(in wire.BrowserInput) error {
	mouse := in.Kind == channel.MousePress || in.Kind == channel.MouseRelease || in.Kind == channel.MouseMove
	switch {
	case !mouse && in.Kind != wire.InputKey && in.Kind != wire.InputText:
		return errors.New("kind: want press, release, move, key or text") // lang:en
	case mouse && (in.X == nil || in.Y == nil):
		return errors.New("x, y: a mouse event needs both") // lang:en
	case mouse && (*in.X < 0 || *in.Y < 0 || *in.X > maxCoord || *in.Y > maxCoord):
		return fmt.Errorf("x, y: want CSS pixels from 0 to %d", maxCoord) // lang:en
	case mouse && (in.Key != "" || in.Text != ""):
		return errors.New("key, text: not for a mouse event") // lang:en
	case !mouse && (in.X != nil || in.Y != nil):
		return errors.New("x, y: only for a mouse event") // lang:en
	case in.Kind == wire.InputKey && in.Text != "", in.Kind == wire.InputText && in.Key != "":
		return errors.New("send either a key (kind key) or text (kind text)") // lang:en
	case in.Kind == wire.InputKey && !browserKeys[in.Key]:
		return errors.New("key: want Enter, Backspace, Tab, Escape, Delete, an arrow, Home, End, PageUp or PageDown") // lang:en
	case in.Kind == wire.InputText && (in.Text == "" || len(in.Text) > maxInputText):
		return fmt.Errorf("text: want 1 to %d bytes", maxInputText) // lang:en
	case in.Kind == wire.InputText && (!utf8.ValidString(in.Text) || containsControl(in.Text)):
		return errors.New("text: no control characters (send Enter, Tab… as kind key)") // lang:en
	}
	return nil
}

func containsControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// latestFrame keeps the newest frame of a screencast: the browser puts,
// the stream takes at its own pace, and the frames in between are lost.
type latestFrame struct {
	mu    sync.Mutex // guards frame
	frame []byte
	ready chan struct{} // holds a token while a frame waits
}

func (l *latestFrame) put(jpeg []byte) {
	l.mu.Lock()
	l.frame = jpeg
	l.mu.Unlock()
	select {
	case l.ready <- struct{}{}:
	default:
	}
}

func (l *latestFrame) take() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.frame
	l.frame = nil
	return f
}

// browserFrames streams the active tab's frames, at most one per
// frameGap, until the client leaves or the server stops; then it stops
// the screencast.
func (s *Server) browserFrames(w http.ResponseWriter, r *http.Request, b channel.BrowserControl) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	l := &latestFrame{ready: make(chan struct{}, 1)}
	stop, err := b.Screencast(ctx, l.put)
	if err != nil {
		s.browserFail(w, err)
		return
	}
	defer stop()
	st := startStream(w)
	ping := time.NewTicker(s.o.PingInterval)
	defer ping.Stop()
	var last time.Time
	for {
		if _, ok := next(s, r, st, ping, l.ready); !ok {
			return
		}
		if wait := frameGap - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			case <-s.quit:
				t.Stop()
				return
			}
		}
		f := l.take()
		if f == nil {
			continue
		}
		last = time.Now()
		if st.send(event{name: wire.EventFrame, data: []byte(base64.StdEncoding.EncodeToString(f))}) != nil {
			return
		}
	}
}
