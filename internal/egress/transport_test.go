package egress

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"testing"
)

// TestTransportAppliesTheRules: a request through Transport is held to the
// same rules as Get — a loopback endpoint not in Allow is refused before
// anything is sent (its port, then its address once the port is made the
// https port), a name resolving to loopback is refused at dial time — and
// its twin, the endpoint listed in Allow, is reached.
func TestTransportAppliesTheRules(t *testing.T) {
	srv, hits := tlsServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	get := func(c *Client, url string) (string, error) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Transport().RoundTrip(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}

	c := newClient(t, srv, Options{Resolver: &fakeResolver{addrs: map[string][]string{"rebind.example": {"127.0.0.1"}}}})
	if _, err := get(c, srv.URL); !errors.Is(err, ErrPort) {
		t.Errorf("RoundTrip(%s) without an allow entry = %v; want ErrPort", srv.URL, err)
	}
	if _, err := get(c, "http://127.0.0.1:"+strconv.Itoa(int(port(t, srv.URL)))+"/"); !errors.Is(err, ErrScheme) {
		t.Errorf("RoundTrip(plain http) = %v; want ErrScheme", err)
	}
	c.httpsPort = port(t, srv.URL)
	p := strconv.Itoa(int(c.httpsPort))
	for _, h := range []string{"127.0.0.1", "rebind.example"} {
		if _, err := get(c, "https://"+h+":"+p+"/"); !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("RoundTrip(https://%s:%s/) = %v; want ErrBlockedAddress", h, p, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server saw %d requests; want none", n)
	}

	allowed := newClient(t, srv, Options{Allow: []string{srv.URL}})
	if body, err := get(allowed, srv.URL+"/mcp"); err != nil || body != "ok" {
		t.Errorf("RoundTrip(%s/mcp) with it in Allow = %q, %v; want \"ok\"", srv.URL, body, err)
	}
}
