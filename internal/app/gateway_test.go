package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// gw is a running `homard serve` on a real loopback listener, driven
// through the real handler chain.
type gw struct {
	t      *testing.T
	r      *Runtime
	base   string
	login  string
	host   string // host:port as bound
	log    *syncBuffer
	token  string // a bearer token from TokenCreate
	cancel context.CancelFunc
	done   chan error
}

// syncBuffer is a bytes.Buffer safe for the server's log writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startGateway(t *testing.T, r *Runtime) *gw {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := r.Owner.TokenCreate(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	g := &gw{t: t, r: r, log: &syncBuffer{}, token: tok, done: make(chan error, 1), host: ln.Addr().String()}
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	ready := make(chan struct{})
	go func() {
		g.done <- r.Serve(ctx, ServeOptions{
			Listener: ln, Out: g.log, Log: g.log, Grace: 2 * time.Second,
			OnListen: func(base, login string) { g.base, g.login = base, login; close(ready) },
		})
	}()
	select {
	case <-ready:
	case err := <-g.done:
		t.Fatalf("Serve: %v", err)
	}
	t.Cleanup(func() { g.stop() })
	return g
}

// stop shuts the server down and waits for Serve to return.
func (g *gw) stop() error {
	g.cancel()
	select {
	case err, ok := <-g.done:
		if ok {
			close(g.done)
		}
		return err
	case <-time.After(20 * time.Second):
		g.t.Fatal("Serve did not return after shutdown")
	}
	return nil
}

// req builds a request with the bearer token (unless token is "").
func (g *gw) req(method, path, body, token string) *http.Request {
	g.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, g.base+path, rd)
	if err != nil {
		g.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (g *gw) do(req *http.Request) (*http.Response, string) {
	g.t.Helper()
	resp, err := noRedirect.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// getJSON GETs path with the token and decodes a 200 answer into v.
func (g *gw) getJSON(path string, v any) {
	g.t.Helper()
	resp, body := g.do(g.req("GET", path, "", g.token))
	if resp.StatusCode != 200 {
		g.t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		g.t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

// sseEvent is one parsed Server-Sent Event, or a comment (name "").
type sseEvent struct {
	name, data, comment string
}

// sse reads a stream's events as they come.
type sse struct {
	t    *testing.T
	resp *http.Response
	ch   chan sseEvent
}

func (g *gw) stream(req *http.Request) *sse {
	g.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		g.t.Fatalf("%s %s = %d %s; want a stream", req.Method, req.URL.Path, resp.StatusCode, b)
	}
	s := &sse{t: g.t, resp: resp, ch: make(chan sseEvent, 1024)}
	go func() {
		defer close(s.ch)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					s.ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				s.ch <- sseEvent{comment: strings.TrimSpace(line[1:])}
			case strings.HasPrefix(line, "event: "):
				ev.name = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[len("data: "):]
			}
		}
	}()
	g.t.Cleanup(func() { resp.Body.Close() })
	return s
}

// until reads events until one named name arrives and returns it, with
// everything seen on the way. It fails on a stream end or after 20s (a
// hang, not a performance limit).
func (s *sse) until(name string) (sseEvent, []sseEvent) {
	s.t.Helper()
	var seen []sseEvent
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-s.ch:
			if !ok {
				s.t.Fatalf("stream ended before %q; saw %v", name, seen)
			}
			if ev.name == name || (name == ":" && ev.comment != "") {
				return ev, seen
			}
			seen = append(seen, ev)
		case <-timeout:
			s.t.Fatalf("no %q event in 20s; saw %v", name, seen)
		}
	}
}

func (s *sse) close() { s.resp.Body.Close() }

func decode[T any](t *testing.T, data string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return v
}

// TestGatewaySessionsShowPrivacy: GET /api/sessions says which sessions
// have read the owner's data (their fetches ask), and only those.
func TestGatewaySessionsShowPrivacy(t *testing.T) {
	r := newTestRuntime(t, "autopilot")
	writeWorkspaceFile(t, r, "notes/a.md", "private\n")
	ctx := context.Background()
	for _, c := range []CallRequest{
		{Tool: "read_file", Args: `{"path":"notes/a.md"}`, Session: "reads"},
		{Tool: "current_time", Args: `{}`, Session: "clock"},
	} {
		if out, err := r.Call(ctx, c); err != nil || out.Decision != "ran" {
			t.Fatalf("Call(%+v) = %+v, %v", c, out, err)
		}
	}
	g := startGateway(t, r)
	var list []struct {
		ID           string     `json:"id"`
		PrivateSince *time.Time `json:"private_since"`
	}
	g.getJSON("/api/sessions", &list)
	got := map[string]bool{}
	for _, s := range list {
		got[s.ID] = s.PrivateSince != nil
	}
	if !got["reads"] || got["clock"] || len(got) != 2 {
		t.Fatalf("sessions private = %v; want reads: true, clock: false", got)
	}
}
