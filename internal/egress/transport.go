package egress

import (
	"net/http"
)

// Transport returns an http.RoundTripper that holds every request to this
// Client's rules: the URL rules of Check (scheme, port, Allow entries,
// literal addresses) before the request is sent, and the address rules
// when it dials (names resolved and checked by homard, not the system's
// proxy settings). It is for callers that speak their own protocol over
// HTTP, such as an MCP server's streamable HTTP: it follows no redirect
// itself (that is the http.Client's CheckRedirect), caps no body, and
// waits for response headers as long as the request's context allows (a
// tool call may take minutes before it answers).
func (c *Client) Transport() http.RoundTripper {
	tr := c.hc.Transport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = 0
	return &checked{c: c, base: tr}
}

// checked applies Client.checkURL to each request before base sends it.
type checked struct {
	c    *Client
	base *http.Transport
}

func (t *checked) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.c.checkURL(req.URL); err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // a RoundTripper must close the body, even on error
		}
		return nil, err
	}
	return t.base.RoundTrip(req)
}
