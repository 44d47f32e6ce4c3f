package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
)

const key = "sk-ant-test-SECRET-0123456789"

func client(srv *llmtest.Server) *Client {
	return New(Options{BaseURL: srv.URL, APIKey: key, RetryDelay: time.Millisecond})
}

var toolTurn = llmtest.Turn{
	Text: []string{"Let me ", "look."},
	Calls: []llmtest.CallScript{
		{ID: "toolu_1", Name: "read_file", Fragments: []string{`{"pa`, `th": "a\`, `"b.txt\u00e9"`, `}`}},
		{ID: "toolu_2", Name: "list_dir", Fragments: []string{`{"dir":`, ` "."}`}},
	},
	Usage: &llm.Usage{Input: 120, Output: 30, Cached: 100, CacheWrite: 15},
}

func TestStreamTextToolCallsAndUsage(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Reply{Chunks: llmtest.AnthropicStream(toolTurn)})
	defer srv.Close()
	req := llm.Request{
		Model: "claude-test", System: "be brief",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "hi"},
			{Role: llm.RoleAssistant, Content: "ok", ToolCalls: []llm.ToolCall{
				{ID: "t0", Name: "x", Args: json.RawMessage(`{"a":1}`)},
				{ID: "t1", Name: "y", Args: json.RawMessage(`{"broken`)},
			}},
			{Role: llm.RoleTool, ToolCallID: "t0", Content: "r0"},
			{Role: llm.RoleTool, ToolCallID: "t1", Content: "r1"},
		},
		Tools: []llm.ToolSpec{{Name: "read_file", Description: "reads", Schema: json.RawMessage(`{"type":"object"}`)}},
	}
	s, err := client(srv).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := llm.Collect(s)
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Result{
		Text: "Let me look.",
		ToolCalls: []llm.ToolCall{
			{ID: "toolu_1", Name: "read_file", Args: json.RawMessage(`{"path": "a\"b.txt\u00e9"}`)},
			{ID: "toolu_2", Name: "list_dir", Args: json.RawMessage(`{"dir": "."}`)},
		},
		Usage:      llm.Usage{Input: 120, Output: 30, Cached: 100, CacheWrite: 15},
		StopReason: llm.StopToolUse,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Collect = %+v; want %+v", got, want)
	}

	r := srv.Requests()[0]
	if r.Path != "/v1/messages" || r.Header.Get("x-api-key") != key || r.Header.Get("anthropic-version") != Version {
		t.Errorf("request path %q headers %v", r.Path, r.Header)
	}
	wantBody := `{"model":"claude-test","system":[{"type":"text","text":"be brief","cache_control":{"type":"ephemeral"}}],"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"hi"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"t0","name":"x","input":{"a":1}},{"type":"tool_use","id":"t1","name":"y","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t0","content":"r0"},{"type":"tool_result","tool_use_id":"t1","content":"r1"}]}],` +
		`"tools":[{"name":"read_file","description":"reads","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}],"max_tokens":4096,"stream":true}`
	if string(r.Body) != wantBody {
		t.Errorf("body =\n%s\nwant\n%s", r.Body, wantBody)
	}
}

func TestEventOrder(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Reply{Chunks: llmtest.AnthropicStream(llmtest.Turn{Text: []string{"a", "b"}, Usage: &llm.Usage{Input: 1, Output: 2}})})
	defer srv.Close()
	s, err := client(srv).Stream(context.Background(), llm.Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var kinds []string
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, ev.Kind.String())
	}
	if got, want := strings.Join(kinds, ","), "text,text,usage,done"; got != want {
		t.Errorf("events = %s; want %s", got, want)
	}
}

func TestRetries(t *testing.T) {
	ok := llmtest.Reply{Chunks: llmtest.AnthropicStream(llmtest.Turn{Text: []string{"ok"}})}
	tests := []struct {
		name     string
		replies  []llmtest.Reply
		retries  int
		wantReqs int
		wantErr  error
	}{
		{"429 then success", []llmtest.Reply{llmtest.AnthropicError(429), llmtest.AnthropicError(429), ok}, 0, 3, nil},
		{"529 overloaded then success", []llmtest.Reply{llmtest.AnthropicError(529), ok}, 0, 2, nil},
		{"500 beyond retries", []llmtest.Reply{llmtest.AnthropicError(500), llmtest.AnthropicError(500)}, 1, 2, llm.ErrServer},
		{"no retry on 400", []llmtest.Reply{llmtest.AnthropicError(400), ok}, 0, 1, llm.ErrBadRequest},
		{"no retry on 401", []llmtest.Reply{llmtest.AnthropicError(401), ok}, 0, 1, llm.ErrAuth},
		{"no retry on 403", []llmtest.Reply{llmtest.AnthropicError(403), ok}, 0, 1, llm.ErrAuth},
		{"no retry on 404", []llmtest.Reply{llmtest.AnthropicError(404), ok}, 0, 1, llm.ErrModelNotFound},
		{"no retry once started", []llmtest.Reply{llmtest.CutAfter(ok.Chunks, 3), ok}, 0, 1, llm.ErrBrokenStream},
	}
	for _, tt := range tests {
		srv := llmtest.NewServer(tt.replies...)
		c := New(Options{BaseURL: srv.URL, APIKey: key, MaxRetries: tt.retries, RetryDelay: time.Millisecond})
		s, err := c.Stream(context.Background(), llm.Request{Model: "m"})
		if err == nil {
			_, err = llm.Collect(s)
		}
		if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
			t.Errorf("%s: error = %v; want %v", tt.name, err, tt.wantErr)
		}
		if n := len(srv.Requests()); n != tt.wantReqs {
			t.Errorf("%s: %d requests; want %d", tt.name, n, tt.wantReqs)
		}
		srv.Close()
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	echo := llmtest.Reply{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + key + `"}}`}
	inStream := llmtest.Reply{Chunks: []string{"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"" + key + "\"}}\n\n"}}
	for _, r := range []llmtest.Reply{echo, inStream} {
		srv := llmtest.NewServer(r)
		s, err := client(srv).Stream(context.Background(), llm.Request{Model: "m"})
		if err == nil {
			_, err = llm.Collect(s)
		}
		srv.Close()
		if err == nil || strings.Contains(err.Error(), key) {
			t.Errorf("error = %v; want an error without the key", err)
		}
	}
}

func TestBrokenStreams(t *testing.T) {
	chunks := llmtest.AnthropicStream(toolTurn)
	tests := []struct {
		name  string
		reply llmtest.Reply
	}{
		{"cut mid tool call", llmtest.CutAfter(chunks, 9)},
		{"cut before message_stop", llmtest.CutAfter(chunks, len(chunks)-1)},
		{"clean end without message_stop", llmtest.Reply{Chunks: chunks[:len(chunks)-1]}},
		{"malformed event", llmtest.MalformedAfter(chunks, 3)},
		{"error event", llmtest.Reply{Chunks: append(chunks[:3:3], "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")}},
	}
	for _, tt := range tests {
		srv := llmtest.NewServer(tt.reply)
		s, err := client(srv).Stream(context.Background(), llm.Request{Model: "m"})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var last llm.Event
		var lastErr error
		for {
			ev, err := s.Next()
			if err != nil {
				last, lastErr = ev, err
				break
			}
			if ev.Kind == llm.EventToolCall {
				t.Errorf("%s: tool call %v emitted from a broken stream", tt.name, ev.ToolCall)
			}
		}
		s.Close()
		srv.Close()
		if last.Kind != llm.EventError || !errors.Is(lastErr, llm.ErrBrokenStream) {
			t.Errorf("%s: last = %v, %v; want an error event with ErrBrokenStream", tt.name, last, lastErr)
		}
	}
}

func TestCancelClosesBody(t *testing.T) {
	chunks := llmtest.AnthropicStream(llmtest.Turn{Text: []string{"a", "b"}})
	for _, how := range []string{"cancel", "close"} {
		srv := llmtest.NewServer(llmtest.HangAfter(chunks, 4))
		ctx, cancel := context.WithCancel(context.Background())
		s, err := client(srv).Stream(ctx, llm.Request{Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		if ev, err := s.Next(); err != nil || ev.Kind != llm.EventText {
			t.Fatalf("first event = %v, %v", ev, err)
		}
		if how == "cancel" {
			cancel()
			if _, err := s.Next(); !errors.Is(err, context.Canceled) {
				t.Errorf("after cancel: error = %v; want context.Canceled", err)
			}
		} else {
			s.Close()
		}
		select {
		case <-srv.Disconnected:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: server never saw the client go away", how)
		}
		cancel()
		s.Close()
		srv.Close()
	}
}

// TestNoToolCalls: a final answer keeps the tools (same prompt prefix) and
// forbids calling them on the wire.
func TestNoToolCalls(t *testing.T) {
	turn := llmtest.Turn{Text: []string{"done"}}
	srv := llmtest.NewServer(llmtest.Reply{Chunks: llmtest.AnthropicStream(turn)}, llmtest.Reply{Chunks: llmtest.AnthropicStream(turn)})
	defer srv.Close()
	c := client(srv)
	tools := []llm.ToolSpec{{Name: "read_file", Description: "d", Schema: json.RawMessage(`{"type":"object","properties":{}}`)}}
	for _, final := range []bool{false, true} {
		s, err := c.Stream(context.Background(), llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, Tools: tools, NoToolCalls: final})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := llm.Collect(s); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; want 2", len(reqs))
	}
	if strings.Contains(string(reqs[0].Body), "tool_choice") {
		t.Errorf("first request forbids tools: %s", reqs[0].Body)
	}
	if !strings.Contains(string(reqs[1].Body), `"tool_choice":{"type":"none"}`) || !strings.Contains(string(reqs[1].Body), `"read_file"`) {
		t.Errorf("final request %s; want the tools and %s", reqs[1].Body, `"tool_choice":{"type":"none"}`)
	}
}
