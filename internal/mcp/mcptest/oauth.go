package mcptest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// AuthServer is a fake OAuth 2.1 authorization server as the MCP
// authorization spec has one: RFC 8414 metadata, dynamic client
// registration (RFC 7591, when Register is set), /authorize that answers
// at once with a redirect to the client's registered redirect_uri
// carrying a code and the state (a test's "browser" follows it), and
// /token for the authorization_code grant (PKCE S256 checked) and the
// refresh_token grant (refresh tokens rotate). Its access tokens expire
// after ExpiresIn.
type AuthServer struct {
	// URL is the server's base address (the issuer); set it once the
	// httptest server runs.
	URL string
	// Register offers dynamic client registration at /register.
	Register bool
	// ExpiresIn is an access token's lifetime. Zero means an hour.
	ExpiresIn time.Duration
	// Meta, when set, changes the metadata it serves (a hostile or broken
	// server: another issuer, no PKCE).
	Meta func(map[string]any)

	mu        sync.Mutex // guards the fields below
	n         int
	clients   map[string][]string // client_id → redirect_uris
	codes     map[string]grant
	access    map[string]time.Time // access token → expiry
	refresh   map[string]string    // refresh token → client_id
	refreshes int
	refused   []string // why /token refused, in order
}

type grant struct{ client, redirect, challenge string }

// NewAuthServer returns a server with client "pre" registered for any
// loopback redirect.
func NewAuthServer(register bool) *AuthServer {
	return &AuthServer{Register: register, clients: map[string][]string{"pre": nil}, codes: map[string]grant{},
		access: map[string]time.Time{}, refresh: map[string]string{}}
}

// Valid reports whether tok is an access token it issued that has not
// expired or been revoked.
func (a *AuthServer) Valid(tok string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.access[tok]
	return ok && time.Now().Before(exp)
}

// Revoke makes every access token invalid (refresh tokens stay valid).
func (a *AuthServer) Revoke() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.access)
}

// Refreshes counts the refresh_token grants it answered.
func (a *AuthServer) Refreshes() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refreshes
}

// Refused returns why /token refused each request it refused.
func (a *AuthServer) Refused() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.refused)
}

// Tokens returns every access and refresh token it issued.
func (a *AuthServer) Tokens() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for t := range a.access {
		out = append(out, t)
	}
	for t := range a.refresh {
		out = append(out, t)
	}
	return out
}

func (a *AuthServer) next(prefix string) string {
	a.n++
	return fmt.Sprintf("%s-%04d-0123456789abcdef", prefix, a.n)
}

func (a *AuthServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		meta := map[string]any{"issuer": a.URL, "authorization_endpoint": a.URL + "/authorize", "token_endpoint": a.URL + "/token",
			"code_challenge_methods_supported": []string{"S256"}, "response_types_supported": []string{"code"},
			"scopes_supported": []string{"tools", "offline_access"}, "token_endpoint_auth_methods_supported": []string{"none"}}
		if a.Register {
			meta["registration_endpoint"] = a.URL + "/register"
		}
		if a.Meta != nil {
			a.Meta(meta)
		}
		writeJSON(w, http.StatusOK, meta)
	case "/register":
		a.register(w, r)
	case "/authorize":
		a.authorize(w, r)
	case "/token":
		a.token(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (a *AuthServer) register(w http.ResponseWriter, r *http.Request) {
	var m struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if !a.Register || r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil || len(m.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	a.mu.Lock()
	id := a.next("client")
	a.clients[id] = m.RedirectURIs
	a.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": m.RedirectURIs, "token_endpoint_auth_method": "none"})
}

func (a *AuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	defer a.mu.Unlock()
	redirects, known := a.clients[q.Get("client_id")]
	redirect := q.Get("redirect_uri")
	okRedirect := slices.Contains(redirects, redirect) || (redirects == nil && strings.HasPrefix(redirect, "http://127.0.0.1:"))
	switch {
	case !known || !okRedirect:
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "want response_type=code and a PKCE S256 code_challenge", http.StatusBadRequest)
		return
	}
	code := a.next("code")
	a.codes[code] = grant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge")}
	to, _ := url.Parse(redirect)
	v := to.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	to.RawQuery = v.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

func (a *AuthServer) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	if id, _, ok := r.BasicAuth(); ok { // client_secret_basic's spelling of a public client
		f.Set("client_id", id)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	refuse := func(why string) {
		a.refused = append(a.refused, why)
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": why})
	}
	var client string
	switch f.Get("grant_type") {
	case "authorization_code":
		g, ok := a.codes[f.Get("code")]
		delete(a.codes, f.Get("code")) // a code is good once, even when refused
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case !ok:
			refuse("unknown code")
			return
		case g.client != f.Get("client_id") || g.redirect != f.Get("redirect_uri"):
			refuse("client_id or redirect_uri differ from the authorization request")
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			refuse("code_verifier does not match the code_challenge")
			return
		}
		client = g.client
	case "refresh_token":
		c, ok := a.refresh[f.Get("refresh_token")]
		if !ok {
			refuse("unknown refresh token")
			return
		}
		delete(a.refresh, f.Get("refresh_token"))
		a.refreshes++
		client = c
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	life := a.ExpiresIn
	if life <= 0 {
		life = time.Hour
	}
	at, rt := a.next("access"), a.next("refresh")
	a.access[at] = time.Now().Add(life)
	a.refresh[rt] = client
	writeJSON(w, http.StatusOK, map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt, "expires_in": int(life.Seconds())})
}

// Protected is the streamable-HTTP MCP server next (an HTTP) behind
// auth's tokens: a request without a valid bearer token gets 401 with a
// WWW-Authenticate naming its protected-resource metadata (RFC 9728),
// which it serves at /.well-known/oauth-protected-resource/PATH.
type Protected struct {
	URL  string // the server's base address; set it once the httptest server runs
	Path string // the MCP endpoint's path, such as "/mcp"
	Auth *AuthServer
	Next http.Handler
	// Meta, when set, changes the protected-resource metadata it serves.
	Meta func(map[string]any)
}

func (p *Protected) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	meta := "/.well-known/oauth-protected-resource" + p.Path
	if r.URL.Path == meta {
		m := map[string]any{"resource": p.URL + p.Path, "authorization_servers": []string{p.Auth.URL}, "scopes_supported": []string{"tools"}}
		if p.Meta != nil {
			p.Meta(m)
		}
		writeJSON(w, http.StatusOK, m)
		return
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !p.Auth.Valid(tok) {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q, scope="tools"`, p.URL+meta))
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	p.Next.ServeHTTP(w, r)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// OAuthRig is an AuthServer and, behind its tokens, the HTTP server of a
// Spec file, each on its own loopback httptest server.
type OAuthRig struct {
	Auth      *AuthServer
	Protected *Protected
	Server    *HTTP  // the MCP server; it records every Authorization header
	URL       string // the MCP endpoint, ending in /mcp
	Origin    string // the MCP server's scheme://host:port
	closes    []func()
}

// NewOAuthRig starts the two servers; Close stops them.
func NewOAuthRig(specPath string, register bool) *OAuthRig {
	as := NewAuthServer(register)
	asSrv := httptest.NewServer(as)
	as.URL = asSrv.URL
	inner := NewHTTP(specPath)
	p := &Protected{Path: "/mcp", Auth: as, Next: inner}
	pSrv := httptest.NewServer(p)
	p.URL = pSrv.URL
	return &OAuthRig{Auth: as, Protected: p, Server: inner, URL: pSrv.URL + "/mcp", Origin: pSrv.URL, closes: []func(){asSrv.Close, pSrv.Close}}
}

// Close stops both servers.
func (r *OAuthRig) Close() {
	for _, c := range r.closes {
		c()
	}
}

// Browse plays the person's browser: it opens authURL, which the
// AuthServer answers with a redirect to the client's loopback listener,
// and follows it there.
func Browse(authURL string) error {
	resp, err := http.Get(authURL)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the browser ended on status %d", resp.StatusCode)
	}
	return nil
}
