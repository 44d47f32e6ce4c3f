package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// HTTPClient returns the client the wire clients reach a model with: like
// http.DefaultClient, except that a connection not established within
// connect (the TCP connect, then the TLS handshake) fails with an error
// naming setting ("model.connect_timeout"), instead of waiting for the
// operating system's own limit (minutes). Zero connect means 30s. The
// client sets no overall timeout: the request's context (Deadlines) bounds
// the rest.
func HTTPClient(connect time.Duration, setting string) *http.Client {
	if connect <= 0 {
		connect = 30 * time.Second
	}
	return &http.Client{Transport: newTransport(&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}, setting)}
}

// newTransport is http.DefaultTransport with d as its dialer and d.Timeout
// as its TLS handshake limit.
func newTransport(d *net.Dialer, setting string) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = dialWithin(d, setting)
	t.TLSHandshakeTimeout = d.Timeout
	// A request carries the whole conversation: at 50 turns, 45 KB. With
	// the default 4 KiB buffer net/http writes it in pieces (and past the
	// first, through a fresh copy buffer each request); this writes a
	// request of up to 64 KiB with its headers in one write.
	t.WriteBufferSize = 64 << 10
	return t
}

// dialWithin dials with d and, when the connect timed out (not the caller's
// context), says which limit fired and which setting raises it.
func dialWithin(d *net.Dialer, setting string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		var ne net.Error
		if err != nil && ctx.Err() == nil && errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("no connection to %s within %s (%s): check that the endpoint is up and reachable, or raise the setting: %w",
				addr, d.Timeout, setting, err)
		}
		return c, err
	}
}
