package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel"
)

// artifacts is an ArtifactReader over a map: the owner's artifacts.
type artifacts map[string]channel.Artifact

func (a artifacts) Artifact(_ context.Context, id string) (channel.Artifact, error) {
	x, ok := a[id]
	if !ok {
		return channel.Artifact{}, channel.ErrNotFound
	}
	return x, nil
}

const testKey = "local-key"

// newTestServer is a server with the fake Runtime and Admin, the given
// options' Artifacts and Browser, and testKey as its local key.
func newTestServer(t *testing.T, o Options) *Server {
	t.Helper()
	o.Runtime, o.Admin, o.Addr, o.LocalKey = fake{}, fake{}, "127.0.0.1:8787", testKey
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// do sends a request to s, with the local key unless anonymous.
func do(s *Server, method, target, body string, anonymous bool) *httptest.ResponseRecorder {
	var req *http.Request
	if body == "" {
		req = httptest.NewRequest(method, target, nil)
	} else {
		req = httptest.NewRequest(method, target, stringsReader(body))
	}
	req.Host = "127.0.0.1:8787"
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	if !anonymous {
		req.Header.Set("Authorization", "Bearer "+testKey)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	return w
}

// TestArtifactRoute: each kind of artifact is served so that nothing in
// it can run on the gateway's origin.
func TestArtifactRoute(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	s := newTestServer(t, Options{Artifacts: artifacts{
		"text": {ID: "text", Tool: "fetch", Text: "<script>alert(1)</script> the whole page"},
		"png":  {ID: "png", Tool: "browser_screenshot", MIME: "image/png", Name: "screenshot.png", Data: png},
		"html": {ID: "html", Tool: "browser_save", MIME: "text/html", Name: "../evil \"page\".html", Data: []byte("<script>alert(1)</script>")},
		"svg":  {ID: "svg", Tool: "x", MIME: "image/svg+xml", Data: []byte("<svg onload=alert(1)>")},
	}})
	for _, tc := range []struct {
		id, ctype, disposition, body string
	}{
		{"text", "text/plain; charset=utf-8", "", "<script>alert(1)</script> the whole page"},
		{"png", "image/png", "inline; filename=screenshot.png", string(png)},
		{"html", "application/octet-stream", "attachment; filename=_evil__page_.html", "<script>alert(1)</script>"},
		{"svg", "application/octet-stream", "attachment; filename=artifact-svg", "<svg onload=alert(1)>"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			w := do(s, "GET", "/api/artifacts/"+tc.id, "", false)
			h := w.Header()
			if w.Code != 200 || w.Body.String() != tc.body {
				t.Fatalf("GET /api/artifacts/%s = %d %q; want 200 %q", tc.id, w.Code, w.Body, tc.body)
			}
			for k, want := range map[string]string{
				"Content-Type": tc.ctype, "Content-Disposition": tc.disposition,
				"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox; default-src 'none'",
			} {
				if got := h.Get(k); got != want {
					t.Errorf("GET /api/artifacts/%s: %s = %q; want %q", tc.id, k, got, want)
				}
			}
		})
	}
	if w := do(s, "GET", "/api/artifacts/nope", "", false); w.Code != 404 || !jsonError(w) {
		t.Errorf("unknown artifact = %d %q; want 404 with a JSON error", w.Code, w.Body)
	}
	if w := do(s, "GET", "/api/artifacts/text", "", true); w.Code != 401 || w.Body.String() == "" || w.Header().Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("artifact without auth = %d %q; want 401 and no artifact", w.Code, w.Body)
	}
	off := newTestServer(t, Options{})
	if w := do(off, "GET", "/api/artifacts/text", "", false); w.Code != 404 || !jsonError(w) {
		t.Errorf("artifact on a server without artifacts = %d %q; want 404 with a JSON error", w.Code, w.Body)
	}
}

// TestFileName: what Content-Disposition may offer.
func TestFileName(t *testing.T) {
	for _, tc := range []struct{ name, id, want string }{
		{"screenshot.png", "a1", "screenshot.png"},
		{"", "a1", "artifact-a1"},
		{"../../etc/passwd", "a1", "_.._etc_passwd"},
		{".bashrc", "a1", "bashrc"},
		{"截图.png", "a1", "______.png"},
		{"a\r\nb.txt", "a1", "a__b.txt"},
		{"...", "a/1", "artifact-a_1"},
		{string(make([]byte, 300)) + ".png", "x", strings.Repeat("_", 96) + ".png"},
	} {
		if got := fileName(tc.name, tc.id); got != tc.want {
			t.Errorf("fileName(%q, %q) = %q; want %q", tc.name, tc.id, got, tc.want)
		}
	}
}
