package agent_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/policy"
)

// fact is what turn 1 says; it must still be known at turn 200.
const fact = "PERIWINKLE-42"

// factLike finds facts in a request; nothing else in these conversations
// looks like one.
var factLike = regexp.MustCompile(`\b[A-Z]{5,}-[0-9]+\b`)

// isSummaryCall reports whether req asks for a conversation summary.
func isSummaryCall(req llm.Request) bool {
	if !req.NoToolCalls || len(req.Messages) == 0 {
		return false
	}
	last := req.Messages[len(req.Messages)-1]
	return last.Role == llm.RoleUser && strings.Contains(last.Content, "Write the new conversation summary")
}

// conversation replays what app.Run does between turns: the summary and the
// history after it, fed back from each TurnResult.
type conversation struct {
	summary string
	history []llm.Message
	events  []agent.Event
}

func (c *conversation) turn(t *testing.T, a *agent.Agent, user string) agent.TurnResult {
	t.Helper()
	res, err := a.Continue(context.Background(), agent.Conversation{Summary: c.summary, History: c.history}, user,
		func(e agent.Event) {
			if e.Kind == agent.EventCompacted {
				c.events = append(c.events, e)
			}
		})
	if err != nil {
		t.Fatalf("turn %q: %v", user, err)
	}
	if res.SummarizedThrough < 0 || res.SummarizedThrough > len(c.history) {
		t.Fatalf("SummarizedThrough = %d of %d history messages", res.SummarizedThrough, len(c.history))
	}
	c.summary = res.Summary
	c.history = append(slices.Clone(c.history[res.SummarizedThrough:]), res.Messages...)
	return res
}

// talker is a scripted model whose answers depend on the request: it reads
// a file when asked to, answers with filler, answers the final question
// with the facts it can see, and, for a summary call, writes a summary of
// the facts it finds in that request (or fails, if failSummary).
func talker(failSummary bool) *llmtest.Func {
	filler := strings.Repeat("The owner and homard discussed the allotment plan at some length. ", 5)
	return llmtest.NewFunc(func(call int, req llm.Request) []llm.Event {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case isSummaryCall(req):
			if failSummary {
				return []llm.Event{llmtest.Fail(errors.New("summariser is down"))}
			}
			var seen []string
			for _, m := range req.Messages[:len(req.Messages)-1] {
				for _, f := range factLike.FindAllString(m.Content, -1) {
					if !slices.Contains(seen, f) {
						seen = append(seen, f)
					}
				}
			}
			return llmtest.Answer("Facts so far: " + strings.Join(seen, ", ") + ". The owner is planning an allotment.")
		case last.Role == llm.RoleUser && strings.Contains(last.Content, "[read notes]"):
			return call2(fmt.Sprintf("c%d", call), "read_file", `{"path":"notes.txt"}`)
		case last.Role == llm.RoleUser && strings.Contains(last.Content, "code word"):
			var seen []string
			for _, m := range req.Messages {
				seen = append(seen, factLike.FindAllString(m.Content, -1)...)
			}
			return llmtest.Answer("Your locker code word: " + strings.Join(seen, " or ") + ".")
		}
		return llmtest.Answer("Noted. " + filler)
	})
}

func call2(id, name, args string) []llm.Event {
	return []llm.Event{llmtest.Call(id, name, args), llmtest.Done(llm.StopToolUse)}
}

// checkRequest fails unless req is within budget, every tool call in it is
// followed at once by its results, every result follows its call, and its
// prefix equals prefix.
func checkRequest(t *testing.T, i int, req llm.Request, prefix llm.Request, budget int) {
	t.Helper()
	if n := agent.EstimateRequest(req); n > budget {
		t.Errorf("request %d: estimate %d tokens; budget %d", i, n, budget)
	}
	if req.System != prefix.System || !reflect.DeepEqual(req.Tools, prefix.Tools) {
		t.Errorf("request %d: system prompt or tools differ from the first request's", i)
	}
	ms := req.Messages
	for j := 0; j < len(ms); j++ {
		m := ms[j]
		if m.Role == llm.RoleTool {
			t.Fatalf("request %d message %d: tool result %q not right after its call", i, j, m.ToolCallID)
		}
		for k, c := range m.ToolCalls {
			if j+1+k >= len(ms) || ms[j+1+k].Role != llm.RoleTool || ms[j+1+k].ToolCallID != c.ID {
				t.Fatalf("request %d message %d: tool call %s is not followed by its result", i, j, c.ID)
			}
		}
		j += len(m.ToolCalls)
	}
}

func runLongSession(t *testing.T, failSummary bool) (*llmtest.Func, *conversation) {
	f := newFixture(t, policy.ModeSmart)
	f.write(t, "notes.txt", strings.Repeat("Beans go in the north bed; leeks in the south bed.\n", 40))
	m := talker(failSummary)
	window := agent.ContextBudget{MaxTokens: 6000, SummaryTokens: 600}
	a := agent.New(agent.Options{
		Model: m, ModelName: "test-model", Decider: f.arb, Tools: f.specs, System: "You are homard.",
		Caller: arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"}, Context: window,
	})
	c := &conversation{}
	c.turn(t, a, "Turn 1. Please remember: my locker code word is "+fact+".")
	for i := 2; i < 200; i++ {
		user := fmt.Sprintf("Turn %d. Let us keep planning the allotment; what goes where this week? ", i) + strings.Repeat("Some detail. ", 20)
		if i%7 == 0 {
			user += " [read notes]"
		}
		c.turn(t, a, user)
	}
	res := c.turn(t, a, "Turn 200. What is my locker code word?")
	if !strings.Contains(res.Text, fact) {
		t.Errorf("answer at turn 200: %q; want it to contain %s", res.Text, fact)
	}
	reqs := m.Requests()
	last := reqs[len(reqs)-1]
	if len(last.Messages) == 0 || !strings.HasPrefix(last.Messages[0].Content, "[BEGIN_CONVERSATION_SUMMARY]") ||
		!strings.Contains(last.Messages[0].Content, fact) {
		t.Errorf("the last request's first message is %.300q; want the summary block with %s", last.Messages[0].Content, fact)
	}
	for _, msg := range last.Messages[1:] {
		if strings.Contains(msg.Content, "Turn 1.") {
			t.Errorf("turn 1 is still in the last request's history; want it folded")
		}
	}
	for i, req := range reqs {
		checkRequest(t, i, req, reqs[0], window.MaxTokens)
	}
	return m, c
}

func TestLongSessionKeepsFactInModelSummary(t *testing.T) {
	m, c := runLongSession(t, false)
	summaries := 0
	for _, req := range m.Requests() {
		if isSummaryCall(req) {
			summaries++
		}
	}
	if summaries == 0 || len(c.events) == 0 {
		t.Fatalf("%d summary calls, %d compaction events; want compaction", summaries, len(c.events))
	}
	// Folding leaves room, so it is not needed on every turn.
	if summaries > 60 {
		t.Errorf("%d summary calls in 200 turns; want folding to leave room for several turns", summaries)
	}
	for _, e := range c.events {
		if !strings.HasPrefix(e.Text, "summarised ") {
			t.Errorf("compaction event %q; want a model summary", e.Text)
		}
	}
	t.Logf("200 turns: %d model calls, %d summary calls, %d folds", len(m.Requests()), summaries, len(c.events))
}

func TestLongSessionFallsBackToRuleSummary(t *testing.T) {
	_, c := runLongSession(t, true)
	if len(c.events) == 0 {
		t.Fatal("no compaction event; want some")
	}
	for _, e := range c.events {
		if !strings.Contains(e.Text, "summary call failed") || !strings.Contains(e.Text, "rule-based") {
			t.Errorf("compaction event %q; want it to say the rule-based summary was used", e.Text)
		}
	}
	if !strings.Contains(c.summary, "- owner: Turn 1. Please remember") {
		t.Errorf("rule-based summary %.400q; want turn 1's entry kept at its beginning", c.summary)
	}
}

func TestHugeToolResultIsShrunkOnlyInTheRequest(t *testing.T) {
	// With artifacts off, the whole file reaches the agent (a tool with
	// NoArtifact, or results under the artifact threshold but over a small
	// context budget, do the same).
	f := newFixture(t, policy.ModeSmart, func(o *arbiter.Options) { o.ArtifactChars = -1 })
	var file strings.Builder
	file.WriteString("FIRST LINE\n")
	for i := range 600 {
		fmt.Fprintf(&file, "line %04d %s\n", i, strings.Repeat("x", 80))
	}
	file.WriteString("LAST LINE\n")
	f.write(t, "big.txt", file.String())
	m := llmtest.NewScripted(call2("c1", "read_file", `{"path":"big.txt"}`),
		llmtest.Answer("The owner said hello."), llmtest.Answer("It is big."))
	window := agent.ContextBudget{MaxTokens: 6000}
	a := agent.New(agent.Options{
		Model: m, ModelName: "test-model", Decider: f.arb, Tools: f.specs, System: "You are homard.",
		Caller: arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"}, Context: window,
	})
	history := []llm.Message{{Role: llm.RoleUser, Content: "hello"}, {Role: llm.RoleAssistant, Content: "hi"}}
	res, err := a.Turn(context.Background(), history, "read big.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	full := toolMessages(llm.Request{Messages: res.Messages})
	if len(full) != 1 || !strings.Contains(full[0].Content, "line 0300") || !strings.Contains(full[0].Content, "LAST LINE") ||
		strings.Contains(full[0].Content, "omitted from this copy") {
		t.Fatalf("TurnResult tool message (%d bytes); want the whole file", len(full[0].Content))
	}
	reqs := m.Requests()
	// The earlier turn is folded first, then the copy is shrunk.
	if len(reqs) != 3 || !isSummaryCall(reqs[1]) {
		t.Fatalf("%d model calls; want 3: read, summary, answer", len(reqs))
	}
	if res.Summary != "The owner said hello." || res.SummarizedThrough != 2 {
		t.Errorf("Summary %q through %d; want the summary of both history messages", res.Summary, res.SummarizedThrough)
	}
	sent := toolMessages(reqs[2])
	if len(sent) != 1 {
		t.Fatalf("second request has %d tool messages; want 1", len(sent))
	}
	got := sent[0].Content
	if !regexp.MustCompile(`\[… \d+ characters omitted from this copy …\]`).MatchString(got) ||
		!strings.Contains(got, "FIRST LINE") || !strings.Contains(got, "LAST LINE") ||
		!wrapped.MatchString(got) {
		t.Errorf("request copy of the tool result (%d bytes); want its beginning, end and markers with an omission note", len(got))
	}
	for i, req := range reqs {
		checkRequest(t, i, req, reqs[0], window.MaxTokens)
	}
}

// TestFoldNeverSeparatesCallFromResult makes the tool calls the big
// messages, so that a fold cutting by size alone would cut right after one.
func TestFoldNeverSeparatesCallFromResult(t *testing.T) {
	f := newFixture(t, policy.ModeSmart)
	body := strings.Repeat("compost ", 400)
	m := llmtest.NewFunc(func(call int, req llm.Request) []llm.Event {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case isSummaryCall(req):
			return llmtest.Answer("The owner keeps asking for compost notes.")
		case last.Role == llm.RoleUser:
			return call2(fmt.Sprintf("w%d", call), "write_file", fmt.Sprintf(`{"path":"c%d.md","content":%q}`, call, body))
		}
		return llmtest.Answer("Waiting for your approval.")
	})
	window := agent.ContextBudget{MaxTokens: 5000, SummaryTokens: 400}
	a := agent.New(agent.Options{
		Model: m, ModelName: "test-model", Decider: f.arb, Tools: f.specs, System: "You are homard.",
		Caller: arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"}, Context: window,
	})
	c := &conversation{}
	for i := range 30 {
		c.turn(t, a, fmt.Sprintf("Write compost note %d.", i))
	}
	if len(c.events) == 0 {
		t.Fatal("no compaction; want some")
	}
	reqs := m.Requests()
	for i, req := range reqs {
		checkRequest(t, i, req, reqs[0], window.MaxTokens)
	}
}

// TestSummaryModelWritesTheSummary: with Options.SummaryModel set, the
// summary of folded turns is asked of that model, under its name, and the
// turn's own calls stay with the turn's model.
func TestSummaryModelWritesTheSummary(t *testing.T) {
	f := newFixture(t, policy.ModeSmart)
	turnModel := llmtest.NewScripted(llmtest.Answer("Fine, thanks."))
	// One answer per batch of folded turns, however they are batched.
	summaryModel := llmtest.NewScripted(llmtest.Answer("The owner talked about the allotment."),
		llmtest.Answer("The owner talked about the allotment."), llmtest.Answer("The owner talked about the allotment."))
	a := agent.New(agent.Options{
		Model: turnModel, ModelName: "big", SummaryModel: summaryModel, SummaryModelName: "small",
		Decider: f.arb, Tools: f.specs, System: "You are homard.",
		Caller: arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"}, Context: agent.ContextBudget{MaxTokens: 6000},
	})
	filler := strings.Repeat("We talked about the allotment. ", 500)
	history := []llm.Message{
		{Role: llm.RoleUser, Content: "Turn 1: " + filler}, {Role: llm.RoleAssistant, Content: "Noted."},
		{Role: llm.RoleUser, Content: "Turn 2: " + filler}, {Role: llm.RoleAssistant, Content: "Noted again."},
	}
	res, err := a.Turn(context.Background(), history, "How are you?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary != "The owner talked about the allotment." || res.SummarizedThrough == 0 {
		t.Fatalf("Summary %q through %d; want the summary model's, some turns folded", res.Summary, res.SummarizedThrough)
	}
	sums := summaryModel.Requests()
	if len(sums) == 0 {
		t.Fatal("the summary model got no request")
	}
	for i, req := range sums {
		if !isSummaryCall(req) || req.Model != "small" {
			t.Errorf("summary model request %d: summary call %v, model %q; want a summary call for \"small\"", i, isSummaryCall(req), req.Model)
		}
	}
	turns := turnModel.Requests()
	if len(turns) != 1 || isSummaryCall(turns[0]) || turns[0].Model != "big" {
		t.Errorf("turn model got %d requests (first a summary call: %v); want the one turn request for \"big\"", len(turns), len(turns) > 0 && isSummaryCall(turns[0]))
	}
}
