package web

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/web/wire"
)

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

// jsonError reports whether w's body is the gateway's error shape.
func jsonError(w *httptest.ResponseRecorder) bool {
	var e wire.Error
	return json.Unmarshal(w.Body.Bytes(), &e) == nil && e.Error != ""
}

// browser is a BrowserControl that records what reaches it and refuses
// input until taken, as the real one does.
type browser struct {
	mu     sync.Mutex // guards the fields below
	state  channel.BrowserState
	opened []string
	inputs []string // "press 1 2", "key Enter ", "key  ab"
	// burst is how many frames Screencast sends before returning.
	burst   int
	stopped chan struct{} // closed by the screencast's stop
}

var _ channel.BrowserControl = (*browser)(nil)

func (b *browser) State(context.Context) (channel.BrowserState, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state, nil
}

func (b *browser) Take(context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state.Owner = true
	return nil
}

func (b *browser) Give(context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state.Owner = false
	return nil
}

func (b *browser) Open(_ context.Context, u string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.state.Owner {
		return channel.ErrNotTaken
	}
	b.opened = append(b.opened, u)
	b.state.URL = u
	return nil
}

func (b *browser) Mouse(_ context.Context, kind string, x, y float64) error {
	return b.input(fmt.Sprintf("%s %g %g", kind, x, y))
}

func (b *browser) Key(_ context.Context, key, text string) error {
	return b.input("key " + key + " " + text)
}

func (b *browser) input(s string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.state.Owner {
		return channel.ErrNotTaken
	}
	b.inputs = append(b.inputs, s)
	return nil
}

func (b *browser) Screencast(ctx context.Context, each func([]byte)) (func(), error) {
	for i := 1; i <= b.burst; i++ {
		each([]byte(fmt.Sprintf("frame %d", i)))
	}
	var once sync.Once
	return func() { once.Do(func() { close(b.stopped) }) }, nil
}

// TestBrowserRoutes: state, take, open, input and give, with the errors a
// client sees; a server without a browser answers 404 on every route.
func TestBrowserRoutes(t *testing.T) {
	b := &browser{state: channel.BrowserState{Running: true, URL: "https://example.com/", Title: "Example"}}
	s := newTestServer(t, Options{Browser: b})
	state := func(w *httptest.ResponseRecorder) wire.Browser {
		t.Helper()
		var st wire.Browser
		dec := json.NewDecoder(w.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&st); err != nil {
			t.Fatalf("decode %q: %v", w.Body, err)
		}
		return st
	}
	if w := do(s, "GET", "/api/browser", "", false); w.Code != 200 || state(w) != (wire.Browser{Running: true, URL: "https://example.com/", Title: "Example"}) {
		t.Errorf("GET /api/browser = %d; want 200 and the state", w.Code)
	}
	// The model has it: input and loads are refused with what to do.
	if w := do(s, "POST", "/api/browser/input", `{"kind":"press","x":1,"y":2}`, false); w.Code != 409 || !strings.Contains(w.Body.String(), "take the browser over first") {
		t.Errorf("input before take = %d %q; want 409 take the browser over first", w.Code, w.Body)
	}
	if w := do(s, "POST", "/api/browser/open", `{"url":"https://example.org/"}`, false); w.Code != 409 {
		t.Errorf("open before take = %d %q; want 409", w.Code, w.Body)
	}
	if w := do(s, "POST", "/api/browser/take", `{}`, false); w.Code != 200 || !state(w).Owner {
		t.Fatalf("take = %d; want 200 with owner true", w.Code)
	}
	for _, in := range []string{
		`{"kind":"press","x":10.5,"y":20}`, `{"kind":"release","x":10.5,"y":20}`, `{"kind":"move","x":0,"y":0}`,
		`{"kind":"key","key":"Enter"}`, `{"kind":"text","text":"ab"}`,
	} {
		if w := do(s, "POST", "/api/browser/input", in, false); w.Code != 204 {
			t.Errorf("input %s = %d %q; want 204", in, w.Code, w.Body)
		}
	}
	if w := do(s, "POST", "/api/browser/open", `{"url":"https://example.org/login"}`, false); w.Code != 200 || state(w).URL != "https://example.org/login" {
		t.Errorf("open = %d; want 200 with the new URL", w.Code)
	}
	if w := do(s, "POST", "/api/browser/give", `{}`, false); w.Code != 200 || state(w).Owner {
		t.Errorf("give = %d; want 200 with owner false", w.Code)
	}
	b.mu.Lock()
	got := fmt.Sprint(b.inputs, b.opened)
	b.mu.Unlock()
	if want := "[press 10.5 20 release 10.5 20 move 0 0 key Enter  key  ab] [https://example.org/login]"; got != want {
		t.Errorf("the browser got %s; want %s", got, want)
	}

	// Refused before they reach the browser.
	for _, tc := range []struct{ path, body string }{
		{"/api/browser/input", `{"kind":"click","x":1,"y":2}`},
		{"/api/browser/input", `{"kind":"press","x":1}`},
		{"/api/browser/input", `{"kind":"press","x":-1,"y":2}`},
		{"/api/browser/input", `{"kind":"press","x":1,"y":99999}`},
		{"/api/browser/input", `{"kind":"press","x":1,"y":2,"text":"a"}`},
		{"/api/browser/input", `{"kind":"key","key":"F12"}`},
		{"/api/browser/input", `{"kind":"key","key":"Enter","x":1}`},
		{"/api/browser/input", `{"kind":"key","key":"Enter","text":"a"}`},
		{"/api/browser/input", `{"kind":"text","text":""}`},
		{"/api/browser/input", `{"kind":"text","text":"a\nb"}`},
		{"/api/browser/input", `{"kind":"text","text":"` + strings.Repeat("a", maxInputText+1) + `"}`},
		{"/api/browser/input", `{"kind":"text","text":"a","button":"left"}`},
		{"/api/browser/input", `{"kind":"text","text":"a"}{}`},
		{"/api/browser/input", `{"kind":"text","text":"` + strings.Repeat("a", maxBrowserBody) + `"}`},
		{"/api/browser/open", `{"url":"javascript:alert(1)"}`},
		{"/api/browser/open", `{"url":"file:///etc/passwd"}`},
		{"/api/browser/open", `{"url":"example.com"}`},
		{"/api/browser/open", `{"url":"https://example.com","new_tab":true}`},
	} {
		if w := do(s, "POST", tc.path, tc.body, false); w.Code != 400 || !jsonError(w) {
			t.Errorf("POST %s %.80s = %d %q; want 400 with a JSON error", tc.path, tc.body, w.Code, w.Body)
		}
	}
	b.mu.Lock()
	if len(b.inputs) != 5 || len(b.opened) != 1 {
		t.Errorf("a refused request reached the browser: %v %v", b.inputs, b.opened)
	}
	b.mu.Unlock()

	// The guard holds for these routes as for every other.
	if w := do(s, "GET", "/api/browser", "", true); w.Code != 401 {
		t.Errorf("GET /api/browser without auth = %d; want 401", w.Code)
	}
	req := httptest.NewRequest("POST", "/api/browser/take", strings.NewReader("{}"))
	req.Host = "127.0.0.1:8787"
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "https://evil.example")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	if w.Code != 403 {
		t.Errorf("take from another origin = %d; want 403", w.Code)
	}
	req.Header.Del("Origin")
	req.Header.Set("Content-Type", "text/plain")
	w = httptest.NewRecorder()
	s.ServeHTTP(w, req)
	if w.Code != 415 {
		t.Errorf("take as text/plain = %d; want 415", w.Code)
	}

	off := newTestServer(t, Options{})
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/browser"}, {"POST", "/api/browser/take"}, {"POST", "/api/browser/give"}, {"POST", "/api/browser/open"},
		{"POST", "/api/browser/input"}, {"GET", "/api/browser/frames"},
	} {
		w := do(off, r.method, r.path, `{}`, false)
		if w.Code != 404 || !strings.Contains(w.Body.String(), "set [browser] enabled = true in config.toml") {
			t.Errorf("%s %s without a browser = %d %q; want 404 saying how to turn it on", r.method, r.path, w.Code, w.Body)
		}
	}
}

// TestBrowserFrames: the stream sends the newest frame, not every one
// (a burst of 50 before the stream reads is one frame), as base64 in a
// frame event; when the client goes, the screencast is stopped; and
// Shutdown ends a stream and stops its screencast too.
func TestBrowserFrames(t *testing.T) {
	for _, end := range []string{"client", "shutdown"} {
		t.Run(end, func(t *testing.T) {
			b := &browser{state: channel.BrowserState{Running: true}, burst: 50, stopped: make(chan struct{})}
			s := newTestServer(t, Options{Browser: b, PingInterval: time.Hour})
			ts := httptest.NewServer(s)
			defer ts.Close()
			req, _ := http.NewRequest("GET", ts.URL+"/api/browser/frames", nil)
			req.Host = "127.0.0.1:8787"
			req.Header.Set("Authorization", "Bearer "+testKey)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			res, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || ct != "text/event-stream; charset=utf-8" {
				t.Fatalf("GET /api/browser/frames = %d %s; want 200 text/event-stream", res.StatusCode, ct)
			}
			rd := bufio.NewReader(res.Body)
			var lines []string
			for len(lines) < 2 {
				l, err := rd.ReadString('\n')
				if err != nil {
					t.Fatalf("read the stream: %v (so far %q)", err, lines)
				}
				lines = append(lines, strings.TrimSuffix(l, "\n"))
			}
			want := []string{"event: frame", "data: " + base64.StdEncoding.EncodeToString([]byte("frame 50"))}
			if fmt.Sprint(lines) != fmt.Sprint(want) {
				t.Errorf("first event = %q; want the newest frame %q", lines, want)
			}
			if end == "client" {
				cancel()
			} else {
				sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer scancel()
				if err := s.Shutdown(sctx, time.Second); err != nil {
					t.Fatal(err)
				}
				if rest, _ := io.ReadAll(rd); strings.Contains(string(rest), "event: frame") {
					t.Errorf("after the first, the stream sent %q; the burst must be one frame", rest)
				}
			}
			select {
			case <-b.stopped:
			case <-time.After(10 * time.Second):
				t.Fatalf("the screencast was not stopped after the %s ended the stream", end)
			}
		})
	}
}

// FuzzBrowserInput: whatever body arrives, an input that passes the
// checks is one the browser can take as it is.
func FuzzBrowserInput(f *testing.F) {
	for _, s := range []string{`{"kind":"press","x":1,"y":2}`, `{"kind":"key","key":"Enter"}`, `{"kind":"text","text":"ab"}`,
		`{"kind":"text","text":"\u0000"}`, `{"kind":"move","x":1e308,"y":-0}`, `{"kind":"key","key":"Enter","x":null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var in wire.BrowserInput
		dec := json.NewDecoder(strings.NewReader(body))
		dec.DisallowUnknownFields()
		if dec.Decode(&in) != nil || checkInput(in) != nil {
			return
		}
		switch in.Kind {
		case channel.MousePress, channel.MouseRelease, channel.MouseMove:
			if in.X == nil || in.Y == nil || *in.X < 0 || *in.Y < 0 || *in.X > maxCoord || *in.Y > maxCoord || in.Key != "" || in.Text != "" {
				t.Errorf("accepted mouse input %+v", in)
			}
		case wire.InputKey:
			if !browserKeys[in.Key] || in.Text != "" || in.X != nil || in.Y != nil {
				t.Errorf("accepted key input %+v", in)
			}
		case wire.InputText:
			if in.Text == "" || len(in.Text) > maxInputText || containsControl(in.Text) || in.Key != "" || in.X != nil || in.Y != nil {
				t.Errorf("accepted text input %+v", in)
			}
		default:
			t.Errorf("accepted kind %q", in.Kind)
		}
	})
}
