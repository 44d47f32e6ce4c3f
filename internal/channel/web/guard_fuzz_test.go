package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzGuard throws arbitrary Host, Origin, method, path and content type
// at the real handler chain without credentials and checks the contract:
// a Host or Origin outside the allowed set is always 403; nothing under
// /api/ is ever answered 2xx without a session or token.
func FuzzGuard(f *testing.F) {
	for _, seed := range [][5]string{
		{"127.0.0.1:8787", "", "GET", "/api/info", ""},
		{"localhost:8787", "http://localhost:8787", "POST", "/api/chat", "application/json"},
		{"evil.example:8787", "", "GET", "/api/events", ""},
		{"127.0.0.1:8787", "null", "GET", "/", ""},
		{"127.0.0.1:8787.", "", "GET", "/api/sessions", ""},
		{"[::1]:8787", "https://[::1]:8787", "DELETE", "/api/memory/x", "text/plain"},
		{"127.0.0.1:8787", "http://127.0.0.1:8787/", "GET", "/api//info", ""},
		{"127.0.0.1:8787", "", "GET", "/API/info", ""},
		{"127.0.0.1:8787", "", "GET", "/./api/info", ""},
		{"127.0.0.1:8787", "", "GET", "/login", ""},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3], seed[4])
	}
	s, err := New(Options{Runtime: fake{}, Admin: fake{}, Addr: "127.0.0.1:8787"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, host, origin, method, path, ctype string) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequest(method, "http://127.0.0.1:8787"+path, nil)
		if err != nil {
			return // not a request a client could send
		}
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		hostOK := s.hosts[strings.ToLower(host)]
		originOK := origin == "" || s.origins[strings.ToLower(origin)]
		if (!hostOK || !originOK) && w.Code != http.StatusForbidden {
			t.Fatalf("Host %q Origin %q %s %s = %d; want 403", host, origin, method, path, w.Code)
		}
		if strings.HasPrefix(req.URL.Path, "/api/") && w.Code < 300 {
			t.Fatalf("%s %s without credentials = %d; want a refusal", method, req.URL.Path, w.Code)
		}
	})
}
