package mcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Redirect is the loopback listener an authorization server sends the
// browser back to during `homard mcp login`: http://127.0.0.1:PORT/callback
// on a random port, answering the first redirect that carries a code or an
// error and ignoring everything else.
type Redirect struct {
	URL string // the redirect_uri to register and send

	ln   net.Listener
	srv  *http.Server
	got  chan redirectResult // buffered: the first result only
	once sync.Once           // guards the send on got
}

type redirectResult struct {
	code AuthCode
	err  error
}

// ListenRedirect starts the listener; Close stops it.
func ListenRedirect() (*Redirect, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the login's redirect on 127.0.0.1: %w", err)
	}
	r := &Redirect{URL: "http://" + ln.Addr().String() + "/callback", ln: ln, got: make(chan redirectResult, 1)}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: DefaultStartTimeout}
	go func() { _ = r.srv.Serve(ln) }() // ends when Close shuts the server
	return r, nil
}

func (r *Redirect) serve(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	if req.URL.Path != "/callback" || (q.Get("code") == "" && q.Get("error") == "") {
		http.NotFound(w, req)
		return
	}
	res, err := parseAuthResponse(q)
	r.once.Do(func() { r.got <- redirectResult{res, err} })
	// Nothing of the request is echoed: the page is homard's own words.
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err != nil {
		_, _ = w.Write([]byte("homard: the login was refused; see the terminal.\n"))
		return
	}
	_, _ = w.Write([]byte("homard: login received; you may close this tab and return to the terminal.\n"))
}

// Wait returns the first code (or refusal) the listener received.
func (r *Redirect) Wait(ctx context.Context) (AuthCode, error) {
	select {
	case res := <-r.got:
		return res.code, res.err
	case <-ctx.Done():
		return AuthCode{}, ctx.Err()
	}
}

// Close stops the listener.
func (r *Redirect) Close() error { return r.srv.Close() }

// ErrLoginRefused: the authorization server redirected with an error.
var ErrLoginRefused = errors.New("the authorization server refused the login")

func parseAuthResponse(q url.Values) (AuthCode, error) {
	if e := q.Get("error"); e != "" {
		return AuthCode{}, fmt.Errorf("%w: %s", ErrLoginRefused, e)
	}
	return AuthCode{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// ParsePasted reads what a person pasted when the redirect could not
// reach this machine (homard on a server reached over SSH): the whole
// address the browser ended on, or only its code. A bare code takes the
// state of authURL, the request homard itself made: no browser handed
// it over, so there is no forged redirect for the state to catch.
func ParsePasted(pasted, authURL string) (AuthCode, error) {
	pasted = strings.TrimSpace(pasted)
	if pasted == "" {
		return AuthCode{}, errors.New("nothing was pasted")
	}
	if u, err := url.Parse(pasted); err == nil && u.Scheme != "" && u.RawQuery != "" {
		q := u.Query()
		if q.Get("code") == "" && q.Get("error") == "" {
			return AuthCode{}, errors.New("the pasted address has no code in it; paste the whole address the browser ended on")
		}
		return parseAuthResponse(q)
	}
	if strings.ContainsAny(pasted, " \t?&=/") {
		return AuthCode{}, errors.New("paste the whole address the browser ended on, or only its code")
	}
	a, err := url.Parse(authURL)
	if err != nil {
		return AuthCode{}, err
	}
	return AuthCode{Code: pasted, State: a.Query().Get("state")}, nil
}
