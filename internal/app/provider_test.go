package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
)

func TestProviderTest(t *testing.T) {
	const key = "sk-test-PROVIDERKEY0123456789"
	t.Setenv("OPENAI_API_KEY", key)
	ok := llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"O", "K"}, Usage: &llm.Usage{Input: 20, Output: 1, Cached: 8}})}
	cases := []struct {
		name  string
		reply llmtest.Reply
		want  error
		hint  string
	}{
		{"ok", ok, nil, ""},
		{"bad key", llmtest.OpenAIError(401), llm.ErrAuth, "OPENAI_API_KEY"},
		{"unknown model", llmtest.OpenAIError(404), llm.ErrModelNotFound, "model.name"},
		{"no tools", llmtest.OpenAIError(400), llm.ErrBadRequest, "tool-call support"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.NewServer(c.reply)
			defer srv.Close()
			r := newTestRuntime(t, "smart")
			r.Config.Model.BaseURL = srv.URL + "/v1"
			rep, err := r.ProviderTest(context.Background())
			if c.want == nil {
				if err != nil || rep.Reply != "OK" || rep.Usage.Cached != 8 {
					t.Fatalf("ProviderTest = %+v, %v; want reply OK with usage", rep, err)
				}
			} else if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.hint) {
				t.Fatalf("ProviderTest error = %v; want %v mentioning %q", err, c.want, c.hint)
			}
			if err != nil && strings.Contains(err.Error(), key) {
				t.Fatalf("the error shows the key: %v", err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"tools"`) || reqs[0].Header.Get("Authorization") != "Bearer "+key {
				t.Fatalf("request %+v; want one request with tools and the bearer key", reqs)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		r := newTestRuntime(t, "smart")
		r.Config.Model.BaseURL = "http://127.0.0.1:1/v1"
		if _, err := r.ProviderTest(context.Background()); !errors.Is(err, llm.ErrUnreachable) {
			t.Fatalf("ProviderTest = %v; want ErrUnreachable", err)
		}
	})
}
