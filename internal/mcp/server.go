package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is a connection to one configured MCP server that restarts it
// when it stops. Its methods are safe for concurrent use.
type Server struct {
	cfg      ServerConfig
	launcher Launcher
	now      func() time.Time // the clock of the restart backoff; tests set it
	login    *oauthTokens     // a url server's OAuth login; nil for none

	// opMu serialises the slow operations that replace the session or the
	// listing (start, list); it is taken before mu, never while holding mu.
	opMu sync.Mutex

	// mu guards the fields below.
	mu        sync.Mutex
	session   *sdk.ClientSession // nil when stopped
	stop      func() error       // kills the session's process; nil for HTTP
	listing   Listing            // the listing of the current session
	stale     bool               // the server said its tool list changed
	pin       string             // the trusted fingerprint; "" until Pin
	closed    bool
	nextStart time.Time     // no restart before this
	backoff   time.Duration // the wait after the next stop
	restarts  int           // sessions started after the first

	watchers sync.WaitGroup // one per session: ends when the session does
}

// Connect starts the server (or reaches it, for a URL), performs the
// initialize handshake and lists its tools, all within cfg.StartTimeout.
// launcher may be nil for a URL server.
func Connect(ctx context.Context, cfg ServerConfig, launcher Launcher) (*Server, error) {
	if err := checkConfig(cfg, launcher); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, launcher: launcher, now: time.Now, backoff: minBackoff}
	if cfg.OAuth != nil {
		s.login = newOAuthTokens(cfg.Name, cfg.OAuth, cfg.Transport)
	}
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func checkConfig(cfg ServerConfig, launcher Launcher) error {
	if !ValidName(cfg.Name) {
		return fmt.Errorf("mcp server name %q: use 1 to %d lowercase letters and digits", cfg.Name, maxNameLen)
	}
	switch {
	case len(cfg.Command) > 0 && cfg.URL != "":
		return fmt.Errorf("mcp server %s: set command or url, not both", cfg.Name)
	case len(cfg.Command) > 0:
		if launcher == nil {
			return fmt.Errorf("mcp server %s: no launcher for its command", cfg.Name)
		}
		if cfg.Token != "" || cfg.OAuth != nil {
			return fmt.Errorf("mcp server %s: a token is only sent to a url server", cfg.Name)
		}
	case cfg.URL != "":
		u, err := url.Parse(cfg.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("mcp server %s: url %q is not an http or https address", cfg.Name, cfg.URL)
		}
		if cfg.Token != "" && cfg.OAuth != nil {
			return fmt.Errorf("mcp server %s: a static token or an OAuth login, not both", cfg.Name)
		}
	default:
		return fmt.Errorf("mcp server %s: set command (a stdio server) or url (an HTTP server)", cfg.Name)
	}
	return nil
}

// start begins a session and lists its tools. The caller holds opMu.
func (s *Server) start(ctx context.Context) error {
	limit := s.cfg.startTimeout()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()

	var transport sdk.Transport
	stop := func() error { return nil }
	if s.cfg.URL != "" {
		transport = &sdk.StreamableClientTransport{
			Endpoint:   s.cfg.URL,
			HTTPClient: httpClient(s.cfg.Transport, s.cfg.URL, s.cfg.Token, s.login),
			MaxRetries: -1, // a lost server is restarted by Server, with backoff
			// No standalone stream: only answers to homard's own requests
			// are read, never server-initiated requests.
			DisableStandaloneSSE: true,
			MaxEventSize:         MaxHTTPBody,
		}
	} else {
		rw, kill, err := s.launcher.Start(ctx, s.cfg.Command, environ(s.cfg.Env))
		if err != nil {
			return fmt.Errorf("mcp server %s: %w", s.cfg.Name, err)
		}
		stop = sync.OnceValue(kill) // Close and the watcher both stop it
		// The SDK's own framing: a JSON-RPC frame over MaxLine is an error
		// that ends the session.
		transport = &sdk.IOTransport{Reader: rw, Writer: rw, MaxLineLength: MaxLine}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "homard", Version: "1"}, &sdk.ClientOptions{
		Logger: slog.New(slog.DiscardHandler),
		// Non-nil and empty: no roots (the SDK's default advertises them),
		// and with no handlers set, no sampling or elicitation either.
		Capabilities: &sdk.ClientCapabilities{},
		// A request for input in the middle of a call is answered by no one.
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		// Log messages are dropped: no LoggingMessageHandler. A changed
		// tool list is re-listed before the next call.
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			s.mu.Lock()
			s.stale = true
			s.mu.Unlock()
		},
	})
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		_ = stop()
		return s.callError(ctx, "initialize", limit.String(), err)
	}
	listing, err := s.list(ctx, cs, limit.String())
	if err != nil {
		_ = cs.Close()
		_ = stop()
		return err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = stop()
		_ = cs.Close()
		return fmt.Errorf("mcp server %s: %w", s.cfg.Name, ErrClosed)
	}
	s.session, s.stop, s.listing, s.stale = cs, stop, listing, false
	s.watchers.Add(1)
	go s.watch(cs, stop)
	return nil
}

// watch waits for a session to end (the process exited, the connection
// was lost or closed), then kills what is left of the process and
// schedules the restart.
func (s *Server) watch(cs *sdk.ClientSession, stop func() error) {
	defer s.watchers.Done()
	_ = cs.Wait()
	s.drop(cs)
	_ = stop()
}

// drop forgets a session that stopped and sets the restart backoff; a
// session already dropped is ignored.
func (s *Server) drop(cs *sdk.ClientSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != cs {
		return
	}
	s.session, s.stop = nil, nil
	s.nextStart = s.now().Add(s.backoff)
	s.backoff = min(2*s.backoff, maxBackoff)
}

// current returns the current session, restarting a stopped server once
// its backoff has elapsed, and re-listing tools the server said changed.
func (s *Server) current(ctx context.Context) (*sdk.ClientSession, Listing, error) {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	s.mu.Lock()
	closed, cs, stale, listing := s.closed, s.session, s.stale, s.listing
	wait := s.nextStart.Sub(s.now())
	s.mu.Unlock()
	switch {
	case closed:
		return nil, Listing{}, fmt.Errorf("mcp server %s: %w", s.cfg.Name, ErrClosed)
	case cs == nil && wait > 0:
		return nil, Listing{}, fmt.Errorf("%w: mcp server %s restarts in %s; try again then", ErrRestarting, s.cfg.Name, wait.Round(time.Second))
	case cs == nil:
		if err := s.start(ctx); err != nil {
			s.mu.Lock()
			s.nextStart = s.now().Add(s.backoff)
			s.backoff = min(2*s.backoff, maxBackoff)
			s.mu.Unlock()
			return nil, Listing{}, err
		}
		s.mu.Lock()
		s.restarts++
		cs, listing = s.session, s.listing
		s.mu.Unlock()
	case stale:
		if err := s.relist(ctx, cs); err != nil {
			return nil, Listing{}, err
		}
		s.mu.Lock()
		listing = s.listing
		s.mu.Unlock()
	}
	return cs, listing, nil
}

// relist lists cs's tools again and keeps the listing. The caller holds opMu.
func (s *Server) relist(ctx context.Context, cs *sdk.ClientSession) error {
	limit := s.cfg.callTimeout()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	l, err := s.list(ctx, cs, limit.String())
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.session == cs {
		s.listing, s.stale = l, false
	}
	s.mu.Unlock()
	return nil
}

// Tools lists the server's tools now (restarting it if it stopped) and
// returns the listing with its fingerprint. Listing is not trusting:
// calls need Pin with the fingerprint the owner accepted.
func (s *Server) Tools(ctx context.Context) (Listing, error) {
	cs, _, err := s.current(ctx)
	if err != nil {
		return Listing{}, err
	}
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if err := s.relist(ctx, cs); err != nil {
		return Listing{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listing, nil
}

// Pin records the fingerprint the owner trusted. Call runs a tool only
// while the current listing's fingerprint equals it.
func (s *Server) Pin(fingerprint string) {
	s.mu.Lock()
	s.pin = fingerprint
	s.mu.Unlock()
}

// Restarts counts the sessions started after the first one.
func (s *Server) Restarts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts
}

// Close ends the session and kills the server's process tree. It waits
// for the session's watcher to finish.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	cs, stop := s.session, s.stop
	s.session, s.stop = nil, nil
	s.mu.Unlock()
	var err error
	if stop != nil {
		err = stop() // first: a hung server cannot delay the close
	}
	if cs != nil {
		_ = cs.Close()
	}
	s.watchers.Wait()
	return err
}

// callError names what timed out or failed.
func (s *Server) callError(ctx context.Context, what, limit string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("mcp server %s did not answer %s within %s", s.cfg.Name, what, limit)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) {
		return fmt.Errorf("mcp server %s stopped during %s (it exited, or sent a message over %d MiB): %w", s.cfg.Name, what, MaxLine>>20, err)
	}
	return fmt.Errorf("mcp server %s: %s: %w", s.cfg.Name, what, err)
}

// environ turns an env map into a sorted KEY=VALUE list.
func environ(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return slices.Clip(out)
}
