package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCallbacks: a callback path takes POST without a cookie or bearer
// (its handler authenticates), body capped; GET on it is 405, other
// /callbacks/ paths 404, and the Host and Origin checks still apply. The
// twin: /api stays closed to the same unauthenticated request.
func TestCallbacks(t *testing.T) {
	var got []int // body lengths the handler read
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		got = append(got, len(b))
		w.WriteHeader(http.StatusNoContent)
	})
	s, err := New(Options{Runtime: fake{}, Admin: fake{}, Addr: "127.0.0.1:8787", PublicOrigin: "https://h.example",
		Callbacks: map[string]http.Handler{"/callbacks/feishu": h}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, path, host, origin, body string
		want                                   int
	}{
		{"post", "POST", "/callbacks/feishu", "h.example", "", "{}", http.StatusNoContent},
		{"post, loopback host", "POST", "/callbacks/feishu", "127.0.0.1:8787", "", "{}", http.StatusNoContent},
		{"get", "GET", "/callbacks/feishu", "h.example", "", "", http.StatusMethodNotAllowed},
		{"other callback", "POST", "/callbacks/slack", "h.example", "", "{}", http.StatusNotFound},
		{"bad host", "POST", "/callbacks/feishu", "evil.example", "", "{}", http.StatusForbidden},
		{"bad origin", "POST", "/callbacks/feishu", "h.example", "https://evil.example", "{}", http.StatusForbidden},
		{"too big", "POST", "/callbacks/feishu", "h.example", "", strings.Repeat("a", maxBody+1), http.StatusRequestEntityTooLarge},
		{"api twin", "POST", "/api/chat", "h.example", "", "{}", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
		req.Host = tt.host
		req.Header.Set("Content-Type", "application/json")
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != tt.want {
			t.Errorf("%s: %s %s (Host %s) = %d %s; want %d", tt.name, tt.method, tt.path, tt.host, w.Code, w.Body, tt.want)
		}
	}
	if len(got) != 2 {
		t.Errorf("the handler read %d bodies in full; want 2 (the two accepted posts)", len(got))
	}
	for _, bad := range []string{"/api/x", "/callbacks/", "/callbacks/{x}"} {
		if _, err := New(Options{Runtime: fake{}, Admin: fake{}, Addr: "127.0.0.1:8787", Callbacks: map[string]http.Handler{bad: h}}); err == nil {
			t.Errorf("New with callback path %q: want an error", bad)
		}
	}
}
