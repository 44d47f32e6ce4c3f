package app

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm/llmtest"
)

// TestRunOffersToolsByTrust: a guest's turn is offered only the guest
// tools, an unknown caller's none, and the owner's (the twin) every tool;
// a guest's model that calls a tool it was not offered is still refused
// by the arbiter (and audited), not run.
func TestRunOffersToolsByTrust(t *testing.T) {
	r := newTestRuntime(t, "smart")
	srv := runServer(t, r,
		openAI(llmtest.Turn{Text: []string{"owner"}}),
		openAI(toolCall("c1", "read_file", `{"path":"x.txt"}`)),
		openAI(llmtest.Turn{Text: []string{"guest"}}),
		openAI(llmtest.Turn{Text: []string{"unknown"}}),
	)
	ctx := context.Background()
	for _, as := range []string{"", "guest", "unknown"} {
		if _, err := r.Run(ctx, channel.TurnRequest{Text: "hello", As: as}); err != nil {
			t.Fatalf("turn as %q: %v", as, err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests; want 4", len(reqs))
	}
	names := func(i int) []string {
		var body struct {
			Tools []struct{ Function struct{ Name string } }
		}
		if err := json.Unmarshal(reqs[i].Body, &body); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range body.Tools {
			out = append(out, tl.Function.Name)
		}
		return out
	}
	tests := []struct {
		who  string
		req  int
		want func([]string) bool
		what string
	}{
		{"owner", 0, func(n []string) bool { return slices.Contains(n, "write_file") && slices.Contains(n, "recall") }, "every tool"},
		{"guest", 1, func(n []string) bool { return slices.Equal(n, []string{"current_time"}) }, "only current_time"},
		{"guest after the refused call", 2, func(n []string) bool { return slices.Equal(n, []string{"current_time"}) }, "only current_time"},
		{"unknown", 3, func(n []string) bool { return len(n) == 0 }, "none"},
	}
	for _, tt := range tests {
		if got := names(tt.req); !tt.want(got) {
			t.Errorf("%s is offered %q; want %s", tt.who, got, tt.what)
		}
	}
	recs, err := r.Owner.AuditTail(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	var refused bool
	for _, rec := range recs {
		if rec.Tool == "read_file" {
			refused = rec.Decision == "denied"
		}
	}
	if !refused {
		t.Errorf("the guest's read_file (not offered) was not audited as denied: %+v", recs)
	}
}
