package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/mcp/mcptest"
	"github.com/homard/homard/internal/policy"
)

// manyTools is the fake server's usual four tools and 56 more, each with
// a description and a schema of the size real servers list.
func manyTools() mcptest.Spec {
	spec := mcptest.Default()
	for i := range 56 {
		spec.Tools = append(spec.Tools, mcptest.Tool{
			Name:        fmt.Sprintf("lookup_%02d", i),
			Description: fmt.Sprintf("Look up record %d of the inventory database by its key and return its fields, its history and who changed it last.", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string","description":"the record's key"},"fields":{"type":"array","items":{"type":"string"},"description":"fields to return; all when empty"}},"required":["key"]}`),
		})
	}
	return spec
}

// firstRequest runs one turn in r and returns its only model request's
// body and the names of the tools it offered.
func firstRequest(t *testing.T, r *Runtime) ([]byte, []string) {
	t.Helper()
	srv := runServer(t, r, openAI(llmtest.Turn{Text: []string{"Hello."}}))
	if _, err := r.Run(context.Background(), channel.TurnRequest{Text: "What is on my calendar today?"}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests; want 1", len(reqs))
	}
	return reqs[0].Body, requestToolNames(t, reqs[0].Body)
}

func requestToolNames(t *testing.T, body []byte) []string {
	t.Helper()
	var b struct {
		Tools []struct{ Function struct{ Name string } }
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("request body: %v", err)
	}
	var out []string
	for _, tl := range b.Tools {
		out = append(out, tl.Function.Name)
	}
	return out
}

func countExtensions(names []string) int {
	n := 0
	for _, s := range names {
		if isExtension(s) {
			n++
		}
	}
	return n
}

// TestFirstRequestWithManyMCPTools: a home whose trusted server lists 60
// tools sends a first request no bigger than the same home with the
// server not trusted (no extension tool) plus the budget (its tokens at
// the estimator's 4 bytes each); the tools past it are reached through
// tool_search and call_tool.
func TestFirstRequestWithManyMCPTools(t *testing.T) {
	h := newMCPHome(t, "smart", "")
	writeSpec(t, h.spec, manyTools())
	none, names := firstRequest(t, h.open(t))
	if n := countExtensions(names); n != 0 || slices.Contains(names, "tool_search") {
		t.Fatalf("the untrusted server's home offers %v; want no extension tool and no tool_search", names)
	}
	r := h.open(t)
	h.trust(t, r)
	r = h.open(t)
	budget := r.Config.Agent.ExtensionToolBudget
	many, names := firstRequest(t, r)
	direct := countExtensions(names)
	if direct >= 60 || !slices.Contains(names, "tool_search") || !slices.Contains(names, "call_tool") {
		t.Fatalf("with 60 MCP tools the request offers %d of them directly and %v; want some deferred behind tool_search and call_tool", direct, names)
	}
	t.Logf("first request: %d bytes with 60 MCP tools (%d offered directly, budget %d tokens), %d bytes with none", len(many), direct, budget, len(none))
	if len(many) > len(none)+4*budget {
		t.Errorf("the first request with 60 MCP tools is %d bytes; want at most %d (the home with none, %d, plus the budget of %d tokens at 4 bytes each)",
			len(many), len(none)+4*budget, len(none), budget)
	}
}

// TestFewMCPToolsOfferedDirectly (the twin): a server's four tools fit
// the budget, so they are offered directly and no proxy is offered or
// registered.
func TestFewMCPToolsOfferedDirectly(t *testing.T) {
	h := newMCPHome(t, "smart", "")
	h.trust(t, h.open(t))
	r := h.open(t)
	_, names := firstRequest(t, r)
	for _, want := range []string{"mcp__fake__echo", "mcp__fake__image", "mcp__fake__note", "mcp__fake__write"} {
		if !slices.Contains(names, want) {
			t.Errorf("the request offers %v; want %s offered directly", names, want)
		}
	}
	if slices.Contains(names, "tool_search") || slices.Contains(names, "call_tool") {
		t.Errorf("the request offers %v; want no proxy when every extension tool fits", names)
	}
	if _, ok := r.Registry.Lookup("tool_search"); ok {
		t.Error("tool_search is registered although every extension tool is offered directly")
	}
}

// TestCallToolThroughTheArbiter: in a session over the budget, the model
// finds mcp__fake__write with tool_search (an untrusted result) and calls
// it with call_tool: the arbiter decides the real tool (pending in smart
// mode, the owner's card and the approval name mcp__fake__write), and
// after approval the same call runs once. call_tool of a built-in, of a
// proxy, of itself or of a tool no trusted server offers is refused and
// audited. Every request of the session carries byte-identical tools and
// system prompt.
func TestCallToolThroughTheArbiter(t *testing.T) {
	h := newMCPHome(t, "smart", "")
	writeSpec(t, h.spec, manyTools())
	h.trust(t, h.open(t))
	r := h.open(t)
	const write = `{"name":"mcp__fake__write","arguments":{"path":"notes/a.txt"}}`
	refused := []struct{ args, why string }{
		{`{"name":"read_file","arguments":{"path":"x.txt"}}`, "call read_file directly"}, // a built-in
		{`{"name":"call_tool","arguments":{"name":"mcp__fake__write"}}`, "call call_tool directly"},
		{`{"name":"tool_search","arguments":{"query":"write"}}`, "call tool_search directly"},
		{`{"name":"mcp__other__write","arguments":{}}`, "no extension tool is named mcp__other__write"}, // no such (trusted) server
		{`{"name":"mcp__fake__write","arguments":["x"]}`, "invalid arguments"},
	}
	replies := []llmtest.Reply{
		openAI(toolCall("s1", "tool_search", `{"query":"write a file"}`)),
		openAI(toolCall("w1", "call_tool", write)),
	}
	for i, c := range refused {
		replies = append(replies, openAI(toolCall(fmt.Sprintf("r%d", i), "call_tool", c.args)))
	}
	replies = append(replies,
		openAI(llmtest.Turn{Text: []string{"Waiting for your approval."}}),
		openAI(toolCall("w2", "call_tool", write)),
		openAI(llmtest.Turn{Text: []string{"Written."}}),
	)
	srv := runServer(t, r, replies...)
	var cards []channel.Card
	ask := func(_ context.Context, c channel.Card) (channel.Choice, error) {
		cards = append(cards, c)
		return channel.Leave, nil
	}
	ctx := context.Background()
	res, err := r.Run(ctx, channel.TurnRequest{Text: "write my note", Session: "ts", Ask: ask})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res.Pending) != 1 || len(cards) != 1 || cards[0].Tool != "mcp__fake__write" || !strings.Contains(cards[0].Plan, "write on MCP server fake") {
		for _, rec := range auditSince(t, r, 0) {
			t.Logf("audit: %s %s %s %s", rec.Tool, rec.Decision, rec.Rule, rec.Reason)
		}
		t.Fatalf("pending %v, cards %+v; want one approval whose card shows mcp__fake__write's plan", res.Pending, cards)
	}
	a, err := r.Owner.Approval(ctx, res.Pending[0])
	if err != nil || a.Tool != "mcp__fake__write" || a.Session != "ts" {
		t.Fatalf("approval = %+v, %v; want mcp__fake__write's, in session ts", a, err)
	}
	recs := auditSince(t, r, 0)
	var got []string
	for _, rec := range recs {
		got = append(got, fmt.Sprintf("%s %s %s", rec.Tool, rec.Decision, rec.Rule))
	}
	want := []string{"tool_search ran " + policy.RuleModeRead(policy.ModeSmart), "mcp__fake__write pending " + policy.RuleModeSmart}
	for range refused {
		want = append(want, "call_tool denied "+policy.RuleLookupProxy)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("audit = %q; want %q", got, want)
	}
	for i, c := range refused {
		if rec := recs[2+i]; !strings.Contains(rec.Reason, c.why) {
			t.Errorf("call_tool %s refused with %q; want the reason to say %q", c.args, rec.Reason, c.why)
		}
	}

	reqs := srv.Requests()
	var searched string
	for _, m := range requestMessages(t, reqs[1]) {
		if m.Role == "tool" {
			searched, _ = m.Content.(string)
		}
	}
	if !regexp.MustCompile(`(?s)\[BEGIN_UNTRUSTED nonce=[0-9a-f]{16}\]\n.*name: mcp__fake__write\n.*input_schema: \{.*\[END_UNTRUSTED nonce=[0-9a-f]{16}\]$`).MatchString(searched) {
		t.Errorf("tool_search's tool message is not its matches wrapped as untrusted:\n%s", searched)
	}

	if _, err := r.Owner.Approve(ctx, res.Pending[0], "once"); err != nil {
		t.Fatal(err)
	}
	res, err = r.Run(ctx, channel.TurnRequest{Text: "approved", Session: "ts"})
	if err != nil || res.Text != "Written." {
		t.Fatalf("Run after approval = %+v, %v", res, err)
	}
	last := auditSince(t, r, recs[len(recs)-1].Seq)
	if len(last) != 1 || last[0].Tool != "mcp__fake__write" || last[0].Decision != "ran" {
		t.Fatalf("audit after approval = %+v; want mcp__fake__write ran once", last)
	}
	reqs = srv.Requests()
	var wrote string
	for _, m := range requestMessages(t, reqs[len(reqs)-1]) {
		if m.Role == "tool" {
			wrote, _ = m.Content.(string)
		}
	}
	if !strings.Contains(wrote, "decision: ran") || !strings.Contains(wrote, "wrote notes/a.txt") {
		t.Errorf("the approved call's tool message = %q; want it ran", wrote)
	}

	// The prefix never changed: tools and system prompt byte-identical.
	if len(reqs) != len(replies) {
		t.Fatalf("%d model requests; want %d", len(reqs), len(replies))
	}
	prefix := func(body []byte) (tools, system string) {
		var b struct {
			Tools    json.RawMessage   `json:"tools"`
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(body, &b); err != nil || len(b.Messages) == 0 {
			t.Fatalf("request body: %v", err)
		}
		return string(b.Tools), string(b.Messages[0])
	}
	tools0, system0 := prefix(reqs[0].Body)
	if !strings.Contains(system0, `"system"`) || !strings.Contains(tools0, `"call_tool"`) || strings.Contains(tools0, `"mcp__fake__write"`) {
		t.Fatalf("first request: system %.60s…, tools without call_tool or with mcp__fake__write offered directly", system0)
	}
	for i, rec := range reqs[1:] {
		tools, system := prefix(rec.Body)
		if tools != tools0 || system != system0 {
			t.Errorf("request %d: the tools (%d bytes) or the system prompt (%d bytes) differ from the first request's (%d, %d)",
				i+2, len(tools), len(system), len(tools0), len(system0))
		}
	}
	if !bytes.Contains(reqs[0].Body, []byte(`"tool_search"`)) {
		t.Error("the first request does not offer tool_search")
	}
}
