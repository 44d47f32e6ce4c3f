package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
)

const key = "sk-test-SECRET-0123456789"

func client(srv *llmtest.Server) *Client {
	return New(Options{BaseURL: srv.URL, APIKey: key, RetryDelay: time.Millisecond})
}

var toolTurn = llmtest.Turn{
	Text: []string{"Let me ", "look."},
	Calls: []llmtest.CallScript{
		{ID: "call_1", Name: "read_file", Fragments: []string{`{"pa`, `th": "a\`, `"b.txt\u00e9"`, `}`}},
		{ID: "call_2", Name: "list_dir", Fragments: []string{`{"dir":`, ` "."}`}},
	},
	Usage: &llm.Usage{Input: 120, Output: 30, Cached: 100},
}

func TestStreamTextToolCallsAndUsage(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Reply{Chunks: llmtest.OpenAIStream(toolTurn)})
	defer srv.Close()
	req := llm.Request{
		Model: "gpt-test", System: "be brief", MaxTokens: 100,
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "hi"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c0", Name: "x", Args: json.RawMessage(`{"a":1}`)}}},
			{Role: llm.RoleTool, ToolCallID: "c0", Content: "result"},
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
			{ID: "call_1", Name: "read_file", Args: json.RawMessage(`{"path": "a\"b.txt\u00e9"}`)},
			{ID: "call_2", Name: "list_dir", Args: json.RawMessage(`{"dir": "."}`)},
		},
		Usage:      llm.Usage{Input: 120, Output: 30, Cached: 100},
		StopReason: llm.StopToolUse,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Collect = %+v; want %+v", got, want)
	}
	for _, tc := range got.ToolCalls {
		if !json.Valid(tc.Args) {
			t.Errorf("args %s not valid JSON", tc.Args)
		}
	}

	r := srv.Requests()[0]
	if r.Path != "/chat/completions" || r.Header.Get("Authorization") != "Bearer "+key {
		t.Errorf("request path %q auth %q", r.Path, r.Header.Get("Authorization"))
	}
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body["stream"] != true || !reflect.DeepEqual(body["stream_options"], map[string]any{"include_usage": true}) {
		t.Errorf("stream fields = %v, %v", body["stream"], body["stream_options"])
	}
	wantMsgs := `[{"content":"be brief","role":"system"},{"content":"hi","role":"user"},{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"a\":1}","name":"x"},"id":"c0","type":"function"}]},{"content":"result","role":"tool","tool_call_id":"c0"}]`
	if b, _ := json.Marshal(body["messages"]); string(b) != wantMsgs {
		t.Errorf("messages = %s; want %s", b, wantMsgs)
	}
	wantTools := `[{"function":{"description":"reads","name":"read_file","parameters":{"type":"object"}},"type":"function"}]`
	if b, _ := json.Marshal(body["tools"]); string(b) != wantTools {
		t.Errorf("tools = %s; want %s", b, wantTools)
	}
}

func TestEventOrder(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"a", "b"}, Usage: &llm.Usage{Input: 1, Output: 2}})})
	defer srv.Close()
	s, err := client(srv).Stream(context.Background(), llm.Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var kinds []string
	for {
		ev, err := s.Next()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatal(err)
			}
			break
		}
		kinds = append(kinds, ev.Kind.String())
	}
	if got, want := strings.Join(kinds, ","), "text,text,usage,done"; got != want {
		t.Errorf("events = %s; want %s", got, want)
	}
}

func TestRetries(t *testing.T) {
	ok := llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"ok"}})}
	tests := []struct {
		name     string
		replies  []llmtest.Reply
		retries  int
		wantReqs int
		wantErr  error
	}{
		{"429 then success", []llmtest.Reply{llmtest.OpenAIError(429), llmtest.OpenAIError(429), ok}, 0, 3, nil},
		{"500 then success", []llmtest.Reply{llmtest.OpenAIError(500), ok}, 0, 2, nil},
		{"429 beyond retries", []llmtest.Reply{llmtest.OpenAIError(429), llmtest.OpenAIError(429), llmtest.OpenAIError(429)}, 2, 3, llm.ErrRateLimited},
		{"no retry on 400", []llmtest.Reply{llmtest.OpenAIError(400), ok}, 0, 1, llm.ErrBadRequest},
		{"no retry on 401", []llmtest.Reply{llmtest.OpenAIError(401), ok}, 0, 1, llm.ErrAuth},
		{"no retry on 404", []llmtest.Reply{llmtest.OpenAIError(404), ok}, 0, 1, llm.ErrModelNotFound},
		{"negative means none", []llmtest.Reply{llmtest.OpenAIError(500), ok}, -1, 1, llm.ErrServer},
		{"no retry once started", []llmtest.Reply{llmtest.CutAfter(ok.Chunks, 2), ok}, 0, 1, llm.ErrBrokenStream},
	}
	for _, tt := range tests {
		srv := llmtest.NewServer(tt.replies...)
		c := New(Options{BaseURL: srv.URL, APIKey: key, MaxRetries: tt.retries, RetryDelay: time.Millisecond})
		var err error
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

func TestRetryOnConnectionError(t *testing.T) {
	srv := llmtest.NewServer()
	url := srv.URL
	srv.Close() // nothing listens any more
	c := New(Options{BaseURL: url, APIKey: key, MaxRetries: 2, RetryDelay: time.Millisecond})
	_, err := c.Stream(context.Background(), llm.Request{Model: "m"})
	if !errors.Is(err, llm.ErrUnreachable) {
		t.Errorf("error = %v; want ErrUnreachable", err)
	}
}

func TestErrorMessages(t *testing.T) {
	tests := []struct {
		status int
		want   error
		text   string
	}{
		{401, llm.ErrAuth, "check the API key"},
		{404, llm.ErrModelNotFound, "does not exist"},
		{400, llm.ErrBadRequest, "Invalid value"},
	}
	for _, tt := range tests {
		srv := llmtest.NewServer(llmtest.OpenAIError(tt.status))
		_, err := client(srv).Stream(context.Background(), llm.Request{Model: "m"})
		srv.Close()
		var apiErr *llm.APIError
		if !errors.Is(err, tt.want) || !errors.As(err, &apiErr) || apiErr.Status != tt.status {
			t.Errorf("status %d: error = %v; want %v", tt.status, err, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.text) {
			t.Errorf("status %d: error %q does not say %q", tt.status, err, tt.text)
		}
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	echo := llmtest.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + key + `.","type":"invalid_request_error","code":"invalid_api_key"}}`}
	inStream := llmtest.Reply{Chunks: []string{`data: {"error":{"message":"bad key ` + key + `"}}` + "\n\n"}}
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
	chunks := llmtest.OpenAIStream(toolTurn)
	tests := []struct {
		name  string
		reply llmtest.Reply
	}{
		{"cut mid tool call", llmtest.CutAfter(chunks, 6)},
		{"cut before DONE", llmtest.CutAfter(chunks, len(chunks)-1)},
		{"clean end without DONE", llmtest.Reply{Chunks: chunks[:len(chunks)-1]}},
		{"malformed chunk", llmtest.MalformedAfter(chunks, 2)},
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
		if last.Kind != llm.EventError || !errors.Is(lastErr, llm.ErrBrokenStream) || !errors.Is(last.Err, llm.ErrBrokenStream) {
			t.Errorf("%s: last = %v, %v; want an error event with ErrBrokenStream", tt.name, last, lastErr)
		}
	}
}

func TestCancelClosesBody(t *testing.T) {
	chunks := llmtest.OpenAIStream(llmtest.Turn{Text: []string{"a", "b"}})
	for _, how := range []string{"cancel", "close"} {
		srv := llmtest.NewServer(llmtest.HangAfter(chunks, 2))
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

func TestDefaults(t *testing.T) {
	c := New(Options{BaseURL: "http://x/v1/"})
	if c.opts.BaseURL != "http://x/v1" {
		t.Errorf("defaults = %+v", c.opts)
	}
	if New(Options{}).opts.BaseURL != "https://api.openai.com/v1" {
		t.Error("zero BaseURL is not OpenAI's")
	}
	_ = http.StatusOK
}

// TestNoToolCalls: a final answer keeps the tools (same prompt prefix) and
// forbids calling them on the wire.
func TestNoToolCalls(t *testing.T) {
	turn := llmtest.Turn{Text: []string{"done"}}
	srv := llmtest.NewServer(llmtest.Reply{Chunks: llmtest.OpenAIStream(turn)}, llmtest.Reply{Chunks: llmtest.OpenAIStream(turn)})
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
	if !strings.Contains(string(reqs[1].Body), `"tool_choice":"none"`) || !strings.Contains(string(reqs[1].Body), `"read_file"`) {
		t.Errorf("final request %s; want the tools and %s", reqs[1].Body, `"tool_choice":"none"`)
	}
}

// TestContextLengthInStream: a server that accepts the request and then
// reports, inside the stream, that it is too long for the window (as some
// OpenAI-compatible proxies do) gives llm.ErrContextLength, which the
// agent folds and retries on; the twin, another in-stream error, does not.
func TestContextLengthInStream(t *testing.T) {
	tests := []struct {
		body string
		want bool
	}{
		{`{"error":{"message":"This endpoint's maximum context length is 8192 tokens.","code":"context_length_exceeded"}}`, true},
		{`{"error":{"message":"upstream provider overloaded","code":502}}`, false},
	}
	for _, tt := range tests {
		srv := llmtest.NewServer(llmtest.Reply{Chunks: []string{"data: " + tt.body + "\n\n"}})
		s, err := client(srv).Stream(context.Background(), llm.Request{Model: "m"})
		if err == nil {
			_, err = llm.Collect(s)
		}
		srv.Close()
		if err == nil || errors.Is(err, llm.ErrContextLength) != tt.want {
			t.Errorf("in-stream %s: error = %v; want ErrContextLength: %v", tt.body, err, tt.want)
		}
	}
}
