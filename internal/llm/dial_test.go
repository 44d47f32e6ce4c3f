package llm

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestConnectTimeout: a connection that is never established (the dialer's
// control hook holds it until the connect limit) ends with an error naming
// model.connect_timeout; the twin, a reachable endpoint, answers.
func TestConnectTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	tests := []struct {
		name  string
		stall bool
		want  string // in the error; "" means success
	}{
		{"connect never completes", true, "model.connect_timeout"},
		{"twin: endpoint reachable", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &net.Dialer{Timeout: 200 * time.Millisecond}
			if tt.stall {
				d.ControlContext = func(ctx context.Context, _, _ string, _ syscall.RawConn) error {
					<-ctx.Done() // a SYN that is never answered
					return ctx.Err()
				}
			}
			c := &http.Client{Transport: newTransport(d, "model.connect_timeout")}
			resp, err := c.Get(srv.URL)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("GET reachable endpoint: %v", err)
				}
				resp.Body.Close()
				return
			}
			if err == nil {
				resp.Body.Close()
				t.Fatal("GET with a stalled connect succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v; want it to name %s", err, tt.want)
			}
		})
	}
}

// TestConnectTimeoutLeavesCallerCancel: when the caller's own context ends
// during the connect, the error is the caller's, not a connect limit.
func TestConnectTimeoutLeavesCallerCancel(t *testing.T) {
	d := &net.Dialer{Timeout: time.Hour, ControlContext: func(ctx context.Context, _, _ string, _ syscall.RawConn) error {
		<-ctx.Done()
		return ctx.Err()
	}}
	ctx, cancel := context.WithCancel(context.Background())
	dial := dialWithin(d, "model.connect_timeout")
	done := make(chan error, 1)
	go func() {
		_, err := dial(ctx, "tcp", "127.0.0.1:1")
		done <- err
	}()
	cancel()
	err := <-done
	if err == nil || strings.Contains(err.Error(), "model.connect_timeout") || !errors.Is(err, context.Canceled) {
		t.Fatalf("dial after cancel = %v; want context.Canceled without naming the setting", err)
	}
}
