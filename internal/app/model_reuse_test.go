package app

import (
	"context"
	"testing"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm/llmtest"
)

// TestTurnsReuseTheModelConnection: the turns of one runtime (a serve's
// life) reach the provider over one kept connection, not a new TCP (and
// TLS) handshake each; and the twin: when the key changes the next turn
// sends the new key — the kept client never outlives the settings it was
// built for.
func TestTurnsReuseTheModelConnection(t *testing.T) {
	r := newTestRuntime(t, "smart")
	srv := runServer(t, r,
		openAI(llmtest.Turn{Text: []string{"one"}}),
		openAI(llmtest.Turn{Text: []string{"two"}}),
		openAI(llmtest.Turn{Text: []string{"three"}}),
		openAI(llmtest.Turn{Text: []string{"four"}}),
	)
	for _, s := range []string{"a", "b", "c"} {
		if _, err := r.Run(context.Background(), channel.TurnRequest{Text: "hi", Session: "reuse-" + s}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests; want 3", len(reqs))
	}
	for i, q := range reqs[1:] {
		if q.Remote != reqs[0].Remote {
			t.Errorf("turn %d came from %s, turn 1 from %s: a new connection per turn", i+2, q.Remote, reqs[0].Remote)
		}
	}
	t.Setenv("OPENAI_API_KEY", "sk-test-ROTATED0123456789")
	if _, err := r.Run(context.Background(), channel.TurnRequest{Text: "hi", Session: "reuse-d"}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[3].Header.Get("Authorization"); got != "Bearer sk-test-ROTATED0123456789" {
		t.Errorf("after the key changed, the request carries %q; want the new key", got)
	}
}
