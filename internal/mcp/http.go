package mcp

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// httpClient is the client a streamable-HTTP server at endpoint is
// reached with: the bearer token (the static one, or the OAuth login's,
// refreshed) on every request to endpoint's scheme and host (and on none
// to any other), every response body capped at MaxHTTPBody, and no
// redirect followed (a redirect would carry the token to a host the
// operator did not name). No overall timeout: calls are bounded by their
// context.
func httpClient(base http.RoundTripper, endpoint, token string, login *oauthTokens) *http.Client {
	if base == nil {
		base = http.DefaultTransport
	}
	b := &bearer{base: base, token: token, login: login}
	if u, err := url.Parse(endpoint); err == nil {
		b.scheme, b.host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	}
	return &http.Client{
		Transport: b,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("mcp server answered with a redirect; set url to the final address")
		},
	}
}

type bearer struct {
	base         http.RoundTripper
	token        string       // a static token; "" for none
	login        *oauthTokens // an OAuth login instead of token; nil for none
	scheme, host string       // the endpoint's, lowercased: where the token may go
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.ToLower(req.URL.Scheme) != b.scheme || strings.ToLower(req.URL.Host) != b.host {
		return b.send(req)
	}
	if b.login == nil {
		if b.token != "" {
			req = req.Clone(req.Context())
			req.Header.Set("Authorization", "Bearer "+b.token)
		}
		resp, err := b.send(req)
		if err == nil && resp.StatusCode == http.StatusUnauthorized {
			// A 401 otherwise reaches the person as the SDK's bare
			// "Unauthorized": say what to do instead.
			_ = resp.Body.Close()
			return nil, unauthorized(b.token != "", resp.Header.Values("WWW-Authenticate"))
		}
		return resp, err
	}
	tok, err := b.login.token(req.Context(), false, "")
	if err != nil {
		return nil, err
	}
	first := req.Clone(req.Context())
	first.Header.Set("Authorization", "Bearer "+tok)
	resp, err := b.send(first)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || (req.Body != nil && req.GetBody == nil) {
		return resp, err
	}
	// Refused: refresh once and send the request again.
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if tok, err = b.login.token(req.Context(), true, tok); err != nil {
		return nil, err
	}
	again := req.Clone(req.Context())
	if req.GetBody != nil {
		if again.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	again.Header.Set("Authorization", "Bearer "+tok)
	return b.send(again)
}

// unauthorized is the error of a 401 from a server homard holds no login
// for: a static token refused, or a server that asks for an OAuth login.
func unauthorized(static bool, challenges []string) error {
	if static {
		return errors.New("the server refused the token_secret's token (401): store the right one with homard secret set")
	}
	for _, c := range challenges {
		if len(c) >= 6 && strings.EqualFold(c[:6], "bearer") {
			return errors.New(`the server asks for a login (401): set auth = "oauth" in its [[mcp.servers]] table, then run homard mcp login NAME`)
		}
	}
	return errors.New("the server refused the request (401) and names no way to log in")
}

// send passes req on and caps the response body.
func (b *bearer) send(req *http.Request) (*http.Response, error) {
	resp, err := b.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: MaxHTTPBody}
	return resp, nil
}

// errBodyTooLarge is returned by a body read past MaxHTTPBody.
var errBodyTooLarge = fmt.Errorf("mcp server's response is over %d MiB", MaxHTTPBody>>20)

type cappedBody struct {
	rc   io.ReadCloser
	left int
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// At the cap: only the end of the body is acceptable.
		var one [1]byte
		n, err := c.rc.Read(one[:])
		if n > 0 {
			return 0, errBodyTooLarge
		}
		return 0, err
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.rc.Read(p)
	c.left -= n
	return n, err
}

func (c *cappedBody) Close() error { return c.rc.Close() }
