package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
)

// The fakes below send the wire bytes of the Chinese providers' quirks as
// reported (docs/PROVIDERS.md names each source). They are verified
// offline against these fakes, not against the real services.

// decodeAll streams one answer of chunks from a fake server and returns
// what Collect gathers, the kinds of the events in order, and the error.
func decodeAll(t *testing.T, chunks ...string) (llm.Result, []string, error) {
	t.Helper()
	srv := llmtest.NewServer(llmtest.Reply{Chunks: chunks})
	defer srv.Close()
	s, err := client(srv).Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil {
		return llm.Result{}, nil, err
	}
	defer s.Close()
	var r llm.Result
	var kinds []string
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return r, kinds, nil
		}
		kinds = append(kinds, ev.Kind.String())
		if err != nil {
			return r, kinds, err
		}
		switch ev.Kind {
		case llm.EventText:
			r.Text += ev.Text
		case llm.EventToolCall:
			r.ToolCalls = append(r.ToolCalls, ev.ToolCall)
		case llm.EventUsage:
			r.Usage = ev.Usage
		case llm.EventDone:
			r.StopReason = ev.StopReason
		}
	}
}

func data(json string) string { return "data: " + json + "\n\n" }

const doneLine = "data: [DONE]\n\n"

func count(kinds []string, kind string) int {
	n := 0
	for _, k := range kinds {
		if k == kind {
			n++
		}
	}
	return n
}

// TestZhipuWholeToolCall: Zhipu (without tool_stream, the default) sends a
// tool call whole in one chunk, with finish_reason and usage in that same
// chunk and no "object" field. It decodes to what the standard stream,
// the call's arguments split in fragments, decodes to.
func TestZhipuWholeToolCall(t *testing.T) {
	zhipu := []string{
		data(`{"id":"20240920132549e379a9152a6a4d7c","created":1726809949,"model":"glm-4.5","choices":[{"index":0,"delta":{"role":"assistant","content":"我来看看。"}}]}`),
		data(`{"id":"20240920132549e379a9152a6a4d7c","created":1726809949,"model":"glm-4.5","choices":[{"index":0,"finish_reason":"tool_calls","delta":{"role":"assistant","tool_calls":[{"id":"call_20240920132549e379a9152a6a4d7c","index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"笔记.txt\"}"}}]}}],"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}`),
		doneLine,
	}
	standard := llmtest.OpenAIStream(llmtest.Turn{
		Text:  []string{"我来", "看看。"},
		Calls: []llmtest.CallScript{{ID: "call_20240920132549e379a9152a6a4d7c", Name: "read_file", Fragments: []string{`{"path":`, `"笔记.txt"}`}}},
		Usage: &llm.Usage{Input: 120, Output: 30},
	})
	want := llm.Result{Text: "我来看看。", StopReason: llm.StopToolUse, Usage: llm.Usage{Input: 120, Output: 30},
		ToolCalls: []llm.ToolCall{{ID: "call_20240920132549e379a9152a6a4d7c", Name: "read_file", Args: []byte(`{"path":"笔记.txt"}`)}}}
	for name, chunks := range map[string][]string{"zhipu": zhipu, "twin: standard": standard} {
		got, kinds, err := decodeAll(t, chunks...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded %+v; want %+v", name, got, want)
		}
		if count(kinds, "usage") != 1 || count(kinds, "tool_call") != 1 {
			t.Errorf("%s: events %v; want one tool call and one usage", name, kinds)
		}
	}
}

// TestUsageInEveryChunk: MiniMax puts a usage object in every chunk (zero
// until the end) and ends the stream with the whole answer again as a
// chat.completion carrying the real usage; other servers repeat the
// running total in each chunk. Usage is counted once, from the last
// report, and the repeated answer is not read twice. The twin, usage in
// one final chunk only, gives the same.
func TestUsageInEveryChunk(t *testing.T) {
	minimax := []string{
		data(`{"id":"05b8a2c5e1b4","choices":[{"index":0,"delta":{"role":"","reasoning_content":""}}],"created":1771279826,"model":"MiniMax-M2","object":"chat.completion.chunk","usage":{"total_tokens":0,"total_characters":0},"input_sensitive":false,"output_sensitive":false}`),
		data(`{"id":"05b8a2c5e1b4","choices":[{"index":0,"delta":{"content":"Hello! ","role":"assistant"}}],"created":1771279826,"model":"MiniMax-M2","object":"chat.completion.chunk","usage":{"total_tokens":0,"total_characters":0},"input_sensitive":false,"output_sensitive":false}`),
		data(`{"id":"05b8a2c5e1b4","choices":[{"finish_reason":"stop","index":0,"delta":{"content":"How can I help?","role":"assistant"}}],"created":1771279826,"model":"MiniMax-M2","object":"chat.completion.chunk","usage":{"total_tokens":0,"total_characters":0},"input_sensitive":false,"output_sensitive":false}`),
		data(`{"id":"05b8a2c5e1b4","choices":[{"finish_reason":"stop","index":0,"message":{"content":"Hello! How can I help?","role":"assistant","name":"MiniMax AI","audio_content":""}}],"created":1771279826,"model":"MiniMax-M2","object":"chat.completion","usage":{"total_tokens":60,"total_characters":0,"prompt_tokens":40,"completion_tokens":20},"input_sensitive":false,"output_sensitive":false,"base_resp":{"status_code":0,"status_msg":""}}`),
		doneLine,
	}
	running := []string{
		data(`{"id":"c1","object":"chat.completion.chunk","created":1724907803,"model":"m","choices":[{"index":0,"delta":{"role":"assistant"}}],"usage":{"completion_tokens":0,"prompt_tokens":40,"total_tokens":40}}`),
		data(`{"id":"c1","object":"chat.completion.chunk","created":1724907803,"model":"m","choices":[{"index":0,"delta":{"content":"Hello! "}}],"usage":{"completion_tokens":12,"prompt_tokens":40,"total_tokens":52}}`),
		data(`{"id":"c1","object":"chat.completion.chunk","created":1724907803,"model":"m","choices":[{"index":0,"delta":{"content":"How can I help?"},"finish_reason":"stop"}],"usage":{"completion_tokens":20,"prompt_tokens":40,"total_tokens":60}}`),
		doneLine,
	}
	standard := llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Hello! ", "How can I help?"}, Usage: &llm.Usage{Input: 40, Output: 20}})
	want := llm.Result{Text: "Hello! How can I help?", StopReason: llm.StopEnd, Usage: llm.Usage{Input: 40, Output: 20}}
	for name, chunks := range map[string][]string{"minimax": minimax, "running total": running, "twin: standard": standard} {
		got, kinds, err := decodeAll(t, chunks...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) || count(kinds, "usage") != 1 {
			t.Errorf("%s: decoded %+v with events %v; want %+v and one usage event", name, got, kinds, want)
		}
	}
}

// TestThinkBlockDropped: MiniMax-M2 on the OpenAI-compatible API (and
// Zhipu's GLM-Z1) put their reasoning in the answer as a leading
// <think>…</think> block; it is dropped, wherever the deltas split the
// tags, and the answer after it is kept. The twins: an answer without the
// block, or that only mentions the tag, is passed on unchanged.
func TestThinkBlockDropped(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<think>\nThe user greets me. I should reply.\n</think>\n\nHello! How can I help?", "Hello! How can I help?"},
		{"\n<think>a < b </thin k></think>Answer.", "Answer."},
		{"<think></think>", ""},
		{"<think>never closed", ""},
		{"Hello! How can I help?", "Hello! How can I help?"},
		{"\n\nHello.", "\n\nHello."},
		{"Use <think> tags like <think>this</think>.", "Use <think> tags like <think>this</think>."},
		{"<thinking about it>", "<thinking about it>"},
		{"<thi", "<thi"},
		{"  ", "  "},
	}
	for _, tt := range tests {
		// Every split into two deltas, and one delta per byte.
		for cut := 0; cut <= len(tt.in); cut++ {
			var f thinkFilter
			got := f.text(tt.in[:cut]) + f.text(tt.in[cut:]) + f.flush()
			if got != tt.want {
				t.Errorf("%q cut at %d = %q; want %q", tt.in, cut, got, tt.want)
				break
			}
		}
		var f thinkFilter
		var b strings.Builder
		for i := range len(tt.in) {
			b.WriteString(f.text(tt.in[i : i+1]))
		}
		if got := b.String() + f.flush(); got != tt.want {
			t.Errorf("%q a byte at a time = %q; want %q", tt.in, got, tt.want)
		}
	}

	// On the wire: MiniMax's think block split across chunks, then a call.
	minimax := []string{
		data(`{"id":"05b8","choices":[{"index":0,"delta":{"content":"<think>\nI need the file.","role":"assistant"}}],"created":1771279826,"model":"MiniMax-M2","object":"chat.completion.chunk"}`),
		data(`{"id":"05b8","choices":[{"index":0,"delta":{"content":"\n</th","role":"assistant"}}],"created":1771279826,"model":"MiniMax-M2","object":"chat.completion.chunk"}`),
		data(`{"id":"05b8","choices":[{"index":0,"delta":{"content":"ink>\n\nReading it.","role":"assistant"}}],"created":1771279826,"model":"MiniMax-M2","object":"chat.completion.chunk"}`),
		data(`{"id":"05b8","choices":[{"finish_reason":"tool_calls","index":0,"delta":{"role":"assistant","tool_calls":[{"id":"call_function_1","type":"function","function":{"name":"read_file","arguments":"{\"path\": \"a.txt\"}"},"index":0}]}}],"created":1771279826,"model":"MiniMax-M2","object":"chat.completion.chunk"}`),
		doneLine,
	}
	got, _, err := decodeAll(t, minimax...)
	want := llm.Result{Text: "Reading it.", StopReason: llm.StopToolUse,
		ToolCalls: []llm.ToolCall{{ID: "call_function_1", Name: "read_file", Args: []byte(`{"path": "a.txt"}`)}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("minimax think block then a call: %+v, %v; want %+v", got, err, want)
	}
}

// TestFailedFinishReasons: Zhipu ends an answer its content review
// blocked with finish_reason "sensitive", and one whose model failed with
// "network_error". Either ends the stream as broken, with a message saying
// which, and no tool call gathered before it is handed on. The twins, the
// same bytes ending "tool_calls" and "stop", are good answers.
func TestFailedFinishReasons(t *testing.T) {
	stream := func(finish string) []string {
		return []string{
			data(`{"id":"2025","created":1726809949,"model":"glm-4.5","choices":[{"index":0,"delta":{"role":"assistant","content":"好的，"}}]}`),
			data(`{"id":"2025","created":1726809949,"model":"glm-4.5","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"id":"call_1","index":0,"type":"function","function":{"name":"run_command","arguments":"{\"argv\":[\"ls\"]}"}}]}}]}`),
			data(`{"id":"2025","created":1726809949,"model":"glm-4.5","choices":[{"index":0,"finish_reason":"` + finish + `","delta":{"role":"assistant","content":""}}],"usage":{"prompt_tokens":9,"completion_tokens":8,"total_tokens":17}}`),
			doneLine,
		}
	}
	tests := []struct {
		finish string
		want   string // in the error; "" means a good answer
	}{
		{"sensitive", "content review stopped the answer"},
		{"network_error", "failed in the middle of the answer"},
		{"tool_calls", ""},
		{"stop", ""},
	}
	for _, tt := range tests {
		got, kinds, err := decodeAll(t, stream(tt.finish)...)
		if tt.want == "" {
			if err != nil || len(got.ToolCalls) != 1 || got.Text != "好的，" {
				t.Errorf("finish %q: %+v, %v; want the text and the call", tt.finish, got, err)
			}
			continue
		}
		if !errors.Is(err, llm.ErrBrokenStream) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.finish) {
			t.Errorf("finish %q: error %v; want ErrBrokenStream saying %q", tt.finish, err, tt.want)
		}
		if count(kinds, "tool_call") != 0 {
			t.Errorf("finish %q: events %v; a tool call was handed on from a failed answer", tt.finish, kinds)
		}
	}
}

// TestReasoningKeepsStreamAlive: a model that reasons for longer than the
// idle deadline (reasoning_content deltas, as Zhipu, SiliconFlow and Ark
// stream them) is not cut as a stall: each reasoning delta is a sign of
// life. The reasoning is not part of the answer. The twin, the same
// pauses filled with chunks that carry nothing, is cut.
func TestReasoningKeepsStreamAlive(t *testing.T) {
	const pause = 100 * time.Millisecond
	serve := func(filler string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			for range 10 {
				fmt.Fprint(w, data(filler))
				w.(http.Flusher).Flush()
				time.Sleep(pause)
			}
			fmt.Fprint(w, data(`{"id":"1","model":"glm-4.5","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"}}]}`))
			fmt.Fprint(w, data(`{"id":"1","model":"glm-4.5","choices":[{"index":0,"finish_reason":"stop","delta":{"role":"assistant","content":""}}]}`)+doneLine)
		}
	}
	tests := []struct {
		name, filler string
		ok           bool
	}{
		{"reasoning", `{"id":"1","model":"glm-4.5","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"用户在问候，"}}]}`, true},
		{"twin: empty deltas", `{"id":"1","model":"glm-4.5","choices":[{"index":0,"delta":{"role":"assistant"}}]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(serve(tt.filler))
			defer srv.Close()
			m := llm.WithDeadlines(New(Options{BaseURL: srv.URL, MaxRetries: -1}), llm.Deadlines{
				First: 6 * pause, Idle: 6 * pause, Total: 30 * pause,
				FirstSetting: "model.first_event_timeout", IdleSetting: "model.idle_timeout", TotalSetting: "model.request_timeout"})
			s, err := m.Stream(t.Context(), llm.Request{Model: "glm-4.5", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := llm.Collect(s)
			switch {
			case tt.ok && (err != nil || res.Text != "Hello"):
				t.Errorf("answer %q, %v; want \"Hello\" without the reasoning", res.Text, err)
			case !tt.ok && !errors.Is(err, llm.ErrModelTimeout):
				t.Errorf("error %v; want ErrModelTimeout", err)
			}
		})
	}
}

// zhipuToolChoice answers as Zhipu does a request whose tool_choice is
// anything but "auto": HTTP 400 "Tool choice must be auto"; other requests
// get a short answer.
func zhipuToolChoice() *llmtest.Server {
	return llmtest.NewFuncServer(func(n int, body []byte) llmtest.Reply {
		var req struct {
			ToolChoice *string `json:"tool_choice"`
		}
		if err := json.Unmarshal(body, &req); err != nil || (req.ToolChoice != nil && *req.ToolChoice != "auto") {
			return llmtest.Reply{Status: 400, Body: `{"error":{"message":"Tool choice must be auto","code":400}}`}
		}
		return llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Model: "glm-4.5", Text: []string{"Done."}})}
	})
}

// TestAutoToolChoiceOnly: Zhipu refuses tool_choice "none", which homard
// sends for an answer that must not call tools (the final answer of a
// turn, a summary). A client marked AutoToolChoiceOnly leaves tool_choice
// out, keeping the tools; the twin, an unmarked client, still sends
// "none" and gets the 400 the fake reproduces.
func TestAutoToolChoiceOnly(t *testing.T) {
	tools := []llm.ToolSpec{{Name: "read_file", Description: "d", Schema: json.RawMessage(`{"type":"object","properties":{}}`)}}
	for _, only := range []bool{true, false} {
		srv := zhipuToolChoice()
		c := client(srv)
		c.AutoToolChoiceOnly = only
		for _, final := range []bool{false, true} {
			s, err := c.Stream(t.Context(), llm.Request{Model: "glm-4.5", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, Tools: tools, NoToolCalls: final})
			if err == nil {
				_, err = llm.Collect(s)
			}
			switch {
			case !final || only:
				if err != nil {
					t.Errorf("AutoToolChoiceOnly %v, no tool calls %v: %v; want an answer", only, final, err)
				}
			case !errors.Is(err, llm.ErrBadRequest) || !strings.Contains(err.Error(), "Tool choice must be auto"):
				t.Errorf("twin (unmarked), no tool calls: %v; want the fake's 400", err)
			}
		}
		for _, r := range srv.Requests() {
			if !strings.Contains(string(r.Body), `"read_file"`) {
				t.Errorf("request %s dropped the tools", r.Body)
			}
			if only && strings.Contains(string(r.Body), "tool_choice") {
				t.Errorf("AutoToolChoiceOnly request sent tool_choice: %s", r.Body)
			}
		}
		srv.Close()
	}
}
