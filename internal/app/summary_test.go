package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/store/storetest"
)

// TestRunSummaryPersistsAcrossRestart: turns that outgrow the context
// budget are folded; the summary is stored (redacted) with the turn, and
// after a restart only the summary and the turns after it are sent.
func TestRunSummaryPersistsAcrossRestart(t *testing.T) {
	ctx := context.Background()
	paths, err := config.ResolvePaths(t.TempDir(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Init(ctx, paths, config.InitOptions{StoreURL: storetest.URL(t)}); err != nil {
		t.Fatal(err)
	}
	open := func() *Runtime {
		r, err := Open(ctx, paths, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Room for the prefix and about two of the turns below.
		var specs []llm.ToolSpec
		for _, s := range r.Registry.Specs() {
			specs = append(specs, llm.ToolSpec{Name: s.Name, Description: s.Description, Schema: s.Schema})
		}
		r.Config.Model.ContextTokens = agent.EstimateRequest(llm.Request{System: systemPrompt, Tools: specs}) + 3000
		return r
	}
	const key = "sk-proj-BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
	// Every call, summary or not, gets this answer: which calls are summary
	// calls is the agent's business, tested in internal/agent.
	reply := openAI(llmtest.Turn{Text: []string{"Notes: the locker code word is PERIWINKLE-42 (key " + key + ")."}})
	filler := strings.Repeat("We talked about the allotment. ", 130) // about 1000 tokens
	task := func(n int) string { return fmt.Sprintf("Turn %d: %s", n, filler) }

	r := open()
	for n := 1; n <= 3; n++ {
		runServer(t, r, reply, reply, reply, reply)
		if _, err := r.Run(ctx, channel.TurnRequest{Text: task(n)}); err != nil {
			t.Fatalf("Run %d: %v", n, err)
		}
	}
	sum, err := r.Store.Summary(ctx, "cli")
	if err != nil {
		t.Fatalf("Summary after 3 turns: %v; want one", err)
	}
	if sum.ThroughTurn != 2 || !strings.Contains(sum.Text, "PERIWINKLE-42") || strings.Contains(sum.Text, key) {
		t.Fatalf("stored summary %+v; want turns 1-2 folded, the fact kept and the key redacted", sum)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	r = open()
	t.Cleanup(func() { r.Close() })
	srv := runServer(t, r, reply)
	if _, err := r.Run(ctx, channel.TurnRequest{Text: "Turn 4: what is my locker code word?"}); err != nil {
		t.Fatalf("Run after restart: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests after restart; want 1 (no new fold)", len(reqs))
	}
	msgs := requestMessages(t, reqs[0])
	var got []string
	for _, m := range msgs {
		s, _ := m.Content.(string)
		got = append(got, s)
	}
	if len(got) != 4 || !strings.HasPrefix(got[0], "[BEGIN_CONVERSATION_SUMMARY]") || !strings.Contains(got[0], "PERIWINKLE-42") ||
		msgs[0].Role != "user" || strings.Contains(got[0], key) ||
		!strings.HasPrefix(got[1], "Turn 3:") || !strings.HasPrefix(got[3], "Turn 4:") {
		t.Fatalf("request after restart = %d messages %.120q; want the summary block, turn 3 and turn 4", len(got), got)
	}
	all, err := r.Store.Messages(ctx, "cli")
	if err != nil || len(all) != 8 {
		t.Fatalf("stored messages = %d, %v; want all 4 turns kept (8)", len(all), err)
	}
}

func TestSummarizedTurn(t *testing.T) {
	turns := []int{3, 3, 3, 4, 4, 5}
	for _, tt := range []struct{ n, want int }{
		{0, 0}, {3, 3}, {5, 4}, {6, 5},
		{2, 2}, // a fold inside turn 3 keeps turn 3 loaded
		{1, 2}, {7, 0},
	} {
		if got := summarizedTurn(turns, tt.n); got != tt.want {
			t.Errorf("summarizedTurn(%v, %d) = %d; want %d", turns, tt.n, got, tt.want)
		}
	}
}
