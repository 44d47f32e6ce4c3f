package egress

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestOpenProxyFollowsClientRules drives an open proxy (the browser's)
// with a real client: what the Client's rules admit passes, the rest is
// refused with 403 (request rules) or 502 (the dial-time address check),
// and each refusal reaches the log with its reason.
func TestOpenProxyFollowsClientRules(t *testing.T) {
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello from "+r.Host) })
	allowed := httptest.NewServer(hello)
	defer allowed.Close()
	allowedTLS := httptest.NewTLSServer(hello)
	defer allowedTLS.Close()
	other := httptest.NewServer(hello) // loopback, not allowed
	defer other.Close()
	otherTLS := httptest.NewTLSServer(hello) // loopback, not allowed
	defer otherTLS.Close()
	hostOf := func(s *httptest.Server) string { return s.Listener.Addr().String() }

	// rebound.test passes the request rules (a name on the https port)
	// but resolves to loopback: the dial refuses it.
	_, tlsPort, _ := net.SplitHostPort(hostOf(otherTLS))
	res := &fakeResolver{addrs: map[string][]string{"rebound.test": {"127.0.0.1"}}}
	c, err := New(Options{Allow: []string{allowed.URL, "https://" + hostOf(allowedTLS)}, Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(tlsPort)
	c.httpsPort = uint16(n)

	var mu sync.Mutex
	var recs []ProxyRecord
	p := c.NewOpenProxy(ProxyOptions{Log: func(r ProxyRecord) {
		mu.Lock()
		defer mu.Unlock()
		recs = append(recs, r)
	}})
	proxyURL := serveProxy(t, p)
	pool := allowedTLS.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	hc := &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(proxyURL),
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "example.com"},
	}}
	for _, tc := range []struct {
		name, url  string
		wantStatus int    // 0: the client sees an error (a refused CONNECT)
		wantLog    int    // the status the proxy logged
		wantReason string // in the log's reason
	}{
		{"allowed plain http", allowed.URL + "/x", 200, 200, ""},
		{"allowed https through CONNECT", "https://" + hostOf(allowedTLS) + "/x", 200, 200, ""},
		{"loopback plain http not allowed", other.URL + "/x", http.StatusForbidden, http.StatusForbidden, "only https"},
		{"loopback https not allowed", "https://" + hostOf(otherTLS) + "/x", 0, http.StatusForbidden, "loopback"},
		{"metadata address", "http://169.254.169.254/latest/meta-data/", http.StatusForbidden, http.StatusForbidden, "only https"},
		{"a name that resolves to loopback", "https://rebound.test:" + tlsPort + "/x", 0, http.StatusBadGateway, "loopback"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := hc.Get(tc.url)
			if tc.wantStatus == 0 {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("GET %s through the open proxy succeeded; want it refused", tc.url)
				}
			} else {
				if err != nil {
					t.Fatalf("GET %s through the open proxy: %v", tc.url, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.wantStatus {
					t.Errorf("GET %s through the open proxy = %d %q; want %d", tc.url, resp.StatusCode, body, tc.wantStatus)
				}
			}
			// A forwarded request is logged once its response has been
			// copied, which may be after the client has read it.
			u, _ := url.Parse(tc.url)
			host := u.Host
			if u.Port() == "" {
				host += ":80"
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				mu.Lock()
				var got []ProxyRecord
				for _, r := range recs {
					if r.Host == host {
						got = append(got, r)
					}
				}
				mu.Unlock()
				if len(got) > 0 || time.Now().After(deadline) {
					if len(got) != 1 || got[0].Status != tc.wantLog || !strings.Contains(got[0].Reason, tc.wantReason) {
						t.Errorf("GET %s: proxy logged %+v for %s; want one record with status %d and a reason containing %q", tc.url, got, host, tc.wantLog, tc.wantReason)
					}
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// TestOpenProxyTunnelsToAllowedHTTP: a CONNECT to an endpoint allowed
// for plain http is admitted (a browser tunnels a ws:// WebSocket), and
// one to the same host on another port is not.
func TestOpenProxyTunnelsToAllowedHTTP(t *testing.T) {
	c, err := New(Options{Allow: []string{"http://127.0.0.1:8080"}})
	if err != nil {
		t.Fatal(err)
	}
	p := c.NewOpenProxy(ProxyOptions{})
	for _, tc := range []struct {
		hostPort string
		ok       bool
	}{
		{"127.0.0.1:8080", true},
		{"127.0.0.1:8081", false},
		{"169.254.169.254:443", false},
		{"10.0.0.1:80", false},
	} {
		req, _ := http.NewRequest(http.MethodConnect, "http://"+tc.hostPort, nil)
		req.RequestURI = tc.hostPort
		host, port, err := p.target(req)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.admit(req, host, port); (err == nil) != tc.ok {
			t.Errorf("admit(CONNECT %s) = %v; want ok=%v", tc.hostPort, err, tc.ok)
		}
	}
}
