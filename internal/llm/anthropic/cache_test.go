package anthropic

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
)

// TestPromptCacheMarks: the tools and the system prompt, the prefix every
// call of a session repeats, end in a cache_control mark (on the last tool
// and on the system block), and nothing else is marked: the conversation
// changes each call. The usage the API reports for the cache (reads and
// writes) is read into llm.Usage.
func TestPromptCacheMarks(t *testing.T) {
	tools := []llm.ToolSpec{
		{Name: "read_file", Description: "reads", Schema: json.RawMessage(`{"type":"object"}`)},
		{Name: "write_file", Description: "writes", Schema: json.RawMessage(`{"type":"object"}`)},
	}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "hi"}}
	cases := []struct {
		name       string
		req        llm.Request
		wantSystem bool  // the system block is present and marked
		wantTools  []int // indexes of tools that carry a mark
	}{
		{"tools and system", llm.Request{Model: "m", System: "be brief", Tools: tools, Messages: msgs}, true, []int{1}},
		{"one tool, no system", llm.Request{Model: "m", Tools: tools[:1], Messages: msgs}, false, []int{0}},
		{"system, no tools", llm.Request{Model: "m", System: "be brief", Messages: msgs}, true, nil},
		{"final answer keeps the marks", llm.Request{Model: "m", System: "be brief", Tools: tools, Messages: msgs, NoToolCalls: true}, true, []int{1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			usage := llm.Usage{Input: 2100, Output: 9, Cached: 1800, CacheWrite: 250}
			srv := llmtest.NewServer(llmtest.Reply{Chunks: llmtest.AnthropicStream(llmtest.Turn{Text: []string{"ok"}, Usage: &usage})})
			defer srv.Close()
			s, err := client(srv).Stream(context.Background(), c.req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := llm.Collect(s)
			if err != nil {
				t.Fatal(err)
			}
			if got.Usage != usage {
				t.Errorf("usage = %+v; want %+v (cache reads in Cached, writes in CacheWrite, both inside Input)", got.Usage, usage)
			}

			var body struct {
				System []struct {
					Type, Text   string
					CacheControl *wireCache `json:"cache_control"`
				} `json:"system"`
				Tools []struct {
					Name         string
					CacheControl *wireCache `json:"cache_control"`
				} `json:"tools"`
				Messages []struct {
					Content []map[string]json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			raw := srv.Requests()[0].Body
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatalf("request body: %v\n%s", err, raw)
			}
			if c.wantSystem {
				if len(body.System) != 1 || body.System[0].Type != "text" || body.System[0].Text != c.req.System ||
					body.System[0].CacheControl == nil || body.System[0].CacheControl.Type != "ephemeral" {
					t.Errorf("system = %+v; want one text block with cache_control ephemeral\n%s", body.System, raw)
				}
			} else if len(body.System) != 0 {
				t.Errorf("system = %+v; want none for an empty system prompt", body.System)
			}
			var marked []int
			for i, tl := range body.Tools {
				if tl.CacheControl != nil {
					if tl.CacheControl.Type != "ephemeral" {
						t.Errorf("tool %s: cache_control type %q; want ephemeral", tl.Name, tl.CacheControl.Type)
					}
					marked = append(marked, i)
				}
			}
			if len(marked) != len(c.wantTools) || len(marked) > 0 && marked[0] != c.wantTools[0] {
				t.Errorf("marked tools %v; want %v (only the last)\n%s", marked, c.wantTools, raw)
			}
			for _, m := range body.Messages {
				for _, b := range m.Content {
					if _, ok := b["cache_control"]; ok {
						t.Errorf("a message block is marked: %s", raw)
					}
				}
			}
		})
	}
}
