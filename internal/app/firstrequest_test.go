package app

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
)

// maxFirstRequest is issue 15's budget for the first request of a session
// with every built-in tool offered.
const maxFirstRequest = 8192

// TestFirstRequestSize sends a one-line owner message through Runtime.Run
// (the real registry with every built-in tool, the real system prompt and
// the real wire clients) to fake OpenAI and Anthropic endpoints, and checks
// the body of the first request stays within maxFirstRequest bytes. On the
// Anthropic wire the request marks its stable prefix for the prompt cache
// (twice: the last tool and the system prompt) and the cache reads and
// writes the provider reports reach the turn's usage. Run it
// with -v to see the sizes quoted in the README:
//
//	go test -count=1 -v -run TestFirstRequestSize ./internal/app/
func TestFirstRequestSize(t *testing.T) {
	openaiUsage := llm.Usage{Input: 1900, Output: 3, Cached: 1792}
	anthropicUsage := llm.Usage{Input: 2000, Output: 3, Cached: 1500, CacheWrite: 400}
	cases := []struct {
		wire      string
		reply     llmtest.Reply
		usage     channel.Usage
		cacheMark int // cache_control marks in the request
	}{
		{"openai", llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Hello."}, Usage: &openaiUsage})},
			channel.Usage{Input: 1900, Output: 3, Cached: 1792}, 0},
		{"anthropic", llmtest.Reply{Chunks: llmtest.AnthropicStream(llmtest.Turn{Text: []string{"Hello."}, Usage: &anthropicUsage})},
			channel.Usage{Input: 2000, Output: 3, Cached: 1500, CacheWrite: 400}, 2},
	}
	for _, c := range cases {
		t.Run(c.wire, func(t *testing.T) {
			r := newTestRuntime(t, "smart")
			srv := llmtest.NewServer(c.reply)
			t.Cleanup(srv.Close)
			t.Setenv("HOMARD_TEST_KEY", "sk-test-FIRSTREQUEST0123456789")
			r.Config.Model.Provider = c.wire
			r.Config.Model.APIKeyEnv = "HOMARD_TEST_KEY"
			r.Config.Model.BaseURL = srv.URL
			if c.wire == "openai" {
				r.Config.Model.BaseURL += "/v1"
			}
			r.Config.Memory.Capture = "off" // a second request, not the first
			res, err := r.Run(context.Background(), channel.TurnRequest{Text: "What is on my calendar today?"})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Usage != c.usage {
				t.Errorf("turn usage = %+v; want %+v (the provider's cache reads and writes)", res.Usage, c.usage)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("the fake %s endpoint got %d requests; want 1", c.wire, len(reqs))
			}
			body := reqs[0].Body
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(body, &fields); err != nil {
				t.Fatalf("request body: %v", err)
			}
			var tools []json.RawMessage
			if err := json.Unmarshal(fields["tools"], &tools); err != nil {
				t.Fatalf("tools in the request: %v", err)
			}
			if n := len(r.Registry.Specs()); len(tools) != n || n == 0 {
				t.Fatalf("the request offers %d tools; want every built-in tool (%d)", len(tools), n)
			}
			if n := bytes.Count(body, []byte(`"cache_control":{"type":"ephemeral"}`)); n != c.cacheMark {
				t.Errorf("%s: the request has %d cache marks; want %d", c.wire, n, c.cacheMark)
			}
			for _, tl := range tools {
				t.Logf("  %5d %.60s", len(tl), tl)
			}
			t.Logf("%s: first request %d bytes, of which tool definitions %d bytes (%d tools)",
				c.wire, len(body), len(fields["tools"]), len(tools))
			if len(body) > maxFirstRequest {
				t.Errorf("%s: the first request is %d bytes (tools %d); want at most %d: shorten the tool descriptions (internal/tools/*.md) or schemas",
					c.wire, len(body), len(fields["tools"]), maxFirstRequest)
			}
		})
	}
}
