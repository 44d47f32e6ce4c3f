package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// ErrHostNotListed is wrapped by the error of a proxied request to a host
// that is not in the Proxy's list.
var ErrHostNotListed = errors.New("egress: host not in the extension's network list")

// proxyHeadBytes caps a proxied request's line and headers.
const proxyHeadBytes = 64 << 10

// Proxy is a forward HTTP proxy for one extension (an MCP server or a
// skill running in the service sandbox): CONNECT tunnels and plain-HTTP
// requests to the listed hosts only, each dialled through its Client's
// dialer, so the address (SSRF) rules and Options.Allow hold as for
// http_get. It never reads or changes what flows through a tunnel.
//
// A host with a credential (ProxyOptions.Credential) is reached the other
// way round: the extension sends a plain http:// request through the
// proxy, and the proxy sends it upstream over https with the credential
// header added (see proxycred.go); a CONNECT to it is refused, since the
// proxy cannot add a header inside a tunnel.
type Proxy struct {
	c *Client
	// hosts are canonical "host:port" entries; a bare host in the list
	// gives "host:443" and "host:80".
	hosts map[string]bool
	// open admits any host:port the Client's own rules admit instead of
	// the list (NewOpenProxy).
	open bool
	o    ProxyOptions
}

// ProxyOptions are a Proxy's optional abilities. The zero value adds no
// credential and logs nothing.
type ProxyOptions struct {
	// Credential returns the credential to add to a request for host, or
	// ok false when host has none. host is the authority of the https URL
	// the request goes to: a lowercase name or address, with ":port" only
	// when the port is not 443 (the form a vault binding takes). Nil means
	// no host has a credential.
	Credential func(host string) (cred Credential, ok bool)
	// Log, when set, is called once for each request the proxy answers,
	// from ServeConn's goroutine. It never receives a credential's value.
	Log func(ProxyRecord)
}

// Credential is the header the proxy sets on a request for one host, and
// what no response may carry back to the extension.
type Credential struct {
	Header, Value string
	// Hide are further strings the response is scrubbed of besides Value:
	// the bare secret inside Value ("Bearer {}") and its encoded forms
	// (secrets.Encodings), so an upstream that echoes the token alone, or
	// in base64, does not hand it over either.
	Hide []string
}

// ProxyRecord describes one request the proxy answered, for the audit log.
type ProxyRecord struct {
	Method string // CONNECT, GET, POST, ...
	Host   string // the "host:port" asked for, canonical
	// Credential is true when the proxy added a credential header to the
	// request (it went upstream over https).
	Credential bool
	// Status is the status the proxy answered with: 200 for a tunnel
	// opened, the upstream's for a forwarded request, the proxy's own for
	// a refusal; 0 when the request could not be read.
	Status int
	// Reason says why the proxy refused the request (Status 400, 403 or
	// 502); empty otherwise.
	Reason string
}

// NewProxy returns a proxy allowing hosts: "name" (ports 443 and 80) or
// "name:port". It refuses an entry that is not a valid host.
func (c *Client) NewProxy(hosts []string) (*Proxy, error) {
	return c.NewProxyWith(hosts, ProxyOptions{})
}

// NewProxyWith is NewProxy with options: credentials added for some hosts
// and a log of each request.
func (c *Client) NewProxyWith(hosts []string, o ProxyOptions) (*Proxy, error) {
	p := &Proxy{c: c, hosts: map[string]bool{}, o: o}
	for _, h := range hosts {
		host, port, err := net.SplitHostPort(h)
		ports := []string{port}
		if err != nil {
			host, ports = h, []string{"443", "80"}
		}
		for _, port := range ports {
			canon, n, err := canonHostPort(host, port)
			if err != nil {
				return nil, fmt.Errorf("egress: network host %q: %w; write it as \"name\" or \"name:port\"", h, err)
			}
			p.hosts[net.JoinHostPort(canon, strconv.Itoa(int(n)))] = true
		}
	}
	return p, nil
}

// NewOpenProxy returns a proxy that admits any host and port c's own
// rules admit, instead of a list: a CONNECT to host:port when
// "https://host:port" (or "http://host:port") passes c.Check — a tunnel
// may carry a WebSocket, which browsers tunnel whatever its scheme — and
// an absolute http:// request when its URL passes c.Check (so plain http
// needs Options.AllowHTTP or an Allow entry). Everything else gets 403.
// The address rules still hold at dial time, as for every proxy. It is
// the hard barrier of homard's browser (internal/browser), whose every
// request goes through it.
func (c *Client) NewOpenProxy(o ProxyOptions) *Proxy {
	return &Proxy{c: c, hosts: map[string]bool{}, open: true, o: o}
}

// ServeConn serves one client connection: it reads one request, then
// tunnels (CONNECT) or forwards it (an absolute http:// URL) and closes
// conn. A refused request gets 403 (not listed, or a CONNECT to a host
// with a credential) or 502 (the dial failed, a blocked address
// included) with the reason as text. It returns when both directions are
// done or ctx ends.
func (p *Proxy) ServeConn(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	head := &io.LimitedReader{R: conn, N: proxyHeadBytes}
	br := bufio.NewReader(head)
	req, err := http.ReadRequest(br)
	if err != nil {
		proxyError(conn, http.StatusBadRequest, fmt.Sprintf("read the request: %v", err))
		p.log(ProxyRecord{})
		return
	}
	head.N = math.MaxInt64 // the body is the upstream's to bound
	rec := ProxyRecord{Method: req.Method}
	logged := false
	defer func() {
		if !logged {
			p.log(rec)
		}
	}()
	refuse := func(status int, msg string) {
		rec.Status, rec.Reason = status, msg
		proxyError(conn, status, msg)
	}
	host, port, err := p.target(req)
	if err != nil {
		refuse(http.StatusBadRequest, err.Error())
		return
	}
	rec.Host = net.JoinHostPort(host, strconv.Itoa(int(port)))
	if req.Method != http.MethodConnect {
		// A host with a credential is reached over https, whatever port
		// the plain request named (80 by default means 443).
		tlsPort := port
		if port == 80 {
			tlsPort = 443
		}
		if cred, ok := p.credential(host, tlsPort); ok {
			rec.Host = net.JoinHostPort(host, strconv.Itoa(int(tlsPort)))
			if err := p.listed(rec.Host); err != nil {
				refuse(http.StatusForbidden, err.Error())
				return
			}
			rec.Credential = true
			rec.Status = p.forwardTLS(ctx, conn, req, host, tlsPort, cred)
			return
		}
	}
	if err := p.admit(req, host, port); err != nil {
		refuse(http.StatusForbidden, err.Error())
		return
	}
	if req.Method == http.MethodConnect {
		if _, ok := p.credential(host, port); ok {
			refuse(http.StatusForbidden, fmt.Sprintf("%s has a credential homard adds to each request, which it cannot do inside an https tunnel: request http://%s/... (plain http) through this proxy instead; homard sends it on over https with the credential", rec.Host, authority(host, port)))
			return
		}
	}
	up, err := p.c.dialContext(ctx, "tcp", rec.Host)
	if err != nil {
		refuse(http.StatusBadGateway, err.Error())
		return
	}
	defer up.Close()
	context.AfterFunc(ctx, func() { up.Close() })
	if req.Method == http.MethodConnect {
		// Logged when opened: a tunnel may stay open for long.
		rec.Status, logged = http.StatusOK, true
		p.log(rec)
		if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			return
		}
		splice(conn, up, br)
		return
	}
	// One request per connection: a second one on it could name another
	// host.
	req.RequestURI = ""
	req.Close = true
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Connection", "Keep-Alive"} {
		req.Header.Del(h)
	}
	if err := req.Write(up); err != nil {
		refuse(http.StatusBadGateway, fmt.Sprintf("send the request to %s: %v", rec.Host, err))
		return
	}
	// The status is read for the log from the first bytes ("HTTP/1.1
	// 200"), which are copied on with the rest.
	ur := bufio.NewReader(up)
	if line, err := ur.Peek(len("HTTP/1.1 200")); err == nil {
		if n, err := strconv.Atoi(string(line[9:])); err == nil {
			rec.Status = n
		}
	}
	_, _ = io.Copy(conn, ur)
}

func (p *Proxy) log(r ProxyRecord) {
	if p.o.Log != nil {
		p.o.Log(r)
	}
}

// credential asks ProxyOptions.Credential about host on port (over https).
func (p *Proxy) credential(host string, port uint16) (Credential, bool) {
	if p.o.Credential == nil {
		return Credential{}, false
	}
	return p.o.Credential(authority(host, port))
}

// authority is host for port 443 and host:port otherwise: the form a
// vault binding and an https URL take.
func authority(host string, port uint16) string {
	if port == 443 {
		if strings.Contains(host, ":") {
			return "[" + host + "]"
		}
		return host
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// target returns the canonical host and port req asks for.
func (p *Proxy) target(req *http.Request) (string, uint16, error) {
	var host, port string
	switch {
	case req.Method == http.MethodConnect:
		h, pt, err := net.SplitHostPort(req.RequestURI)
		if err != nil {
			return "", 0, fmt.Errorf("%w: CONNECT %q is not host:port", ErrInvalidHost, req.RequestURI)
		}
		host, port = h, pt
	case req.URL.Scheme == "http" && req.URL.Host != "" && req.URL.User == nil:
		host, port = req.URL.Hostname(), req.URL.Port()
		if port == "" {
			port = "80"
		}
	default:
		return "", 0, fmt.Errorf("%w: a proxy request needs CONNECT host:port or an absolute http:// URL, not %q", ErrInvalidURL, req.RequestURI)
	}
	return canonHostPort(host, port)
}

// admit refuses a request to host:port the proxy does not serve: one not
// in the list, or for an open proxy one the Client's rules refuse.
func (p *Proxy) admit(req *http.Request, host string, port uint16) error {
	if !p.open {
		return p.listed(net.JoinHostPort(host, strconv.Itoa(int(port))))
	}
	hp := net.JoinHostPort(host, strconv.Itoa(int(port)))
	if req.Method != http.MethodConnect {
		return p.c.Check("http://" + hp + "/")
	}
	err := p.c.Check("https://" + hp + "/")
	if err != nil && p.c.Check("http://"+hp+"/") == nil {
		return nil
	}
	return err
}

// listed refuses a "host:port" that is not in the proxy's list.
func (p *Proxy) listed(hostPort string) error {
	if !p.hosts[hostPort] {
		return fmt.Errorf("%w: %s", ErrHostNotListed, hostPort)
	}
	return nil
}

// splice copies both ways until both are done; the client's side is read
// through br, which holds what it sent after the request head.
func splice(client, up net.Conn, br *bufio.Reader) {
	var wg sync.WaitGroup
	wg.Go(func() {
		_, _ = io.Copy(up, br)
		if tc, ok := up.(interface{ CloseWrite() error }); ok {
			_ = tc.CloseWrite()
		}
	})
	_, _ = io.Copy(client, up)
	if tc, ok := client.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
	}
	wg.Wait()
}

// proxyError answers a refused request; msg is plain text for whoever
// reads the extension's logs.
func proxyError(w io.Writer, status int, msg string) {
	msg = "homard egress proxy: " + strings.ReplaceAll(msg, "\n", " ") + "\n"
	_, _ = fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), len(msg), msg)
}
