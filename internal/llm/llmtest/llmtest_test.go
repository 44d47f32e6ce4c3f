package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/homard/homard/internal/llm"
)

func TestScripted(t *testing.T) {
	m := NewScripted(
		[]llm.Event{Text("a"), Call("c1", "read_file", `{"path":"x"}`), Usage(10, 2, 5), Done(llm.StopToolUse)},
		Answer("done"),
		[]llm.Event{Text("half"), Fail(llm.ErrBrokenStream)},
	)
	ctx := context.Background()

	s, _ := m.Stream(ctx, llm.Request{Model: "one"})
	got, err := llm.Collect(s)
	want := llm.Result{Text: "a", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"path":"x"}`)}},
		Usage: llm.Usage{Input: 10, Output: 2, Cached: 5}, StopReason: llm.StopToolUse}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("turn 1 = %+v, %v; want %+v", got, err, want)
	}
	s, _ = m.Stream(ctx, llm.Request{Model: "two"})
	if got, err := llm.Collect(s); err != nil || got.Text != "done" || got.StopReason != llm.StopEnd {
		t.Errorf("turn 2 = %+v, %v", got, err)
	}
	s, _ = m.Stream(ctx, llm.Request{Model: "three"})
	if ev, err := s.Next(); err != nil || ev.Text != "half" {
		t.Errorf("turn 3 first = %v, %v", ev, err)
	}
	if ev, err := s.Next(); ev.Kind != llm.EventError || !errors.Is(err, llm.ErrBrokenStream) {
		t.Errorf("turn 3 second = %v, %v; want error event", ev, err)
	}
	if _, err := m.Stream(ctx, llm.Request{}); !errors.Is(err, ErrScriptExhausted) {
		t.Errorf("fourth call error = %v; want ErrScriptExhausted", err)
	}
	if r := m.Requests(); len(r) != 4 || r[1].Model != "two" {
		t.Errorf("requests = %+v", r)
	}
	if m.Remaining() != 0 {
		t.Errorf("remaining = %d", m.Remaining())
	}
}

func TestScriptedCancel(t *testing.T) {
	m := NewScripted(Answer("x"))
	ctx, cancel := context.WithCancel(context.Background())
	s, _ := m.Stream(ctx, llm.Request{})
	cancel()
	if ev, err := s.Next(); ev.Kind != llm.EventError || !errors.Is(err, context.Canceled) {
		t.Errorf("Next after cancel = %v, %v", ev, err)
	}
}

// TestOpenAIWireFormat pins the exact bytes, as OpenAI sends them.
func TestOpenAIWireFormat(t *testing.T) {
	got := Join(OpenAIStream(Turn{Model: "gpt-4o-mini", Text: []string{"Hi"},
		Calls: []CallScript{{ID: "call_1", Name: "f", Fragments: []string{`{"a`, `":1}`}}},
		Usage: &llm.Usage{Input: 20, Output: 5, Cached: 8}}))
	const c = `data: {"id":"chatcmpl-llmtest","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","system_fingerprint":"fp_llmtest","choices":[{"index":0,"delta":`
	want := c + `{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n" +
		c + `{"content":"Hi"},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n" +
		c + `{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n" +
		c + `{"tool_calls":[{"index":0,"function":{"arguments":"{\"a"}}]},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n" +
		c + `{"tool_calls":[{"index":0,"function":{"arguments":"\":1}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n" +
		c + `{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}` + "\n\n" +
		`data: {"id":"chatcmpl-llmtest","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","system_fingerprint":"fp_llmtest","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":5,"total_tokens":25,"prompt_tokens_details":{"cached_tokens":8,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}` + "\n\n" +
		"data: [DONE]\n\n"
	if got != want {
		t.Errorf("OpenAIStream =\n%s\nwant\n%s", got, want)
	}
}

func TestAnthropicWireFormat(t *testing.T) {
	got := Join(AnthropicStream(Turn{Model: "claude-x", Text: []string{"Hi"},
		Calls: []CallScript{{ID: "toolu_1", Name: "f", Fragments: []string{`{"a`, `":1}`}}},
		Usage: &llm.Usage{Input: 20, Output: 5, Cached: 8}}))
	want := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_llmtest\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":8,\"output_tokens\":1}}}\n\n" +
		"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\":1}\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":5}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	if got != want {
		t.Errorf("AnthropicStream =\n%s\nwant\n%s", got, want)
	}
}

func TestServer(t *testing.T) {
	chunks := OpenAIStream(Turn{Text: []string{"a"}})
	srv := NewServer(Reply{Chunks: chunks}, OpenAIError(401), Reply{Status: 429, Header: map[string]string{"Retry-After": "1"}, Body: "{}"})
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{"x":1}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != Join(chunks) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("reply 1 = %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	resp, err = http.Post(srv.URL+"/chat/completions", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(string(b), "invalid_api_key") {
		t.Errorf("reply 2 = %d %s", resp.StatusCode, b)
	}
	resp, err = http.Post(srv.URL+"/chat/completions", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("reply 3 = %d %v", resp.StatusCode, resp.Header)
	}
	if r := srv.Requests(); len(r) != 3 || string(r[0].Body) != `{"x":1}` || r[0].Path != "/chat/completions" {
		t.Errorf("requests = %+v", r)
	}
}

func TestCutDropsConnection(t *testing.T) {
	srv := NewServer(CutAfter(OpenAIStream(Turn{Text: []string{"a"}}), 1))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("reading a cut stream succeeded; want an error")
	}
}

func TestErrorBodiesAreProviderShaped(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 429, 500, 529} {
		for name, r := range map[string]Reply{"openai": OpenAIError(status), "anthropic": AnthropicError(status)} {
			var v struct {
				Error struct{ Message, Type string } `json:"error"`
			}
			if err := json.Unmarshal([]byte(r.Body), &v); err != nil || v.Error.Message == "" || v.Error.Type == "" || r.Status != status {
				t.Errorf("%s %d: body %s (%v)", name, status, r.Body, err)
			}
		}
	}
}

// TestFuncServer: each reply is computed from the request's number and
// body, so a script can answer with what the conversation holds.
func TestFuncServer(t *testing.T) {
	srv := NewFuncServer(func(n int, body []byte) Reply {
		return Reply{Chunks: []string{"data: ", strings.ToUpper(string(body)), "\n\n"}, Status: 0}
	})
	defer srv.Close()
	for i, in := range []string{"one", "two"} {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := "data: " + strings.ToUpper(in) + "\n\n"; string(b) != want {
			t.Errorf("reply %d = %q; want %q", i+1, b, want)
		}
	}
	if got := len(srv.Requests()); got != 2 {
		t.Errorf("Requests() holds %d; want 2", got)
	}
}
