package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestServeLogFormat: with LogFormat "json" every line serve logs (start,
// a refused request, shutdown) is one JSON object with time, level and
// msg; "text" keeps slog's key=value lines; an unknown format is refused
// before anything listens.
func TestServeLogFormat(t *testing.T) {
	r := newTestRuntime(t, "autopilot")
	for _, tc := range []struct {
		format string
		json   bool
	}{
		{"json", true},
		{"text", false},
		{"", false},
	} {
		t.Run("format="+tc.format, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			log := &syncBuffer{}
			ctx, cancel := context.WithCancel(context.Background())
			ready, done := make(chan struct{}), make(chan error, 1)
			go func() {
				done <- r.Serve(ctx, ServeOptions{Listener: ln, Out: io.Discard, Log: log, LogFormat: tc.format,
					Grace: time.Second, OnListen: func(string, string) { close(ready) }})
			}()
			select {
			case <-ready:
			case err := <-done:
				t.Fatalf("Serve: %v", err)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Serve: %v", err)
			}
			lines := strings.Split(strings.TrimSpace(log.String()), "\n")
			var msgs []string
			for _, line := range lines {
				var rec map[string]any
				err := json.Unmarshal([]byte(line), &rec)
				if !tc.json {
					if err == nil || !strings.Contains(line, "msg=") {
						t.Errorf("text log line %q: want slog text (msg=...), not JSON", line)
					}
					continue
				}
				if err != nil {
					t.Fatalf("json log line %q does not parse: %v", line, err)
				}
				for _, k := range []string{"time", "level", "msg"} {
					if _, ok := rec[k]; !ok {
						t.Errorf("json log line %q has no %q", line, k)
					}
				}
				msgs = append(msgs, rec["msg"].(string))
			}
			if tc.json && (len(msgs) < 2 || msgs[0] != "listening" || !slices.Contains(msgs, "shutting down")) {
				t.Errorf("json log messages = %q; want listening ... shutting down", msgs)
			}
		})
	}
	err := r.Serve(context.Background(), ServeOptions{Addr: "127.0.0.1:0", Out: io.Discard, Log: io.Discard, LogFormat: "yaml"})
	if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "text or json") {
		t.Errorf("Serve with log format yaml = %v; want ErrBadRequest naming text and json", err)
	}
}
