package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeResolver answers from a map and counts lookups.
type fakeResolver struct {
	mu    sync.Mutex // guards calls
	calls int
	addrs map[string][]string
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.calls++
	r.mu.Unlock()
	ss, ok := r.addrs[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

// tlsServer starts an httptest TLS server on 127.0.0.1 that counts requests.
func tlsServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func port(t *testing.T, rawURL string) uint16 {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return uint16(n)
}

// newClient builds a Client trusting srv's certificate.
func newClient(t *testing.T, srv *httptest.Server, o Options) *Client {
	t.Helper()
	o.TLSConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	c, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func TestGetAllowedEndpoint(t *testing.T) {
	srv, hits := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "hello %s", r.Header.Get("X-Test"))
	})
	c := newClient(t, srv, Options{Allow: []string{srv.URL}})
	resp, err := c.Get(t.Context(), srv.URL+"/path", http.Header{"X-Test": {"you"}})
	if err != nil {
		t.Fatalf("Get(%s) = %v; want success", srv.URL, err)
	}
	if resp.Status != 200 || string(resp.Body) != "hello you" || resp.Truncated ||
		resp.ContentType != "text/plain; charset=utf-8" || resp.FinalURL != srv.URL+"/path" {
		t.Errorf("Get = %+v", resp)
	}
	if hits.Load() != 1 {
		t.Errorf("server saw %d requests; want 1", hits.Load())
	}
}

func TestGetRefusesLoopbackNotAllowed(t *testing.T) {
	srv, hits := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {})
	c := newClient(t, srv, Options{})
	// Not allowed: a non-default port is refused before anything else.
	if _, err := c.Get(t.Context(), srv.URL, nil); !errors.Is(err, ErrPort) {
		t.Errorf("Get(%s) = %v; want ErrPort", srv.URL, err)
	}
	// Treat the server's port as the https port so that the address check
	// is what must refuse it, for every spelling of 127.0.0.1.
	c.httpsPort = port(t, srv.URL)
	p := strconv.Itoa(int(c.httpsPort))
	for _, h := range []string{"127.0.0.1", "2130706433", "0x7f.1", "0177.0.0.1", "127.1", "[::ffff:127.0.0.1]"} {
		if _, err := c.Get(t.Context(), "https://"+h+":"+p+"/", nil); !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("Get(https://%s:%s/) = %v; want ErrBlockedAddress", h, p, err)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("server saw %d requests; want 0", hits.Load())
	}
}

func TestDialTimeCheck(t *testing.T) {
	srv, hits := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {})
	var conns atomic.Int32
	srv.Config.ConnState = func(net.Conn, http.ConnState) { conns.Add(1) }
	res := &fakeResolver{addrs: map[string][]string{
		"rebind.example": {"127.0.0.1"},
		"mixed.example":  {"8.8.8.8", "127.0.0.1"},
		"meta.example":   {"::ffff:169.254.169.254"},
		"empty.example":  {},
	}}
	c := newClient(t, srv, Options{Resolver: res})
	c.httpsPort = port(t, srv.URL)
	p := strconv.Itoa(int(c.httpsPort))
	for _, h := range []string{"rebind.example", "mixed.example", "meta.example"} {
		_, err := c.Get(t.Context(), "https://"+h+":"+p+"/", nil)
		// Host is set by the check of the resolved addresses, which runs
		// before any dial; the Control hook alone would not know the name.
		var be *BlockedError
		if !errors.As(err, &be) || be.Host != h {
			t.Errorf("Get(https://%s:%s/) = %v; want a *BlockedError for %s before dialing", h, p, err, h)
		}
	}
	if _, err := c.Get(t.Context(), "https://empty.example:"+p+"/", nil); !errors.Is(err, ErrNoAddress) {
		t.Errorf("Get(empty.example) = %v; want ErrNoAddress", err)
	}
	if res.calls < 4 {
		t.Errorf("resolver called %d times; want every name resolved at dial time", res.calls)
	}
	if hits.Load() != 0 || conns.Load() != 0 {
		t.Errorf("server saw %d requests, %d connection events; want 0", hits.Load(), conns.Load())
	}
	// The Control hook refuses on its own, whatever the caller checked.
	if dialer(false).Control == nil || dialer(true).Control != nil {
		t.Error("dialer(false) must check addresses in Control, dialer(true) must not")
	}
	if err := controlAllowed("tcp4", "127.0.0.1:443", nil); !errors.Is(err, ErrBlockedAddress) {
		t.Errorf("controlAllowed(127.0.0.1:443) = %v; want ErrBlockedAddress", err)
	}
	if err := controlAllowed("tcp", "garbage", nil); !errors.Is(err, ErrBlockedAddress) {
		t.Errorf("controlAllowed(garbage) = %v; want ErrBlockedAddress", err)
	}
	if err := controlAllowed("tcp6", "[2606:4700::1111]:443", nil); err != nil {
		t.Errorf("controlAllowed(public) = %v; want nil", err)
	}
}

func TestRedirectsAreRechecked(t *testing.T) {
	other, otherHits := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {})
	otherHTTP := "http://" + other.Listener.Addr().String() + "/"
	targets := map[string]string{
		"/to-other-http": otherHTTP,
		"/to-metadata":   "http://169.254.169.254/latest/meta-data/",
		"/to-metadata-s": "https://169.254.169.254/",
		"/to-other-tls":  other.URL + "/",
		"/to-decimal":    "http://2852039166/",
		"/to-ftp":        "ftp://example.com/",
	}
	srv, _ := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, targets[r.URL.Path], http.StatusFound)
	})
	tests := []struct {
		path string
		opts Options
		want error
	}{
		{"/to-other-http", Options{}, ErrScheme},
		{"/to-other-http", Options{AllowHTTP: true}, ErrPort},
		{"/to-other-tls", Options{}, ErrPort},
		{"/to-metadata", Options{}, ErrScheme},
		{"/to-metadata", Options{AllowHTTP: true}, ErrBlockedAddress},
		{"/to-metadata-s", Options{}, ErrBlockedAddress},
		{"/to-decimal", Options{AllowHTTP: true}, ErrBlockedAddress},
		{"/to-ftp", Options{}, ErrScheme},
	}
	for _, tt := range tests {
		tt.opts.Allow = []string{srv.URL}
		c := newClient(t, srv, tt.opts)
		if _, err := c.Get(t.Context(), srv.URL+tt.path, nil); !errors.Is(err, tt.want) {
			t.Errorf("Get(%s) with %+v = %v; want %v", tt.path, tt.opts, err, tt.want)
		}
	}
	// Even when the other server's port counts as the http port, the
	// redirect to it is refused because it is loopback.
	c := newClient(t, srv, Options{Allow: []string{srv.URL}, AllowHTTP: true})
	c.httpPort = port(t, other.URL)
	if _, err := c.Get(t.Context(), srv.URL+"/to-other-http", nil); !errors.Is(err, ErrBlockedAddress) {
		t.Errorf("Get(redirect to %s) = %v; want ErrBlockedAddress", otherHTTP, err)
	}
	if otherHits.Load() != 0 {
		t.Errorf("redirect target saw %d requests; want 0", otherHits.Load())
	}
}

func TestRedirectLimit(t *testing.T) {
	srv, hits := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		http.Redirect(w, r, fmt.Sprintf("/%d", n+1), http.StatusFound)
	})
	for _, tt := range []struct{ max, wantHits int32 }{{0, 6}, {2, 3}, {-1, 1}} {
		hits.Store(0)
		c := newClient(t, srv, Options{Allow: []string{srv.URL}, MaxRedirects: int(tt.max)})
		if _, err := c.Get(t.Context(), srv.URL+"/0", nil); !errors.Is(err, ErrTooManyRedirects) {
			t.Errorf("MaxRedirects %d: Get = %v; want ErrTooManyRedirects", tt.max, err)
		}
		if hits.Load() != tt.wantHits {
			t.Errorf("MaxRedirects %d: server saw %d requests; want %d", tt.max, hits.Load(), tt.wantHits)
		}
	}
}

func TestRedirectDropsHeadersOffOrigin(t *testing.T) {
	var got sync.Map // path -> header seen
	other, _ := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		got.Store("other", r.Header.Clone())
	})
	srv, _ := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.URL.Path, r.Header.Clone())
		switch r.URL.Path {
		case "/start":
			http.SetCookie(w, &http.Cookie{Name: "s", Value: "1"})
			http.Redirect(w, r, "/same", http.StatusFound)
		case "/same":
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
		}
	})
	c := newClient(t, srv, Options{Allow: []string{srv.URL, other.URL}})
	h := http.Header{"X-Api-Key": {"secret"}, "Authorization": {"Bearer secret"}}
	if _, err := c.Get(t.Context(), srv.URL+"/start", h); err != nil {
		t.Fatalf("Get = %v", err)
	}
	same, _ := got.Load("/same")
	if same.(http.Header).Get("X-Api-Key") != "secret" {
		t.Errorf("same-origin redirect lost the caller header: %v", same)
	}
	if same.(http.Header).Get("Cookie") != "" {
		t.Errorf("cookie was stored and replayed: %v", same)
	}
	o, ok := got.Load("other")
	if !ok {
		t.Fatal("other server was not reached")
	}
	for _, k := range []string{"X-Api-Key", "Authorization", "Referer", "Cookie"} {
		if v := o.(http.Header).Get(k); v != "" {
			t.Errorf("cross-origin redirect sent %s: %q", k, v)
		}
	}
}

func TestBodyCap(t *testing.T) {
	srv, _ := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Write([]byte(strings.Repeat("a", n)))
	})
	c := newClient(t, srv, Options{Allow: []string{srv.URL}, MaxBytes: 100})
	for _, tt := range []struct {
		n, wantLen int
		trunc      bool
	}{{99, 99, false}, {100, 100, false}, {101, 100, true}, {1 << 20, 100, true}} {
		resp, err := c.Get(t.Context(), fmt.Sprintf("%s/?n=%d", srv.URL, tt.n), nil)
		if err != nil {
			t.Fatalf("Get(n=%d) = %v", tt.n, err)
		}
		if len(resp.Body) != tt.wantLen || resp.Truncated != tt.trunc {
			t.Errorf("Get(n=%d) = %d bytes, truncated %v; want %d, %v", tt.n, len(resp.Body), resp.Truncated, tt.wantLen, tt.trunc)
		}
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv, _ := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release) // runs before srv.Close from t.Cleanup
	c := newClient(t, srv, Options{Allow: []string{srv.URL}, Timeout: 50 * time.Millisecond})
	_, err := c.Get(t.Context(), srv.URL, nil)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("Get(slow server) = %v; want a timeout", err)
	}
}

func TestProxyEnvIgnored(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var proxied atomic.Int32
	go func() { // ends when ln is closed
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			proxied.Add(1)
			conn.Close()
		}
	}()
	defer ln.Close()
	proxyURL := "http://" + ln.Addr().String()
	for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY"} {
		t.Setenv(k, proxyURL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	srv, hits := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {})
	// A DNS name (the test certificate is valid for example.com), because
	// net/http never proxies loopback addresses anyway.
	p := port(t, srv.URL)
	res := &fakeResolver{addrs: map[string][]string{"example.com": {"127.0.0.1"}}}
	target := fmt.Sprintf("https://example.com:%d", p)
	c := newClient(t, srv, Options{Allow: []string{target}, Resolver: res})
	if _, err := c.Get(t.Context(), target+"/", nil); err != nil {
		t.Fatalf("Get(%s) = %v", target, err)
	}
	// net/http reads the proxy variables once per process, so the fetch
	// above alone cannot prove much when other tests ran first.
	if c.hc.Transport.(*http.Transport).Proxy != nil {
		t.Error("Transport.Proxy is set; proxy environment variables must be ignored")
	}
	if proxied.Load() != 0 || hits.Load() != 1 {
		t.Errorf("proxy saw %d connections, server %d requests; want 0, 1", proxied.Load(), hits.Load())
	}
}

func TestRequestChecks(t *testing.T) {
	res := &fakeResolver{}
	c, err := New(Options{Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url  string
		want error
	}{
		{"http://example.com/", ErrScheme},
		{"ftp://example.com/", ErrScheme},
		{"file:///etc/passwd", ErrInvalidURL},
		{"https://example.com:8443/", ErrPort},
		{"https://example.com:65536/", ErrPort},
		{"https://user:pw@example.com/", ErrInvalidURL},
		{"/relative", ErrInvalidURL},
		{"https://127.0.0.1/", ErrBlockedAddress},
		{"https://[::1]/", ErrBlockedAddress},
		{"https://0x7f.1/", ErrBlockedAddress},
		{"https://169.254.169.254/", ErrBlockedAddress},
		{"https://[fe80::1%25eth0]/", ErrInvalidHost},
		{"https://1.2.3.256/", ErrInvalidHost},
		{"https://%31%32%37.0.0.1/", ErrInvalidURL},
	}
	for _, tt := range tests {
		if _, err := c.Get(t.Context(), tt.url, nil); !errors.Is(err, tt.want) {
			t.Errorf("Get(%q) = %v; want %v", tt.url, err, tt.want)
		}
		if err := c.Check(tt.url); !errors.Is(err, tt.want) {
			t.Errorf("Check(%q) = %v; want %v", tt.url, err, tt.want)
		}
	}
	if res.calls != 0 {
		t.Errorf("resolver called %d times for refused URLs; want 0", res.calls)
	}
	if err := c.Check("https://example.com/a?b"); err != nil {
		t.Errorf("Check(https://example.com/a?b) = %v; want nil", err)
	}
}

func TestAllowEntries(t *testing.T) {
	for _, e := range []string{
		"https://nas.lan", "https://nas.lan:8443/path", "ftp://nas.lan:21",
		"https://*.lan:443", "https://user@nas.lan:443", "https://nas.lan:0",
		"https://nas.lan:99999", "nas.lan:8443", "https://nas.lan:8443?q=1",
	} {
		if _, err := New(Options{Allow: []string{e}}); err == nil {
			t.Errorf("New(Allow %q) = nil error; want refused", e)
		}
	}
	c, err := New(Options{Allow: []string{"https://NAS.lan:8443/", "http://127.1:8080"}})
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	for _, k := range []string{"https://nas.lan:8443", "http://127.0.0.1:8080"} {
		if !c.allow[k] {
			t.Errorf("allow set %v lacks %q", c.allow, k)
		}
	}
	// An entry allows its exact scheme only.
	if _, err := c.Get(t.Context(), "http://nas.lan:8443/", nil); !errors.Is(err, ErrScheme) {
		t.Errorf("Get(http://nas.lan:8443/) = %v; want ErrScheme", err)
	}
}

// TestRedirectToAnotherHostIsNotFollowed: a fetch decided for one host
// must not carry its URL on to another. The redirect comes back as the
// response, with its Location; the other host is not even resolved.
func TestRedirectToAnotherHostIsNotFollowed(t *testing.T) {
	const away = "https://exfil.example/collect?q=private+notes"
	srv, hits := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/done", http.StatusMovedPermanently)
		case "/away":
			http.Redirect(w, r, away, http.StatusFound)
		default:
			fmt.Fprint(w, "done")
		}
	})
	res := &fakeResolver{}
	c := newClient(t, srv, Options{Allow: []string{srv.URL}, Resolver: res})
	got, err := c.Get(t.Context(), srv.URL+"/away", nil)
	if err != nil {
		t.Fatalf("Get(/away) = %v; want the redirect itself", err)
	}
	if got.Status != http.StatusFound || got.Location != away || got.FinalURL != srv.URL+"/away" {
		t.Errorf("Get(/away) = status %d, Location %q, FinalURL %q; want 302 to %s, not followed", got.Status, got.Location, got.FinalURL, away)
	}
	if res.calls != 0 || hits.Load() != 1 {
		t.Errorf("%d lookups, %d requests; want 0 lookups (the other host is never contacted) and 1 request", res.calls, hits.Load())
	}
	// The same host: followed as before.
	got, err = c.Get(t.Context(), srv.URL+"/same", nil)
	if err != nil || got.Status != 200 || string(got.Body) != "done" || got.Location != "" {
		t.Errorf("Get(/same) = %+v, %v; want the redirect followed to /done", got, err)
	}
	// With CrossHostRedirects the client does go on (and here fails to
	// resolve the name).
	res2 := &fakeResolver{}
	c = newClient(t, srv, Options{Allow: []string{srv.URL}, Resolver: res2, CrossHostRedirects: true})
	if _, err := c.Get(t.Context(), srv.URL+"/away", nil); err == nil || res2.calls == 0 {
		t.Errorf("CrossHostRedirects: Get = %v after %d lookups; want a failed lookup of exfil.example", err, res2.calls)
	}
}

func TestSameSite(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"example.com", "example.com", true},
		{"example.com", "www.example.com", true},
		{"WWW.Example.com", "example.COM", true},
		{"example.com", "api.example.com", false},
		{"example.com", "example.com.evil.example", false},
		{"www.example.com", "www.www.example.com", true},
		{"example.com", "wwwexample.com", false},
		{"127.0.0.1", "127.0.0.1", true},
		{"127.0.0.1", "localhost", false},
	} {
		if got := sameSite(tt.a, tt.b); got != tt.want {
			t.Errorf("sameSite(%q, %q) = %v; want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
