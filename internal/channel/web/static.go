package web

import (
	"io/fs"
	"net/http"
	"strings"
)

// pageHead starts the server's own small pages. No inline script or
// style: the CSP forbids both.
const pageHead = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>homard</title></head><body>`

const loginPage = pageHead + `<h1>homard</h1><p>Open the login URL printed by <code>homard serve</code> in this browser. It works once and for 10 minutes; run <code>homard login</code> on that machine for a new one.</p></body></html>`

const placeholderPage = pageHead + `<h1>homard</h1><p>You are logged in. This build has no web UI; the API is at <code>/api/</code> (see docs/API.md).</p></body></html>`

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
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		if r.URL.Path == "/" || r.URL.Path == "/index.html" {
			if !s.authenticated(r) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Header().Set("Cache-Control", "no-store")
				w.Write([]byte(loginPage))
				return
			}
			if files == nil {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write([]byte(placeholderPage))
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
