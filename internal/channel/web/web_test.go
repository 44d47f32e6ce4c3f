package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/homard/homard/internal/channel"
)

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr string
		e    Exposure
		ok   bool
	}{
		{"127.0.0.1:8787", Exposure{}, true},
		{"127.5.6.7:8787", Exposure{}, true},
		{"[::1]:8787", Exposure{}, true},
		{"localhost:8787", Exposure{}, true},
		{"LOCALHOST:8787", Exposure{}, true},
		{"0.0.0.0:8787", Exposure{}, false},
		{":8787", Exposure{}, false},
		{"[::]:8787", Exposure{}, false},
		{"192.168.1.2:8787", Exposure{}, false},
		{"localhost.evil.example:8787", Exposure{}, false},
		{"127.0.0.1", Exposure{}, false}, // no port
		{"0.0.0.0:8787", Exposure{AllowRemote: true}, false},
		{"0.0.0.0:8787", Exposure{TLS: true}, false},
		{"0.0.0.0:8787", Exposure{AllowRemote: true, TLS: true}, false}, // no Host could name it
		{"0.0.0.0:8787", Exposure{AllowRemote: true, TLS: true, PublicOrigin: "https://homard.lan:8787"}, true},
		{"192.168.1.2:8787", Exposure{AllowRemote: true, TLS: true}, true},
		{"192.168.1.2:8787", Exposure{AllowRemote: true, TLS: true, PublicOrigin: "http://homard.lan"}, false},
		{"0.0.0.0:8787", Exposure{AllowRemote: true, BehindProxy: true}, false},
		{"0.0.0.0:8787", Exposure{AllowRemote: true, BehindProxy: true, PublicOrigin: "http://h.example"}, false},
		{"0.0.0.0:8787", Exposure{AllowRemote: true, BehindProxy: true, PublicOrigin: "https://h.example/app"}, false},
		{"0.0.0.0:8787", Exposure{AllowRemote: true, BehindProxy: true, PublicOrigin: "https://h.example"}, true},
		{"127.0.0.1:8787", Exposure{BehindProxy: true, PublicOrigin: "https://h.example"}, true},
	}
	for _, tt := range tests {
		err := CheckAddr(tt.addr, tt.e)
		if (err == nil) != tt.ok {
			t.Errorf("CheckAddr(%q, %+v) = %v; want ok=%v", tt.addr, tt.e, err, tt.ok)
		}
	}
}

func TestValidSession(t *testing.T) {
	for id, want := range map[string]bool{
		"web-1": true, "kitchen": true, "会话": true, "": false, "a b": false, "a\nb": false,
		"a\u202eb": false, strings.Repeat("x", 128): true, strings.Repeat("x", 129): false,
	} {
		if got := validSession(id); got != want {
			t.Errorf("validSession(%q) = %v; want %v", id, got, want)
		}
	}
}

// fake is a Runtime and Admin with nothing in them.
type fake struct{ channel.Admin }

func (fake) Turn(context.Context, channel.TurnRequest) (channel.TurnResult, error) {
	return channel.TurnResult{}, errors.New("no turns here")
}
func (fake) History(context.Context, string) ([]channel.Message, error) { return nil, nil }
func (fake) Info() channel.Info                                         { return channel.Info{Mode: "smart"} }
func (fake) VerifyToken(context.Context, string) (bool, error)          { return false, nil }

// TestPublicOriginAndUI: behind a proxy the public host and origin are
// allowed and the cookie is Secure; the UI file system is served at / to
// a logged-in browser only, its other files to anyone.
func TestPublicOriginAndUI(t *testing.T) {
	ui := fstest.MapFS{
		"index.html": {Data: []byte("<!doctype html><script src=app.js></script>")},
		"app.js":     {Data: []byte("console.log(1)")},
	}
	s, err := New(Options{Runtime: fake{}, Admin: fake{}, Addr: "127.0.0.1:8787", PublicOrigin: "https://h.example", UI: ui})
	if err != nil {
		t.Fatal(err)
	}
	get := func(target, host, origin string, c *http.Cookie) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", target, nil)
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if c != nil {
			req.AddCookie(c)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w
	}
	if w := get("/app.js", "h.example", "https://h.example", nil); w.Code != 200 || w.Body.String() != "console.log(1)" {
		t.Errorf("GET /app.js via the public host = %d %q; want the file", w.Code, w.Body)
	}
	if w := get("/app.js", "h.example", "http://h.example", nil); w.Code != 403 {
		t.Errorf("plain-http origin of an https public origin = %d; want 403", w.Code)
	}
	if w := get("/app.js", "other.example", "", nil); w.Code != 403 {
		t.Errorf("another host = %d; want 403", w.Code)
	}
	if w := get("/", "h.example", "", nil); !strings.Contains(w.Body.String(), "login URL") {
		t.Errorf("GET / without a session = %q; want the login page, not the UI", w.Body)
	}
	u, _ := url.Parse(s.LoginURL("https://h.example"))
	w := get(u.RequestURI(), "h.example", "", nil)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("login = %d", w.Code)
	}
	c := w.Result().Cookies()[0]
	if !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie behind an https proxy %+v; want Secure, HttpOnly, SameSite=Strict", c)
	}
	if w := get("/", "h.example", "", c); w.Code != 200 || !strings.Contains(w.Body.String(), "app.js") {
		t.Errorf("GET / logged in = %d %q; want the UI's index.html", w.Code, w.Body)
	}
	if w := get("/api/info", "h.example", "", c); w.Code != 200 {
		t.Errorf("GET /api/info logged in = %d", w.Code)
	}
}
