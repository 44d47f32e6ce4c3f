package openai

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/llm"
)

// TestDeadlines: an endpoint that accepts the request and never answers,
// one that stalls in the middle of its stream, and one that trickles
// without end each end the turn with ErrModelTimeout and a message naming
// the setting — instead of hanging — while the twin, an answer that
// streams steadily, is read whole.
func TestDeadlines(t *testing.T) {
	chunk := func(text string) string {
		return fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", text)
	}
	done := "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request)
		want    string // in the error; "" means success
	}{
		{"never answers", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, "model.first_event_timeout"},
		{"headers then nothing", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, "model.first_event_timeout"},
		{"stalls mid-stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, chunk("Hel"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, "model.idle_timeout"},
		{"trickles forever", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for r.Context().Err() == nil {
				fmt.Fprint(w, chunk("."))
				w.(http.Flusher).Flush()
				time.Sleep(50 * time.Millisecond)
			}
		}, "model.request_timeout"},
		{"twin: steady stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, p := range []string{"Hel", "lo"} {
				fmt.Fprint(w, chunk(p))
				w.(http.Flusher).Flush()
				time.Sleep(100 * time.Millisecond)
			}
			fmt.Fprint(w, done)
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The handler reads the request first, as a real server does
			// (net/http notices a client gone only after the body is read).
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				tt.handler(w, r)
			}))
			defer srv.Close()
			m := llm.WithDeadlines(New(Options{BaseURL: srv.URL, MaxRetries: -1}), llm.Deadlines{
				First: 500 * time.Millisecond, Idle: 500 * time.Millisecond, Total: 1500 * time.Millisecond,
				FirstSetting: "model.first_event_timeout", IdleSetting: "model.idle_timeout", TotalSetting: "model.request_timeout"})
			res, err := func() (llm.Result, error) {
				s, err := m.Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
				if err != nil {
					return llm.Result{}, err
				}
				return llm.Collect(s)
			}()
			if tt.want == "" {
				if err != nil || res.Text != "Hello" {
					t.Fatalf("steady stream: %q, %v", res.Text, err)
				}
				return
			}
			if !errors.Is(err, llm.ErrModelTimeout) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v; want ErrModelTimeout naming %s", err, tt.want)
			}
		})
	}
}
