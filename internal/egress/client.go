package egress

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Resolver looks up the addresses of a host name. *net.Resolver satisfies
// it; tests pass a fake.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a Client. The zero value is a strict HTTPS-only client.
type Options struct {
	// Allow lists exact "scheme://host:port" endpoints (scheme http or
	// https, explicit port, no path) that bypass the scheme, port and
	// address checks, for home-lab services. Nothing wider: no wildcards,
	// no CIDRs. A listed DNS name bypasses the address check for whatever
	// it resolves to, so list only names you control.
	Allow []string
	// Timeout for one Get, including redirects and reading the body.
	// Zero means 20s.
	Timeout time.Duration
	// MaxBytes read from a response body; more is cut off and reported as
	// Response.Truncated. Zero means 2 MiB.
	MaxBytes int64
	// MaxRedirects followed by one Get. Zero means 5; negative means none.
	MaxRedirects int
	// Resolver for host names. Nil means net.DefaultResolver.
	Resolver Resolver
	// AllowHTTP also allows plain http on port 80. False by default.
	AllowHTTP bool
	// CrossHostRedirects follows redirects to other hosts. By default a
	// redirect may change the scheme, port and path but not the host
	// (give or take a "www."): one to another host is not followed and Get
	// returns the redirect itself, with Response.Location set. A decision
	// to fetch from one host (an approval, an operator rule for that host)
	// then never carries the request's URL — and whatever the caller put
	// in it — on to a host nobody decided about.
	CrossHostRedirects bool
	// TLSConfig is cloned for outgoing connections (tests use it to trust
	// an httptest server). Nil means the system roots. MinVersion is
	// raised to TLS 1.2.
	TLSConfig *tls.Config
}

// Response is a fetched, size-capped HTTP response.
type Response struct {
	FinalURL string // URL after redirects
	Status   int    // HTTP status code
	// Location is set when the response is a redirect that was not
	// followed (to another host; see Options.CrossHostRedirects): the
	// absolute URL it points to.
	Location    string
	ContentType string // Content-Type header as sent
	Body        []byte // at most Options.MaxBytes, decompressed
	Truncated   bool   // the body was longer than MaxBytes
}

// Client is an SSRF-safe HTTP client. It is safe for concurrent use.
type Client struct {
	allow        map[string]bool // canonical "scheme://host:port" from Options.Allow
	allowDial    map[string]bool // canonical "host:port" of the same entries
	maxBytes     int64
	maxRedirects int
	resolver     Resolver
	allowHTTP    bool
	crossHost    bool
	// httpsPort and httpPort are the only ports reachable without an Allow
	// entry: 443 and 80. Tests in this package change them to reach
	// httptest servers so that the address check is what refuses.
	httpsPort, httpPort uint16
	hc                  *http.Client
}

// New returns a Client, or an error naming an invalid Allow entry.
func New(o Options) (*Client, error) {
	c := &Client{
		allow:        map[string]bool{},
		allowDial:    map[string]bool{},
		maxBytes:     o.MaxBytes,
		maxRedirects: o.MaxRedirects,
		resolver:     o.Resolver,
		allowHTTP:    o.AllowHTTP,
		crossHost:    o.CrossHostRedirects,
		httpsPort:    443,
		httpPort:     80,
	}
	for _, e := range o.Allow {
		key, dial, err := parseAllow(e)
		if err != nil {
			return nil, err
		}
		c.allow[key] = true
		c.allowDial[dial] = true
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 20 * time.Second
	}
	if c.maxBytes <= 0 {
		c.maxBytes = 2 << 20
	}
	if c.maxRedirects == 0 {
		c.maxRedirects = 5
	}
	if c.resolver == nil {
		c.resolver = net.DefaultResolver
	}
	tlsConf := &tls.Config{}
	if o.TLSConfig != nil {
		tlsConf = o.TLSConfig.Clone()
	}
	if tlsConf.MinVersion < tls.VersionTLS12 {
		tlsConf.MinVersion = tls.VersionTLS12
	}
	tr := &http.Transport{
		Proxy:                  nil, // proxy environment variables are ignored
		DialContext:            c.dialContext,
		TLSClientConfig:        tlsConf,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConns:           16,
		IdleConnTimeout:        90 * time.Second,
	}
	c.hc = &http.Client{
		Transport:     tr,
		CheckRedirect: c.checkRedirect,
		Jar:           nil, // no cookies
		Timeout:       timeout,
	}
	return c, nil
}

// parseAllow turns "https://Host:8443" into its canonical key and dial key.
func parseAllow(e string) (key, dial string, err error) {
	bad := func(why string) (string, string, error) {
		return "", "", fmt.Errorf("egress: allow entry %q: %s; write it as \"https://host:port\"", e, why)
	}
	u, err := url.Parse(e)
	if err != nil {
		return bad("not a URL")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return bad("scheme must be http or https")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") || u.Opaque != "" {
		return bad("only scheme, host and port are allowed")
	}
	if u.Port() == "" {
		return bad("the port must be explicit")
	}
	host, port, err := canonHostPort(u.Hostname(), u.Port())
	if err != nil {
		return bad(err.Error())
	}
	dial = net.JoinHostPort(host, strconv.Itoa(int(port)))
	return u.Scheme + "://" + dial, dial, nil
}

// canonHostPort lowercases names, prints IP literals canonically (so
// "127.1" is "127.0.0.1") and parses the port as a decimal 1-65535.
func canonHostPort(host, port string) (string, uint16, error) {
	ip, isIP, err := ParseHost(host)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("%w: %q", ErrPort, port)
	}
	if isIP {
		return ip.String(), uint16(n), nil
	}
	return strings.ToLower(host), uint16(n), nil
}

// checkURL applies the request-level rules to the first URL and to every
// redirect target. Names are not resolved here: that happens, and is
// checked, only at dial time.
func (c *Client) checkURL(u *url.URL) error {
	if !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("%w: %q is not an absolute http(s) URL", ErrInvalidURL, u.Redacted())
	}
	if u.User != nil {
		return fmt.Errorf("%w: %q carries credentials; refer to secrets by name instead", ErrInvalidURL, u.Redacted())
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	if port == "" {
		return fmt.Errorf("%w: %q: only https is allowed; %s", ErrScheme, u.Scheme, allowHint)
	}
	host, n, err := canonHostPort(u.Hostname(), port)
	if err != nil {
		return err
	}
	if c.allow[scheme+"://"+net.JoinHostPort(host, strconv.Itoa(int(n)))] {
		return nil
	}
	switch {
	case scheme == "https" && n == c.httpsPort:
	case scheme == "http" && c.allowHTTP && n == c.httpPort:
	case scheme == "https" || (scheme == "http" && c.allowHTTP):
		return fmt.Errorf("%w: %s on port %d: only the default port is allowed; %s", ErrPort, scheme, n, allowHint)
	default:
		return fmt.Errorf("%w: %q: only https is allowed; %s", ErrScheme, u.Scheme, allowHint)
	}
	if ip, isIP, _ := ParseHost(u.Hostname()); isIP {
		if err := Allowed(ip); err != nil {
			err.(*BlockedError).Host = u.Hostname()
			return err
		}
	}
	return nil
}

func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if c.maxRedirects < 0 || len(via) > c.maxRedirects {
		return fmt.Errorf("%w: stopped after %d; fetch the final URL directly", ErrTooManyRedirects, len(via)-1)
	}
	if err := c.checkURL(req.URL); err != nil {
		return err
	}
	if !c.crossHost && !sameSite(req.URL.Hostname(), via[0].URL.Hostname()) {
		return http.ErrUseLastResponse // Get reports it in Response.Location
	}
	// Caller headers may carry host-bound secrets (Authorization, API
	// keys): net/http strips only a few of them, and only for unrelated
	// hosts. Send none of them, nor a Referer, off the first origin.
	if origin(req.URL) != origin(via[0].URL) {
		req.Header = http.Header{}
	}
	return nil
}

// sameSite reports whether a redirect from host a to host b stays on the
// same site: the same name, or one is the other with "www." in front.
// Anything wider would need the public-suffix list; a redirect it refuses
// is reported, and the caller can propose the new URL as a new request.
func sameSite(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	return a == b || a == "www."+b || b == "www."+a
}

func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// Check applies the request-level rules to rawURL without any network
// I/O: URL shape, scheme, port, Allow entries and literal addresses in
// every spelling. A tool's Prepare calls it so a refusal is known before
// approval; Get repeats it, and the dial-time check still applies to names.
func (c *Client) Check(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	return c.checkURL(u)
}

// Get fetches rawURL with the caller's headers (sent only to the origin of
// rawURL) and returns the size-capped response. Non-2xx statuses are not
// errors. Refusals wrap the sentinel errors of this package.
func (c *Client) Get(ctx context.Context, rawURL string, header http.Header) (*Response, error) {
	if err := c.Check(rawURL); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	for k, v := range header {
		req.Header[k] = append([]string(nil), v...)
	}
	// Let net/http negotiate gzip so the cap applies to decoded bytes.
	req.Header.Del("Accept-Encoding")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("egress: read body of %s: %w", resp.Request.URL.Redacted(), err)
	}
	r := &Response{
		FinalURL:    resp.Request.URL.String(),
		Status:      resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"),
		Body:        body,
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if loc, err := resp.Location(); err == nil {
			r.Location = loc.String()
		}
	}
	if int64(len(body)) > c.maxBytes {
		r.Body, r.Truncated = body[:c.maxBytes], true
	}
	return r, nil
}
