// Package web is homard's HTTP gateway: a JSON + Server-Sent Events API
// (docs/API.md) over the channel contract, and the static web UI it is
// given. It imports only internal/channel and the standard library.
//
// Contract:
//   - Every request passes, in order: security headers; a Host check (the
//     listen address, its loopback names, or the public origin: anything
//     else is DNS rebinding → 403); an Origin check (absent, or http(s)://
//     an allowed host → else 403, event streams included); then, for
//     /api/*, authentication (a cookie session from the one-time login URL,
//     or a bearer token the Admin verifies → else 401) and, for POST and
//     DELETE, Content-Type application/json (→ else 415). The only
//     paths without that authentication but for the login page are
//     Options.Callbacks (POST only, body capped), which authenticate
//     their own requests.
//   - A turn runs on the server's context, not the request's: a client
//     that goes away only stops watching it. One turn per session at a
//     time (409); any number of sessions at once.
//   - A turn that needs an approval waits until the card is no longer
//     pending, however it was answered (this API, another tab, the CLI),
//     or until the approval wait lapses; it never records an answer itself.
//   - Tokens, cookies, message text and tool output are never logged.
package web

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/homard/homard/internal/channel"
)

// Options configure a Server.
type Options struct {
	// Runtime runs turns; Admin answers everything else. Both required.
	Runtime channel.Runtime
	Admin   channel.Admin
	// Addr is the address the server listens on (host:port, as bound:
	// with the real port). Required: Host and Origin checks use it.
	Addr string
	// PublicOrigin, when set, is the https origin a reverse proxy serves
	// the gateway under ("https://homard.example.com"); its host is
	// allowed too, and cookies are Secure.
	PublicOrigin string
	// TLS says the server itself serves HTTPS (cookies are Secure).
	TLS bool
	// UI is the web UI served at /; nil serves a placeholder page.
	UI fs.FS
	// Log receives request lines and errors; nil discards them.
	Log *slog.Logger
	// ApprovalWait is how long a turn waits for a card's answer. Zero
	// means 30 minutes.
	ApprovalWait time.Duration
	// PingInterval is how often an open event stream gets ": ping". Zero
	// means 15 seconds.
	PingInterval time.Duration
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// LocalKey, when set, is accepted as a bearer token besides the
	// Admin's: the serve's own key for local attach (serve.json). Only
	// it may ask for a login URL (POST /api/login).
	LocalKey string
	// Base is the address people open ("https://homard.example.com"),
	// used in login URLs. Empty means PublicOrigin, else http(s)://Addr.
	Base string
	// Callbacks are a chat platform's HTTP callbacks by path, each under
	// /callbacks/ (Feishu's callback mode: /callbacks/feishu). They are
	// the one exception to the cookie-or-bearer rule: each handler
	// authenticates its own requests (Feishu: a signature over the body).
	// The Host and Origin checks still apply; only POST reaches a handler
	// (else 405), its body capped at 1 MiB; any other /callbacks/ path is
	// 404. Nil means none.
	Callbacks map[string]http.Handler
	// Artifacts reads the owner's artifacts for GET /api/artifacts/{id}.
	// Nil means none: that route answers 404.
	Artifacts channel.ArtifactReader
	// Browser is the isolated browser the owner watches and takes over
	// (/api/browser…). Nil means it is off: those routes answer 404 and
	// the web UI hides its Browser view.
	Browser channel.BrowserControl
	// Lang is the config's lang: "en" or "zh" is the web UI's language;
	// "auto" or empty lets each browser choose by its own language
	// (navigator.language; Accept-Language for the server's pages).
	Lang string
}

// Server is the gateway's http.Handler and the turns it runs.
type Server struct {
	o       Options
	rt      channel.Runtime
	admin   channel.Admin
	log     *slog.Logger
	hosts   map[string]bool // allowed Host headers, lower case
	origins map[string]bool // allowed Origin headers, lower case
	secure  bool            // cookies get Secure
	handler http.Handler
	hub     *hub
	uiKeys  func() map[string]bool // the keys the UI's scripts translate (lang.go)

	base   context.Context    // turns run on it; cancelled by Shutdown
	cancel context.CancelFunc // cancels base
	quit   chan struct{}      // closed when streams must end
	once   sync.Once          // closes quit
	wg     sync.WaitGroup     // running turns

	mu       sync.Mutex           // guards the fields below
	turns    map[string]*turn     // running turn by session
	deleting map[string]bool      // sessions being deleted: no turn starts
	logins   map[string]time.Time // SHA-256 of unused login tokens → expiry
	cookies  map[string]time.Time // SHA-256 of session cookies → expiry
	stopping bool
}

// New returns a Server. It does not listen: serve its Handler on a
// listener bound to o.Addr.
func New(o Options) (*Server, error) {
	if o.Runtime == nil || o.Admin == nil {
		return nil, errors.New("web: Runtime and Admin are required") // lang:en
	}
	if o.ApprovalWait <= 0 {
		o.ApprovalWait = 30 * time.Minute
	}
	if o.PingInterval <= 0 {
		o.PingInterval = 15 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Base == "" && o.PublicOrigin != "" {
		o.Base = strings.TrimSuffix(o.PublicOrigin, "/")
	}
	if o.Base == "" {
		scheme := "http://"
		if o.TLS {
			scheme = "https://"
		}
		o.Base = scheme + o.Addr
	}
	s := &Server{
		o: o, rt: o.Runtime, admin: o.Admin, log: o.Log,
		hosts: map[string]bool{}, origins: map[string]bool{}, hub: newHub(),
		quit: make(chan struct{}), turns: map[string]*turn{}, logins: map[string]time.Time{},
		cookies: map[string]time.Time{}, deleting: map[string]bool{},
		secure: o.TLS,
		uiKeys: sync.OnceValue(func() map[string]bool { return scriptKeys(o.UI) }),
	}
	for p := range o.Callbacks {
		if !strings.HasPrefix(p, "/callbacks/") || len(p) == len("/callbacks/") || strings.ContainsAny(p, "{} ") {
			return nil, fmt.Errorf("web: callback path %q: want /callbacks/NAME", p) // lang:en
		}
	}
	s.base, s.cancel = context.WithCancel(context.Background())
	if err := s.allow(o.Addr, o.PublicOrigin); err != nil {
		return nil, err
	}
	s.handler = s.routes()
	return s, nil
}

// allow fills the allowed hosts and origins from the listen address and
// the public origin.
func (s *Server) allow(addr, public string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || port == "0" {
		return errors.New("web: Addr must be the bound host:port") // lang:en
	}
	add := func(h string) {
		h = strings.ToLower(h)
		s.hosts[h] = true
		s.origins["http://"+h] = true
		s.origins["https://"+h] = true
	}
	add(net.JoinHostPort(host, port))
	if isLoopbackHost(host) || host == "" || host == "0.0.0.0" || host == "::" {
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			add(net.JoinHostPort(h, port))
		}
	}
	if public != "" {
		u, err := url.Parse(public)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.Path != "" && u.Path != "/" {
			return errors.New("web: PublicOrigin must be an https origin such as https://homard.example.com") // lang:en
		}
		h := strings.ToLower(u.Host)
		s.hosts[h] = true
		s.origins["https://"+h] = true
		s.secure = true
	}
	return nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Shutdown stops the server's turns: no new turn starts; running ones get
// grace to finish (and be stored), then are cancelled (a cancelled turn
// stores nothing); then every open stream ends. It returns when all turns
// have returned or ctx ends. Shut the http.Server down after it.
func (s *Server) Shutdown(ctx context.Context, grace time.Duration) error {
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		s.cancel()
	case <-ctx.Done():
		s.cancel()
	}
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.cancel()
	s.once.Do(func() { close(s.quit) })
	return err
}
