package mcp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Redirect is the loopback listener an authorization server sends the
// browser back to during `homard mcp login`: http://127.0.0.1:PORT/callback
// on a random port, keeping the first redirect that carries a code or an
// error and ignoring everything else.
type Redirect struct {
	URL string // the redirect_uri to register and send

	srv *http.Server
	got chan url.Values // buffered: the first redirect only
}

// ListenRedirect starts the listener; Close stops it.
func ListenRedirect() (*Redirect, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Redirect{URL: "http://" + ln.Addr().String() + "/callback", got: make(chan url.Values, 1)}
	r.srv = &http.Server{ReadHeaderTimeout: DefaultStartTimeout, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		if req.URL.Path != "/callback" || q.Get("code")+q.Get("error") == "" {
			http.NotFound(w, req)
			return
		}
		select {
		case r.got <- q:
		default: // a later one is ignored
		}
		// Nothing of the request is echoed: the page is homard's own words.
		_, _ = w.Write([]byte("homard: received; return to the terminal.\n"))
	})}
	go func() { _ = r.srv.Serve(ln) }() // ends when Close shuts the server
	return r, nil
}

// Wait returns the first code (or refusal) the listener received, or
// what the person pasted into pasted first (ParsePasted with authURL);
// pasted may be nil.
func (r *Redirect) Wait(ctx context.Context, pasted <-chan string, authURL string) (AuthCode, error) {
	select {
	case q := <-r.got:
		return authResponse(q)
	case line := <-pasted:
		return ParsePasted(line, authURL)
	case <-ctx.Done():
		return AuthCode{}, ctx.Err()
	}
}

// Close stops the listener.
func (r *Redirect) Close() error { return r.srv.Close() }

func authResponse(q url.Values) (AuthCode, error) {
	if e := q.Get("error"); e != "" || q.Get("code") == "" {
		return AuthCode{}, errors.New("the authorization server refused the login: " + e)
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
	if u, err := url.Parse(pasted); err == nil && u.Scheme != "" {
		return authResponse(u.Query())
	}
	if pasted == "" || strings.ContainsAny(pasted, " \t?&=/") {
		return AuthCode{}, errors.New("paste the whole address the browser ended on, or only its code")
	}
	a, _ := url.Parse(authURL)
	return AuthCode{Code: pasted, State: a.Query().Get("state")}, nil
}
