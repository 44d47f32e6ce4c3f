package ui_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/web/wire"
)

// fakeBrowser is the isolated browser behind the fake server: a page of
// frameW×frameH CSS pixels drawn in one colour, refusing input until the
// owner takes it, as homard's does. inputs gets each Mouse and Key call.
type fakeBrowser struct {
	frame  []byte      // the JPEG every frame shows
	inputs chan string // "press 10.5 20", "text a", "key Enter"

	mu    sync.Mutex // guards state
	state channel.BrowserState
}

const frameW, frameH = 1280, 800

var _ channel.BrowserControl = (*fakeBrowser)(nil)

func newFakeBrowser(t *testing.T) *fakeBrowser {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, frameW, frameH))
	for y := range frameH {
		for x := range frameW {
			img.Set(x, y, color.RGBA{R: 200, G: 30, B: 30, A: 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return &fakeBrowser{frame: buf.Bytes(), inputs: make(chan string, 16),
		state: channel.BrowserState{Running: true, URL: "https://example.com/login", Title: "Log in <b>here</b>"}}
}

func (b *fakeBrowser) State(context.Context) (channel.BrowserState, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state, nil
}

func (b *fakeBrowser) set(owner bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state.Owner = owner
	return nil
}

func (b *fakeBrowser) Take(context.Context) error { return b.set(true) }
func (b *fakeBrowser) Give(context.Context) error { return b.set(false) }

func (b *fakeBrowser) owner() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state.Owner
}

func (b *fakeBrowser) Open(_ context.Context, u string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.state.Owner {
		return channel.ErrNotTaken
	}
	b.state.URL = u
	return nil
}

func (b *fakeBrowser) Mouse(_ context.Context, kind string, x, y float64) error {
	if !b.owner() {
		return channel.ErrNotTaken
	}
	b.inputs <- fmt.Sprintf("%s %g %g", kind, x, y)
	return nil
}

func (b *fakeBrowser) Key(_ context.Context, key, text string) error {
	if !b.owner() {
		return channel.ErrNotTaken
	}
	if key != "" {
		b.inputs <- "key " + key
	} else {
		b.inputs <- "text " + text
	}
	return nil
}

// Screencast sends the frame now and every 200 ms until stop or ctx ends.
func (b *fakeBrowser) Screencast(ctx context.Context, each func([]byte)) (func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			each(b.frame)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return cancel, nil
}

// browserRoutes serves the browser API of docs/API.md over f.browser
// (nil: 404 on every route, as homard serve without [browser]) and GET
// /api/artifacts/{id} over f.artifacts.
func (f *fakeServer) browserRoutes(mux *http.ServeMux) {
	with := func(h func(w http.ResponseWriter, r *http.Request, b *fakeBrowser)) http.HandlerFunc {
		return f.authed(func(w http.ResponseWriter, r *http.Request) {
			f.mu.Lock()
			b := f.browser
			f.mu.Unlock()
			if b == nil {
				writeJSON(w, http.StatusNotFound, wire.Error{Error: channel.ErrBrowserOff.Error()})
				return
			}
			h(w, r, b)
		})
	}
	answer := func(w http.ResponseWriter, r *http.Request, b *fakeBrowser, err error) {
		if err != nil {
			writeJSON(w, http.StatusConflict, wire.Error{Error: err.Error()})
			return
		}
		st, _ := b.State(r.Context())
		writeJSON(w, http.StatusOK, wire.NewBrowser(st))
	}
	mux.HandleFunc("GET /api/browser", with(func(w http.ResponseWriter, r *http.Request, b *fakeBrowser) { answer(w, r, b, nil) }))
	mux.HandleFunc("POST /api/browser/take", with(func(w http.ResponseWriter, r *http.Request, b *fakeBrowser) { answer(w, r, b, b.Take(r.Context())) }))
	mux.HandleFunc("POST /api/browser/give", with(func(w http.ResponseWriter, r *http.Request, b *fakeBrowser) { answer(w, r, b, b.Give(r.Context())) }))
	mux.HandleFunc("POST /api/browser/open", with(func(w http.ResponseWriter, r *http.Request, b *fakeBrowser) {
		var req wire.BrowserOpen
		if !decodeStrict(w, r, &req) {
			return
		}
		answer(w, r, b, b.Open(r.Context(), req.URL))
	}))
	mux.HandleFunc("POST /api/browser/input", with(func(w http.ResponseWriter, r *http.Request, b *fakeBrowser) {
		var in wire.BrowserInput
		if !decodeStrict(w, r, &in) {
			return
		}
		var err error
		switch in.Kind {
		case "key", "text":
			err = b.Key(r.Context(), in.Key, in.Text)
		case "press", "release", "move":
			if in.X == nil || in.Y == nil {
				writeJSON(w, http.StatusBadRequest, wire.Error{Error: "x, y: a mouse event needs both"})
				return
			}
			err = b.Mouse(r.Context(), in.Kind, *in.X, *in.Y)
		default:
			writeJSON(w, http.StatusBadRequest, wire.Error{Error: "kind: want press, release, move, key or text"})
			return
		}
		if err != nil {
			writeJSON(w, http.StatusConflict, wire.Error{Error: err.Error()})
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	mux.HandleFunc("GET /api/browser/frames", with(func(w http.ResponseWriter, r *http.Request, b *fakeBrowser) {
		frames := make(chan []byte, 1)
		stop, _ := b.Screencast(r.Context(), func(j []byte) {
			select {
			case frames <- j:
			default:
			}
		})
		defer stop()
		s := newStream(w)
		for {
			select {
			case <-r.Context().Done():
				return
			case j := <-frames:
				s.mu.Lock()
				fmt.Fprintf(w, "event: %s\ndata: %s\n\n", wire.EventFrame, base64.StdEncoding.EncodeToString(j))
				w.(http.Flusher).Flush()
				s.mu.Unlock()
			}
		}
	}))
	mux.HandleFunc("GET /api/artifacts/{id}", f.authed(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		a, ok := f.artifacts[r.PathValue("id")]
		f.mu.Unlock()
		if !ok {
			writeJSON(w, http.StatusNotFound, wire.Error{Error: "no such artifact"})
			return
		}
		w.Header().Set("Content-Security-Policy", "sandbox; default-src 'none'")
		w.Header().Set("Content-Type", a.MIME)
		w.Write(a.Data)
	}))
}

// decodeStrict decodes a request body as the gateway does: unknown
// fields refused.
func decodeStrict(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, wire.Error{Error: "invalid JSON body: " + err.Error()})
		return false
	}
	return true
}

// pngOf is a w×h PNG in one colour.
func pngOf(t *testing.T, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
