package llm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 0, "2": 2 * time.Second, "-1": 0, "Wed, 21 Oct 2015 07:28:00 GMT": 0} {
		if got := retryAfter(in); got != want {
			t.Errorf("retryAfter(%q) = %v; want %v", in, got, want)
		}
	}
}

func TestSendStopsBackoffOnCancel(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(429)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for n.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	s := Send{Provider: "p", URL: srv.URL, Header: http.Header{}, MaxRetries: 5, BaseDelay: time.Millisecond}
	_, err := s.Do(ctx)
	// The cancel may land during the request or during the hour-long
	// backoff; either way Do returns at once with ctx's error.
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Do = %v; want context.Canceled", err)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests; want 1", n.Load())
	}
}

// TestSendRetryDefaults: zero MaxRetries means 3 retries, negative none.
func TestSendRetryDefaults(t *testing.T) {
	for _, c := range []struct{ max, want int32 }{{0, 4}, {-1, 1}, {1, 2}} {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			w.WriteHeader(503)
		}))
		s := Send{Provider: "p", URL: srv.URL, Header: http.Header{}, MaxRetries: int(c.max), BaseDelay: time.Millisecond}
		if _, err := s.Do(context.Background()); !errors.Is(err, ErrServer) {
			t.Errorf("MaxRetries %d: Do = %v; want ErrServer", c.max, err)
		}
		if n.Load() != c.want {
			t.Errorf("MaxRetries %d: %d requests; want %d", c.max, n.Load(), c.want)
		}
		srv.Close()
	}
}
