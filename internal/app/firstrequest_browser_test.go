package app

import (
	"context"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm/llmtest"
)

// maxBrowserToolBytes caps what [browser] enabled adds to every request:
// the thirteen browser tools' definitions on the OpenAI wire.
const maxBrowserToolBytes = 4096

// TestFirstRequestWithBrowser: turning the browser on adds its tools'
// definitions to every request; this measures how much (the README's
// number) and holds it under maxBrowserToolBytes. Chromium is not
// started: tools are offered, none is called.
func TestFirstRequestWithBrowser(t *testing.T) {
	size := func(browser bool) int {
		t.Helper()
		r := newModeRuntime(t, "smart", func(s string) string {
			if !browser {
				return s
			}
			i := strings.Index(s, "[browser]")
			return s[:i] + strings.Replace(s[i:], "enabled = false", "enabled = true", 1)
		}, Options{})
		srv := llmtest.NewServer(llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Hello."}})})
		t.Cleanup(srv.Close)
		t.Setenv("HOMARD_TEST_KEY", "sk-test-FIRSTREQUEST0123456789")
		r.Config.Model.Provider, r.Config.Model.APIKeyEnv, r.Config.Model.BaseURL = "openai", "HOMARD_TEST_KEY", srv.URL+"/v1"
		r.Config.Memory.Capture = "off"
		if _, err := r.Run(context.Background(), channel.TurnRequest{Text: "What is on my calendar today?"}); err != nil {
			t.Fatal(err)
		}
		if browser == (r.browser == nil) {
			t.Fatalf("browser on %v, runtime has one %v", browser, r.browser != nil)
		}
		return len(srv.Requests()[0].Body)
	}
	off, on := size(false), size(true)
	t.Logf("first request: %d bytes without the browser, %d with it (+%d)", off, on, on-off)
	if on-off > maxBrowserToolBytes || on <= off {
		t.Errorf("the browser's tools add %d bytes to every request; want 1 to %d", on-off, maxBrowserToolBytes)
	}
}
