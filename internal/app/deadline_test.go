package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/provider"
)

// TestModelDeadlinesAreWired: the configured model is bounded by
// model.first_event_timeout — an endpoint that accepts the request and
// never answers ends the call with an error naming the setting.
func TestModelDeadlinesAreWired(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer srv.Close()
	m, err := provider.New(config.Model{Provider: config.ProviderOpenAI, BaseURL: srv.URL, Name: "m",
		FirstEventTimeout: config.Duration(300 * time.Millisecond), IdleTimeout: config.Duration(time.Second)}, "key")
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if !errors.Is(err, llm.ErrModelTimeout) || !strings.Contains(err.Error(), "model.first_event_timeout") {
		t.Fatalf("Stream against a silent endpoint: %v; want ErrModelTimeout naming model.first_event_timeout", err)
	}
}

// hangServer is a fake model endpoint of either wire: it answers "done"
// (in wire's stream format) to a request of at most limit bytes, refuses a
// longer one the way that provider refuses a request longer than the
// model's window, and behaves as stall says otherwise.
type hangServer struct {
	wire  string       // "openai" or "anthropic"
	stall atomic.Value // string: "", "never", "mid-stream", "trickle"
	limit atomic.Int64
	// refused counts the requests refused as too long.
	refused atomic.Int64
}

func (h *hangServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	stream := llmtest.OpenAIStream
	if h.wire == "anthropic" {
		stream = llmtest.AnthropicStream
	}
	chunks := stream(llmtest.Turn{Text: []string{"do", "ne"}})
	if l := h.limit.Load(); l > 0 && int64(len(body)) > l {
		h.refused.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		if h.wire == "anthropic" {
			fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: %d tokens > %d maximum"}}`, len(body)/3, l/3)
		} else {
			fmt.Fprintf(w, `{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, l/3, len(body)/3)
		}
		return
	}
	// first is the chunk with the first text delta.
	first := slices.IndexFunc(chunks, func(c string) bool { return strings.Contains(c, `"do"`) })
	stall, _ := h.stall.Load().(string)
	switch stall {
	case "never":
		<-r.Context().Done()
		return
	case "mid-stream", "trickle":
		chunks = chunks[:first+1]
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range chunks {
		io.WriteString(w, c)
		w.(http.Flusher).Flush()
	}
	switch stall {
	case "mid-stream":
		<-r.Context().Done()
	case "trickle":
		// The same text delta again and again: never idle, never done.
		for r.Context().Err() == nil {
			io.WriteString(w, chunks[first])
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// pointAt points r's model at srv with tiny deadlines.
func pointAt(t *testing.T, r *Runtime, wire string, srv *httptest.Server) {
	t.Helper()
	t.Setenv("HANG_KEY", "sk-test-HANG0123456789")
	m := &r.Config.Model
	m.Provider, m.BaseURL, m.APIKeyEnv = wire, srv.URL, "HANG_KEY"
	if wire == "openai" {
		m.BaseURL += "/v1"
	}
	m.FirstEventTimeout = config.Duration(300 * time.Millisecond)
	m.IdleTimeout = config.Duration(300 * time.Millisecond)
	m.RequestTimeout = config.Duration(time.Second)
	r.Config.Memory.Capture = "off"
}

// TestRunEndsWhenTheModelHangs is the check at the app layer: a
// model that accepts and never answers, one that stalls mid-stream, one
// that keeps the stream open without end, and one that refuses the request
// as too long each end the turn with a message naming what to change —
// within the configured time, storing nothing — in both wire formats. The
// twin, a context-length refusal that folding cures, answers.
func TestRunEndsWhenTheModelHangs(t *testing.T) {
	type tc struct {
		name, stall string
		tooLong     bool   // the window is smaller than even a folded request
		foldCures   bool   // the window fits once the history is folded
		want        string // in the error; "" means the turn answers
	}
	cases := []tc{
		{name: "never answers", stall: "never", want: "model.first_event_timeout"},
		{name: "stalls mid-stream", stall: "mid-stream", want: "model.idle_timeout"},
		{name: "trickles without end", stall: "trickle", want: "model.request_timeout"},
		{name: "context too long even folded", tooLong: true, want: "start a new session"},
		{name: "twin: context too long, folding cures it", foldCures: true},
	}
	for _, wire := range []string{"openai", "anthropic"} {
		for _, c := range cases {
			t.Run(wire+"/"+c.name, func(t *testing.T) {
				r := newTestRuntime(t, "smart")
				h := &hangServer{wire: wire}
				srv := httptest.NewServer(h)
				defer srv.Close()
				pointAt(t, r, wire, srv)
				// A test deadline far above the configured ones: reaching
				// it means the turn hung.
				ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
				defer cancel()
				// Earlier turns in the session, about 60 KB of history.
				for i := range 4 {
					task := fmt.Sprintf("turn %d: ", i) + strings.Repeat("beans go in the north bed. ", 550)
					if _, err := r.Run(ctx, channel.TurnRequest{Text: task, Session: "s"}); err != nil {
						t.Fatalf("seeding turn %d: %v", i, err)
					}
				}
				before, err := r.Store.Messages(ctx, "s")
				if err != nil {
					t.Fatal(err)
				}
				h.stall.Store(c.stall)
				switch {
				case c.tooLong:
					h.limit.Store(1000) // below the system prompt and tools alone
				case c.foldCures:
					h.limit.Store(50_000) // the history is about 60 KB
				}
				res, err := r.Run(ctx, channel.TurnRequest{Text: "what goes where?", Session: "s"})
				if ctx.Err() != nil {
					t.Fatalf("Run hung until the test deadline (%v)", err)
				}
				after, serr := r.Store.Messages(context.Background(), "s")
				if serr != nil {
					t.Fatal(serr)
				}
				if (c.tooLong || c.foldCures) && h.refused.Load() == 0 {
					t.Fatal("the endpoint never refused a request as too long; the case tests nothing")
				}
				if c.want == "" {
					if err != nil || res.Text != "done" {
						t.Fatalf("Run = %q, %v; want the answer after folding", res.Text, err)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("Run = %v; want an error saying %q", err, c.want)
				}
				if len(after) != len(before) {
					t.Fatalf("the failed turn stored %d messages; want none", len(after)-len(before))
				}
			})
		}
	}
}

// TestProviderTestTimeout: `homard provider test` against an endpoint that
// never answers gives up at its limit and says how to wait longer.
func TestProviderTestTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer srv.Close()
	r := newTestRuntime(t, "smart")
	r.Config.Model.BaseURL = srv.URL + "/v1"
	_, err := r.ProviderTestWithin(t.Context(), 300*time.Millisecond)
	if !errors.Is(err, llm.ErrModelTimeout) || !strings.Contains(err.Error(), "--timeout") {
		t.Fatalf("ProviderTestWithin(silent endpoint) = %v; want ErrModelTimeout saying --timeout", err)
	}
}
