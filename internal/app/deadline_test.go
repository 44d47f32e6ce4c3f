package app

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm"
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
	m, err := newModel(config.Model{Provider: config.ProviderOpenAI, BaseURL: srv.URL, Name: "m",
		FirstEventTimeout: config.Duration(300 * time.Millisecond), IdleTimeout: config.Duration(time.Second)}, "key")
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if !errors.Is(err, llm.ErrModelTimeout) || !strings.Contains(err.Error(), "model.first_event_timeout") {
		t.Fatalf("Stream against a silent endpoint: %v; want ErrModelTimeout naming model.first_event_timeout", err)
	}
}
