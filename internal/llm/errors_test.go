package llm

import (
	"errors"
	"strings"
	"testing"
)

func TestNewAPIError(t *testing.T) {
	tests := []struct {
		status int
		body   string
		kind   error
		msg    string
	}{
		{401, `{"error":{"message":"Incorrect API key provided: sk-XYZ.","type":"invalid_request_error"}}`, ErrAuth, "Incorrect API key provided: [redacted]."},
		{403, `{"type":"error","error":{"type":"permission_error","message":"no"}}`, ErrAuth, "no"},
		{404, `{"type":"error","error":{"type":"not_found_error","message":"model: x"}}`, ErrModelNotFound, "model: x"},
		{429, `{"error":"slow down"}`, ErrRateLimited, "slow down"},
		{503, `<html>bad gateway</html>`, ErrServer, "<html>bad gateway</html>"},
		{529, ``, ErrServer, ""},
		{422, `{}`, ErrBadRequest, "{}"},
		// Context windows, as each server words it; the twin below each
		// family is a 400 that is not about length.
		{400, `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, ErrContextLength, "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages."},
		{400, `{"error":{"message":"Invalid value for 'tool_choice'.","type":"invalid_request_error","param":"tool_choice","code":"invalid_value"}}`, ErrBadRequest, "Invalid value for 'tool_choice'."},
		{400, `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).","type":"BadRequestError","param":null,"code":400}`, ErrContextLength, `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).","type":"BadRequestError","param":null,"code":400}`},
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`, ErrContextLength, "prompt is too long: 210000 tokens > 200000 maximum"},
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}`, ErrBadRequest, "max_tokens: must be positive"},
		{413, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`, ErrContextLength, "Request exceeds the maximum allowed number of bytes."},
		{400, `{"error":{"code":400,"message":"request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4476,"n_ctx":4096}}`, ErrContextLength, "request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it"},
		{400, `{"error":"the input length exceeds the context length"}`, ErrContextLength, "the input length exceeds the context length"},
		{400, `{"error":"invalid tool call"}`, ErrBadRequest, "invalid tool call"},
		// Only a refusal of the request is about its length: a 429 or a
		// 401 whose text happens to match stays what its status says.
		{429, `{"error":{"message":"maximum context length tokens per minute reached"}}`, ErrRateLimited, "maximum context length tokens per minute reached"},
	}
	for _, tt := range tests {
		e := NewAPIError("p", tt.status, []byte(tt.body), "sk-XYZ")
		if !errors.Is(e, tt.kind) || e.Message != tt.msg {
			t.Errorf("NewAPIError(%d, %s) = %v, %q; want %v, %q", tt.status, tt.body, e.Kind, e.Message, tt.kind, tt.msg)
		}
	}
	long := NewAPIError("p", 500, []byte(strings.Repeat("é", 400)), "")
	if len(long.Message) > 310 || !strings.HasSuffix(long.Message, "…") || !strings.Contains(long.Error(), "HTTP 500") {
		t.Errorf("long message = %q", long.Message)
	}
}

func TestCollectStopsAtError(t *testing.T) {
	s := &sliceStream{events: []Event{{Kind: EventText, Text: "a"}, {Kind: EventError, Err: ErrBrokenStream}}}
	got, err := Collect(s)
	if !errors.Is(err, ErrBrokenStream) || got.Text != "a" || !s.closed {
		t.Errorf("Collect = %+v, %v (closed %v)", got, err, s.closed)
	}
}

type sliceStream struct {
	events []Event
	closed bool
}

func (s *sliceStream) Next() (Event, error) {
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, ev.Err
}

func (s *sliceStream) Close() error { s.closed = true; return nil }
