package app

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm/llmtest"
)

// TestSystemPromptLanguageLine: a turn whose owner reads Chinese (a
// chat's language, or the config's lang for the CLI and the web) sends
// the system prompt with one more line asking for Simplified Chinese; an
// English turn, and one with no language under lang = "en" or under
// "auto" in an English environment, sends the system prompt byte for
// byte as before (the first request's budget has no room for more).
func TestSystemPromptLanguageLine(t *testing.T) {
	const line = "\nAnswer in Simplified Chinese unless the owner writes in another language."
	cases := []struct {
		name, reqLang, setting, env string
		want                        string
	}{
		{"chat in Chinese", "zh", "auto", "C.UTF-8", systemPrompt + line},
		{"chat in English under lang zh", "en", "zh", "zh_CN.UTF-8", systemPrompt},
		{"CLI under lang zh", "", "zh", "C.UTF-8", systemPrompt + line},
		{"CLI under auto in a Chinese environment", "", "auto", "zh_CN.UTF-8", systemPrompt + line},
		{"CLI under auto in an English environment", "", "auto", "en_US.UTF-8", systemPrompt},
		{"CLI under lang en", "", "en", "zh_CN.UTF-8", systemPrompt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newTestRuntime(t, "smart")
			srv := llmtest.NewServer(llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Hello."}})})
			t.Cleanup(srv.Close)
			t.Setenv("HOMARD_TEST_KEY", "sk-test-LANGLINE0123456789abcd")
			t.Setenv("LC_ALL", "")
			t.Setenv("LC_MESSAGES", "")
			t.Setenv("LANG", c.env)
			r.Config.Model.Provider, r.Config.Model.APIKeyEnv, r.Config.Model.BaseURL = "openai", "HOMARD_TEST_KEY", srv.URL+"/v1"
			r.Config.Memory.Capture = "off"
			r.Config.Lang = c.setting
			if _, err := r.Run(context.Background(), channel.TurnRequest{Text: "hello", Lang: c.reqLang}); err != nil {
				t.Fatalf("Run: %v", err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d model requests; want 1", len(reqs))
			}
			var body struct {
				Messages []struct {
					Role    string `json:"role"`
					Content string `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(reqs[0].Body, &body); err != nil || len(body.Messages) == 0 || body.Messages[0].Role != "system" {
				t.Fatalf("request %s: want a system message first (%v)", reqs[0].Body, err)
			}
			if got := body.Messages[0].Content; got != c.want {
				t.Errorf("system prompt ends %q (%d bytes); want it to end %q (%d bytes)", tail(got), len(got), tail(c.want), len(c.want))
			}
		})
	}
}

func tail(s string) string {
	if len(s) > 90 {
		return s[len(s)-90:]
	}
	return s
}
