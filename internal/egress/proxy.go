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
type Proxy struct {
	c *Client
	// hosts are canonical "host:port" entries; a bare host in the list
	// gives "host:443" and "host:80".
	hosts map[string]bool
}

// NewProxy returns a proxy allowing hosts: "name" (ports 443 and 80) or
// "name:port". It refuses an entry that is not a valid host.
func (c *Client) NewProxy(hosts []string) (*Proxy, error) {
	p := &Proxy{c: c, hosts: map[string]bool{}}
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

// ServeConn serves one client connection: it reads one request, then
// tunnels (CONNECT) or forwards it (an absolute http:// URL) and closes
// conn. A refused request gets 403 (not listed) or 502 (the dial failed,
// a blocked address included) with the reason as text. It returns when
// both directions are done or ctx ends.
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
		return
	}
	head.N = math.MaxInt64 // the body is the upstream's to bound
	target, err := p.target(req)
	if err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, ErrHostNotListed) {
			status = http.StatusForbidden
		}
		proxyError(conn, status, err.Error())
		return
	}
	up, err := p.c.dialContext(ctx, "tcp", target)
	if err != nil {
		proxyError(conn, http.StatusBadGateway, err.Error())
		return
	}
	defer up.Close()
	context.AfterFunc(ctx, func() { up.Close() })
	if req.Method == http.MethodConnect {
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
		proxyError(conn, http.StatusBadGateway, fmt.Sprintf("send the request to %s: %v", target, err))
		return
	}
	_, _ = io.Copy(conn, up)
}

// target returns the listed "host:port" req asks for.
func (p *Proxy) target(req *http.Request) (string, error) {
	var host, port string
	switch {
	case req.Method == http.MethodConnect:
		h, pt, err := net.SplitHostPort(req.RequestURI)
		if err != nil {
			return "", fmt.Errorf("%w: CONNECT %q is not host:port", ErrInvalidHost, req.RequestURI)
		}
		host, port = h, pt
	case req.URL.Scheme == "http" && req.URL.Host != "" && req.URL.User == nil:
		host, port = req.URL.Hostname(), req.URL.Port()
		if port == "" {
			port = "80"
		}
	default:
		return "", fmt.Errorf("%w: a proxy request needs CONNECT host:port or an absolute http:// URL, not %q", ErrInvalidURL, req.RequestURI)
	}
	canon, n, err := canonHostPort(host, port)
	if err != nil {
		return "", err
	}
	t := net.JoinHostPort(canon, strconv.Itoa(int(n)))
	if !p.hosts[t] {
		return "", fmt.Errorf("%w: %s", ErrHostNotListed, t)
	}
	return t, nil
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
