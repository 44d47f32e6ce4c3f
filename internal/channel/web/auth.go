package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Cookie and token lifetimes.
const (
	cookieName = "homard_session"
	loginLife  = 10 * time.Minute
	cookieLife = 7 * 24 * time.Hour
)

// csp forbids inline script and every foreign source: the UI's script is
// a separate file, and model output is never fetched.
const csp = "default-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'" // lang:en

// randomToken returns 32 random bytes, base64url.
func randomToken() string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// digest is the map key a secret is kept under: a memory dump shows no
// usable token, and lookups do not compare secrets byte by byte.
func digest(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// LoginURL makes a new one-time login token, valid for 10 minutes, and
// returns the URL that exchanges it for a session cookie. base is the
// address the owner opens ("http://127.0.0.1:8787").
func (s *Server) LoginURL(base string) string {
	tok := randomToken()
	s.mu.Lock()
	now := s.o.Now()
	for k, exp := range s.logins { // drop lapsed ones
		if !now.Before(exp) {
			delete(s.logins, k)
		}
	}
	s.logins[digest(tok)] = now.Add(loginLife)
	s.mu.Unlock()
	return strings.TrimSuffix(base, "/") + "/login?t=" + url.QueryEscape(tok)
}

// login exchanges a one-time token for a session cookie and sends the
// browser to / so the token leaves the address bar (and, with
// Referrer-Policy no-referrer, is never sent on).
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	key := digest(r.URL.Query().Get("t"))
	s.mu.Lock()
	exp, ok := s.logins[key]
	delete(s.logins, key) // single use, even when lapsed
	now := s.o.Now()
	ok = ok && now.Before(exp)
	var id string
	if ok {
		id = randomToken()
		s.cookies[digest(id)] = now.Add(cookieLife)
	}
	s.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "text/html; charset=utf-8") // lang:en
		w.WriteHeader(http.StatusUnauthorized)
		p := s.pagePrinter(r)
		w.Write([]byte(page(p, p.T("This login link is not valid"), p.T("It was used already, it expired (links last 10 minutes), or it was mistyped. Run <code>homard login</code> on the machine running <code>homard serve</code> for a new one."))))
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: id, Path: "/", HttpOnly: true, Secure: s.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(cookieLife / time.Second),
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout ends the cookie session.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		s.mu.Lock()
		delete(s.cookies, digest(c.Value))
		s.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, Secure: s.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	w.WriteHeader(http.StatusNoContent)
}

// authenticated reports whether r carries a live session cookie or a
// valid API token.
func (s *Server) authenticated(r *http.Request) bool {
	if c, err := r.Cookie(cookieName); err == nil && c.Value != "" {
		key := digest(c.Value)
		s.mu.Lock()
		exp, ok := s.cookies[key]
		if ok && !s.o.Now().Before(exp) {
			delete(s.cookies, key)
			ok = false
		}
		s.mu.Unlock()
		if ok {
			return true
		}
	}
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && tok != "" {
		if s.local(r) {
			return true
		}
		valid, err := s.admin.VerifyToken(r.Context(), tok)
		if err != nil {
			s.log.Error("verify api token", "err", err)
		}
		return valid
	}
	return false
}

// local reports whether r carries the serve's local key (serve.json,
// readable by the owner's account only).
func (s *Server) local(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && s.o.LocalKey != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.o.LocalKey)) == 1
}

// loginLink answers POST /api/login with a fresh one-time login URL, as
// serve printed on start: `homard login` asks for one without a restart.
// Only the local key may: a process of the owner's account on this
// machine, which could read serve.json. An API token or a browser session
// gets 403, so a leaked token cannot mint browser sessions.
func (s *Server) loginLink(w http.ResponseWriter, r *http.Request) {
	if !s.local(r) {
		writeError(w, http.StatusForbidden, "only `homard login` on the machine running homard serve can create a login link") // lang:en
		return
	}
	u := s.LoginURL(s.o.Base)
	writeJSON(w, http.StatusOK, map[string]any{"url": u, "expires_at": s.o.Now().Add(loginLife).UTC()})
}

// guard is the chain every request passes before a route: headers, Host,
// Origin; then, for /api/, authentication and the JSON content type.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if !s.hosts[strings.ToLower(r.Host)] {
			writeError(w, http.StatusForbidden, "this server answers only to its own address (Host header refused)") // lang:en
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !s.origins[strings.ToLower(o)] {
			writeError(w, http.StatusForbidden, "cross-origin request refused") // lang:en
			return
		}
		if strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/login" || r.URL.Path == "/logout" {
			h.Set("Cache-Control", "no-store")
		}
		if strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/logout" {
			if !s.authenticated(r) {
				writeError(w, http.StatusUnauthorized, "not logged in: open the login URL homard serve printed, or send Authorization: Bearer <token> from `homard token create`") // lang:en
				return
			}
			if r.Method == http.MethodPost || r.Method == http.MethodDelete {
				mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
				if err != nil || mt != "application/json" {
					writeError(w, http.StatusUnsupportedMediaType, "send Content-Type: application/json") // lang:en
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// logged writes one line per request: method, path (never the query,
// which holds the login token), status and duration.
func (s *Server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		s.log.Info("http", "method", r.Method, "path", r.URL.Path, "status", sw.code(), "dur", time.Since(start).Round(time.Microsecond))
	})
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// Unwrap lets http.ResponseController reach Flush.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
