package app

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/llm/llmtest"
)

// TestGatewayRefusesWhatItMust runs every check against the real listener
// and handler chain: authentication, Host (DNS rebinding), Origin (also on
// event streams), content type and the headers every answer carries.
func TestGatewayRefusesWhatItMust(t *testing.T) {
	r := newTestRuntime(t, "smart")
	runServer(t, r, openAI(llmtest.Turn{Text: []string{"never reached"}}))
	g := startGateway(t, r)
	_, port, _ := strings.Cut(g.host, ":")
	revoked, tok, err := r.Owner.TokenCreate(context.Background(), "old")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Owner.TokenRevoke(context.Background(), tok.ID); err != nil {
		t.Fatal(err)
	}
	chat := `{"session":"s1","message":"hello"}`
	tests := []struct {
		name         string
		method, path string
		body, token  string
		host, origin string
		ctype        string
		want         int
	}{
		{name: "no token", method: "GET", path: "/api/info", want: 401},
		{name: "no token, events", method: "GET", path: "/api/events", want: 401},
		{name: "no token, chat", method: "POST", path: "/api/chat", body: chat, want: 401},
		{name: "wrong token", method: "GET", path: "/api/info", token: g.token + "x", want: 401},
		{name: "malformed token", method: "GET", path: "/api/info", token: "hmd_zz", want: 401},
		{name: "revoked token", method: "GET", path: "/api/info", token: revoked, want: 401},
		{name: "valid token", method: "GET", path: "/api/info", token: g.token, want: 200},
		{name: "localhost host", method: "GET", path: "/api/info", token: g.token, host: "localhost:" + port, want: 200},
		{name: "same origin", method: "GET", path: "/api/info", token: g.token, origin: "http://127.0.0.1:" + port, want: 200},
		{name: "rebinding host", method: "GET", path: "/api/info", token: g.token, host: "evil.example:" + port, want: 403},
		{name: "rebinding host, other port", method: "GET", path: "/api/info", token: g.token, host: "127.0.0.1:1", want: 403},
		{name: "rebinding host, login", method: "GET", path: "/login?t=x", host: "evil.example", want: 403},
		{name: "foreign origin POST", method: "POST", path: "/api/chat", body: chat, token: g.token, origin: "http://evil.example", want: 403},
		{name: "foreign origin approvals", method: "POST", path: "/api/approvals/x", body: `{"choice":"once"}`, token: g.token, origin: "https://evil.example", want: 403},
		{name: "foreign origin SSE events", method: "GET", path: "/api/events", token: g.token, origin: "http://evil.example", want: 403},
		{name: "null origin", method: "GET", path: "/api/events", token: g.token, origin: "null", want: 403},
		{name: "foreign origin, websocket upgrade", method: "GET", path: "/api/events", token: g.token, origin: "http://evil.example", want: 403},
		{name: "POST without JSON type", method: "POST", path: "/api/chat", body: chat, token: g.token, ctype: "text/plain", want: 415},
		{name: "DELETE without JSON type", method: "DELETE", path: "/api/memory/x", token: g.token, ctype: "application/x-www-form-urlencoded", want: 415},
		{name: "bad choice", method: "POST", path: "/api/approvals/x", body: `{"choice":"yes"}`, token: g.token, want: 400},
		{name: "unknown field", method: "POST", path: "/api/chat", body: `{"message":"hi","admin":true}`, token: g.token, want: 400},
	}
	var bodies []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := g.req(tt.method, tt.path, tt.body, tt.token)
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			if strings.Contains(tt.name, "websocket") {
				req.Header.Set("Connection", "Upgrade")
				req.Header.Set("Upgrade", "websocket")
			}
			resp, body := g.do(req)
			bodies = append(bodies, body)
			if resp.StatusCode != tt.want {
				t.Errorf("%s %s = %d %s; want %d", tt.method, tt.path, resp.StatusCode, body, tt.want)
			}
			h := resp.Header
			if got := h.Get("Content-Security-Policy"); !strings.Contains(got, "default-src 'self'") || !strings.Contains(got, "frame-ancestors 'none'") {
				t.Errorf("Content-Security-Policy = %q", got)
			}
			if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
				t.Errorf("headers %v; want nosniff and no-referrer", h)
			}
			if strings.HasPrefix(tt.path, "/api/") && resp.StatusCode != 403 && h.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control = %q on /api; want no-store", h.Get("Cache-Control"))
			}
		})
	}
	for _, b := range bodies {
		if strings.Contains(b, g.token) || strings.Contains(b, revoked) {
			t.Errorf("a response body holds a token: %s", b)
		}
	}
	if l := g.log.String(); strings.Contains(l, g.token) || strings.Contains(l, revoked) || strings.Contains(l, strings.TrimPrefix(g.token, "hmd_")[13:]) {
		t.Errorf("the log holds a token:\n%s", l)
	}
}

// TestGatewayLogin: the one-time URL sets an HttpOnly, SameSite=Strict
// cookie and sends the browser to / (the token leaves the address bar);
// it works once; the cookie then opens the API; nothing logs the token
// or the cookie.
func TestGatewayLogin(t *testing.T) {
	r := newTestRuntime(t, "smart")
	g := startGateway(t, r)
	u, err := url.Parse(g.login)
	if err != nil || u.Path != "/login" || len(u.Query().Get("t")) < 40 {
		t.Fatalf("login URL %q; want /login?t=<32 random bytes>", g.login)
	}
	secret := u.Query().Get("t")

	resp, body := g.do(g.req("GET", "/", "", ""))
	if resp.StatusCode != 200 || !strings.Contains(body, "login URL") || strings.Contains(body, "/api/") {
		t.Errorf("GET / without a session = %d %q; want the page that says how to log in, and no data", resp.StatusCode, body)
	}

	resp, body = g.do(g.req("GET", u.RequestURI(), "", ""))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("GET login = %d Location %q; want 303 to /", resp.StatusCode, resp.Header.Get("Location"))
	}
	if strings.Contains(body, secret) || strings.Contains(resp.Header.Get("Location"), secret) {
		t.Error("the login answer repeats the token")
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("Set-Cookie %v; want one cookie", resp.Header["Set-Cookie"])
	}
	c := cookies[0]
	raw := resp.Header.Get("Set-Cookie")
	if c.Name != "homard_session" || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure || len(c.Value) < 40 || c.Value == secret {
		t.Errorf("Set-Cookie %q; want homard_session, HttpOnly, SameSite=Strict, Path=/, not Secure on plain loopback, a new random value", raw)
	}

	resp, body = g.do(g.req("GET", u.RequestURI(), "", ""))
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Errorf("second use of the login URL = %d %v; want 401 and no cookie", resp.StatusCode, resp.Cookies())
	}
	if strings.Contains(body, secret) {
		t.Error("the refusal repeats the token")
	}

	req := g.req("GET", "/api/info", "", "")
	req.AddCookie(c)
	resp, body = g.do(req)
	if resp.StatusCode != 200 || !strings.Contains(body, `"mode":"smart"`) {
		t.Errorf("GET /api/info with the cookie = %d %s; want 200 with the info", resp.StatusCode, body)
	}
	req = g.req("GET", "/api/info", "", "")
	req.AddCookie(&http.Cookie{Name: "homard_session", Value: c.Value + "x"})
	if resp, _ := g.do(req); resp.StatusCode != 401 {
		t.Errorf("a forged cookie = %d; want 401", resp.StatusCode)
	}
	req = g.req("GET", "/", "", "")
	req.AddCookie(c)
	if resp, body := g.do(req); resp.StatusCode != 200 || !strings.Contains(body, `<script src="app.js"`) {
		t.Errorf("GET / with the cookie = %d %.300q; want the web UI", resp.StatusCode, body)
	}
	// Logging out ends the session.
	req = g.req("POST", "/logout", "{}", "")
	req.AddCookie(c)
	if resp, body := g.do(req); resp.StatusCode != http.StatusNoContent {
		t.Errorf("POST /logout = %d %s; want 204", resp.StatusCode, body)
	}
	req = g.req("GET", "/api/info", "", "")
	req.AddCookie(c)
	if resp, _ := g.do(req); resp.StatusCode != 401 {
		t.Errorf("the cookie after logout = %d; want 401", resp.StatusCode)
	}

	g.stop()
	l := g.log.String()
	if strings.Contains(strings.ReplaceAll(l, g.login, ""), secret) {
		t.Errorf("the log holds the login token outside the printed login line:\n%s", l)
	}
	if strings.Count(l, secret) != 1 {
		t.Errorf("the login token appears %d times in the output; want only the printed URL once", strings.Count(l, secret))
	}
	if strings.Contains(l, c.Value) || strings.Contains(l, g.token) {
		t.Errorf("the log holds the cookie or the API token:\n%s", l)
	}
}

// TestServeRefusesRemoteAddresses: beyond loopback only with
// --allow-remote and TLS or a proxy with an https public origin.
func TestServeRefusesRemoteAddresses(t *testing.T) {
	r := newTestRuntime(t, "smart")
	tests := []struct {
		name string
		o    ServeOptions
		want string
	}{
		{"all interfaces", ServeOptions{Addr: "0.0.0.0:0"}, "not a loopback address"},
		{"empty host", ServeOptions{Addr: ":0"}, "not a loopback address"},
		{"lan address", ServeOptions{Addr: "192.168.1.10:8787"}, "not a loopback address"},
		{"allowed but clear text", ServeOptions{Addr: "0.0.0.0:0", AllowRemote: true}, "needs --tls-cert"},
		{"proxy without origin", ServeOptions{Addr: "0.0.0.0:0", AllowRemote: true, BehindProxy: true}, "--public-origin must be https://"},
		{"proxy with http origin", ServeOptions{Addr: "0.0.0.0:0", AllowRemote: true, BehindProxy: true, PublicOrigin: "http://h.example"}, "--public-origin must be https://"},
		{"half TLS", ServeOptions{Addr: "127.0.0.1:0", TLSCert: "c.pem"}, "go together"},
		{"every interface with TLS, no public origin", ServeOptions{Addr: "0.0.0.0:0", AllowRemote: true, TLSCert: "c.pem", TLSKey: "k.pem"}, "pass --public-origin"},
		{"public origin without proxy or TLS", ServeOptions{Addr: "127.0.0.1:0", PublicOrigin: "https://h.example"}, "is for --behind-proxy or --tls-cert"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // if it listened anyway, return at once
			tt.o.Out, tt.o.Log = &syncBuffer{}, &syncBuffer{}
			err := r.Serve(ctx, tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Serve(%+v) = %v; want an error containing %q", tt.o, err, tt.want)
			}
		})
	}
}

// TestServeFindsTheRunningServe: a serve.json of a live process refuses a
// second serve on the home; one of a process that is gone is ignored (a
// crashed serve) and nothing attaches to it.
func TestServeFindsTheRunningServe(t *testing.T) {
	r := newTestRuntime(t, "smart")
	write := func(pid int) {
		b, _ := json.Marshal(ServeInfo{PID: pid, Addr: "127.0.0.1:1", URL: "http://127.0.0.1:1", Key: "k"})
		if err := os.WriteFile(filepath.Join(r.Paths.DataDir, "serve.json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(1) // init: always alive
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := r.Serve(ctx, ServeOptions{Addr: "127.0.0.1:0", Out: &syncBuffer{}, Log: &syncBuffer{}})
	if !errors.Is(err, ErrServeRunning) || !strings.Contains(err.Error(), "pid 1") {
		t.Errorf("Serve with a live serve.json: %v; want ErrServeRunning naming pid 1", err)
	}
	if _, _, ok := r.Attached(); !ok {
		t.Error("Attached() with a live serve.json = false")
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	write(gone.Process.Pid)
	if si, ok := r.RunningServe(); ok {
		t.Errorf("RunningServe() with a dead pid = %+v; want none", si)
	}
	if _, _, ok := r.Attached(); ok {
		t.Error("Attached() with a dead pid = true")
	}
}
