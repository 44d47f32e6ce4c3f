package web

import (
	"io/fs"
	"net/http"
	"strings"

	"github.com/homard/homard/internal/lang"
)

// The server's own small pages (see page): no inline script or style,
// the CSP forbids both. Catalog keys.
var (
	loginPage       = lang.N("Open the login URL printed by <code>homard serve</code> in this browser. It works once and for 10 minutes; run <code>homard login</code> on that machine for a new one.")
	placeholderPage = lang.N("You are logged in. This build has no web UI; the API is at <code>/api/</code> (see docs/API.md).")
)

// static serves the UI. "/" without a session serves a page that says how
// to log in and holds no data; the UI's other files hold no data either
// and are served to anyone who passed the Host and Origin checks.
func (s *Server) static() http.Handler {
	var files http.Handler
	if s.o.UI != nil {
		files = http.FileServerFS(s.o.UI)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")                             // lang:en
			writeError(w, http.StatusMethodNotAllowed, "method not allowed") // lang:en
			return
		}
		if r.URL.Path == "/" || r.URL.Path == "/index.html" {
			if !s.authenticated(r) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8") // lang:en
				w.Header().Set("Cache-Control", "no-store")
				p := s.pagePrinter(r)
				w.Write([]byte(page(p, "homard", p.T(loginPage))))
				return
			}
			if files == nil {
				w.Header().Set("Content-Type", "text/html; charset=utf-8") // lang:en
				p := s.pagePrinter(r)
				w.Write([]byte(page(p, "homard", p.T(placeholderPage))))
				return
			}
			if r.URL.Path == "/index.html" { // FileServer would redirect to /
				r.URL.Path = "/"
			}
		}
		if files == nil || strings.Contains(r.URL.Path, "..") {
			http.NotFound(w, r)
			return
		}
		if _, err := fs.Stat(s.o.UI, "index.html"); err != nil && r.URL.Path == "/" {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
}
