package llmtest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/homard/homard/internal/llm"
)

// NewRepeatingServer is a loopback endpoint that answers every request,
// however many, with the same wire chunks (OpenAIStream or
// AnthropicStream), flushing after each. It is for benchmarks: unlike
// NewServer it records nothing and never runs out of replies.
func NewRepeatingServer(chunks []string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			io.WriteString(w, c)
			w.(http.Flusher).Flush()
		}
	}))
}

// FirstText streams req from m to the end and returns the time from the
// Stream call to the first text event: a client's own time to first byte,
// the baseline homard's overhead is measured against.
func FirstText(ctx context.Context, m llm.Model, req llm.Request) (time.Duration, error) {
	start := time.Now()
	s, err := m.Stream(ctx, req)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	var first time.Duration
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		if ev.Kind == llm.EventText && first == 0 {
			first = time.Since(start)
		}
	}
	if first == 0 {
		return 0, errors.New("the stream had no text event")
	}
	return first, nil
}
