package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// serveProxy serves p on a loopback listener until the test ends and
// returns its URL.
func serveProxy(t *testing.T, p *Proxy) *url.URL {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // ends when ln is closed
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.ServeConn(ctx, c) // ends with its connection or ctx
		}
	}()
	t.Cleanup(func() { cancel(); ln.Close(); <-done })
	return &url.URL{Scheme: "http", Host: ln.Addr().String()}
}

func TestProxyOnlyListedHosts(t *testing.T) {
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello from "+r.Host) })
	listed := httptest.NewServer(hello)
	defer listed.Close()
	listedTLS := httptest.NewTLSServer(hello)
	defer listedTLS.Close()
	other := httptest.NewServer(hello)
	defer other.Close()
	blocked := httptest.NewServer(hello) // listed, but loopback without an Allow entry
	defer blocked.Close()

	c, err := New(Options{Allow: []string{listed.URL + "", "https://" + listedTLS.Listener.Addr().String(), other.URL}})
	if err != nil {
		t.Fatal(err)
	}
	hostOf := func(s *httptest.Server) string { return s.Listener.Addr().String() }
	p, err := c.NewProxy([]string{hostOf(listed), hostOf(listedTLS), hostOf(blocked)})
	if err != nil {
		t.Fatal(err)
	}
	proxyURL := serveProxy(t, p)
	pool := listedTLS.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	hc := &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(proxyURL),
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}}
	for _, tc := range []struct {
		name, url  string
		wantStatus int
		wantBody   string
	}{
		{"listed host over plain http", listed.URL + "/x", 200, "hello from " + hostOf(listed)},
		{"listed host through CONNECT", listedTLS.URL + "/x", 200, "hello from " + hostOf(listedTLS)},
		{"unlisted host allowed by egress", other.URL + "/x", http.StatusForbidden, "not in the extension's network list"},
		{"listed host the address rules block", blocked.URL + "/x", http.StatusBadGateway, "is a loopback address and may not be reached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := hc.Get(tc.url)
			if strings.HasPrefix(tc.url, "https") && tc.wantStatus != 200 {
				// A refused CONNECT is an error of the client.
				if err == nil {
					resp.Body.Close()
					t.Fatalf("GET %s through the proxy succeeded; want it refused", tc.url)
				}
				return
			}
			if err != nil {
				t.Fatalf("GET %s through the proxy: %v", tc.url, err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus || !strings.Contains(string(body), tc.wantBody) {
				t.Errorf("GET %s through the proxy = %d %q; want %d containing %q", tc.url, resp.StatusCode, body, tc.wantStatus, tc.wantBody)
			}
		})
	}
}

func TestProxyRefusesUnlistedConnect(t *testing.T) {
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.NewProxy([]string{"example.com"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		request string
		want    error
	}{
		{"CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n", ErrHostNotListed},
		{"CONNECT example.com:8443 HTTP/1.1\r\nHost: example.com:8443\r\n\r\n", ErrHostNotListed},
		{"GET /relative HTTP/1.1\r\nHost: example.com\r\n\r\n", ErrInvalidURL},
		{"GET https://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", ErrInvalidURL},
	} {
		client, server := net.Pipe()
		go p.ServeConn(t.Context(), server) // ends when it has answered
		go func() { io.WriteString(client, tc.request) }()
		resp, err := http.ReadResponse(bufio.NewReader(client), nil)
		if err != nil {
			t.Fatalf("%q: read the proxy's answer: %v", tc.request, err)
		}
		body, _ := io.ReadAll(resp.Body)
		client.Close()
		wantStatus := http.StatusForbidden
		if !errors.Is(tc.want, ErrHostNotListed) {
			wantStatus = http.StatusBadRequest
		}
		if resp.StatusCode != wantStatus || !strings.Contains(string(body), tc.want.Error()) {
			t.Errorf("%q: proxy answered %d %q; want %d naming %q", tc.request, resp.StatusCode, body, wantStatus, tc.want)
		}
	}
}

func TestNewProxyRefusesBadHost(t *testing.T) {
	c, _ := New(Options{})
	for _, h := range []string{"bad host", "example.com:0", "example.com:http"} {
		if _, err := c.NewProxy([]string{h}); err == nil {
			t.Errorf("NewProxy(%q) = nil error; want a refusal", h)
		}
	}
	if _, err := c.NewProxy([]string{"Example.COM", "api.example.com:8443", "127.0.0.1:9"}); err != nil {
		t.Errorf("NewProxy(valid hosts) = %v; want nil", err)
	}
}
