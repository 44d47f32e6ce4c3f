package mcp

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// recordAuth is a base transport that answers 200 and records the
// Authorization header it was given.
type recordAuth struct{ got string }

func (r *recordAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = req.Header.Get("Authorization")
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

// TestBearerOnlyToTheEndpointHost: the token goes with requests to the
// configured endpoint's scheme and host (its twin), never to another
// host, port or scheme.
func TestBearerOnlyToTheEndpointHost(t *testing.T) {
	const endpoint = "https://MCP.example.com:8443/mcp"
	cases := []struct {
		url  string
		want string
	}{
		{"https://mcp.example.com:8443/mcp", "Bearer s3cret"},
		{"https://mcp.example.com:8443/other?x=1", "Bearer s3cret"},
		{"https://evil.example/mcp", ""},
		{"https://mcp.example.com/mcp", ""},
		{"http://mcp.example.com:8443/mcp", ""},
		{"https://mcp.example.com.evil.example:8443/mcp", ""},
	}
	for _, c := range cases {
		base := &recordAuth{}
		hc := httpClient(base, endpoint, "s3cret", nil)
		resp, err := hc.Get(c.url)
		if err != nil {
			t.Fatalf("GET %s: %v", c.url, err)
		}
		resp.Body.Close()
		if base.got != c.want {
			t.Errorf("GET %s sent Authorization %q; want %q", c.url, base.got, c.want)
		}
	}
}
