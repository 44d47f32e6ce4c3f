package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/homard/homard/internal/llm"
)

// Turn describes one streamed answer, to be rendered in a provider's wire
// format by OpenAIStream or AnthropicStream.
type Turn struct {
	Model string // zero means "test-model"
	// Text is sent as one delta per element.
	Text []string
	// Calls are sent after the text.
	Calls []CallScript
	// Stop is the provider's own stop value ("stop", "tool_calls",
	// "length" for OpenAI; "end_turn", "tool_use", "max_tokens" for
	// Anthropic). Zero means the natural one for the turn.
	Stop string
	// Usage, when set, is reported (Input includes Cached and, on the
	// Anthropic wire, CacheWrite).
	Usage *llm.Usage
}

// CallScript is a tool call sent as argument fragments, which may split the
// JSON anywhere (mid-key, mid-string, mid-escape).
type CallScript struct {
	ID, Name  string
	Fragments []string
}

func (t Turn) model() string {
	if t.Model == "" {
		return "test-model"
	}
	return t.Model
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// OpenAIStream renders t as an OpenAI Chat Completions stream with
// stream_options.include_usage: one "data: {chunk}\n\n" per element,
// ending with "data: [DONE]\n\n".
func OpenAIStream(t Turn) []string {
	const head = `{"id":"chatcmpl-llmtest","object":"chat.completion.chunk","created":1700000000,"model":%s,"system_fingerprint":"fp_llmtest","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":null}`
	model := mustJSON(t.model())
	chunk := func(delta, finish string) string {
		return "data: " + fmt.Sprintf(head, model, delta, finish) + "\n\n"
	}
	out := []string{chunk(`{"role":"assistant","content":"","refusal":null}`, "null")}
	for _, s := range t.Text {
		out = append(out, chunk(`{"content":`+mustJSON(s)+`}`, "null"))
	}
	for i, c := range t.Calls {
		out = append(out, chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%s,"type":"function","function":{"name":%s,"arguments":""}}]}`,
			i, mustJSON(c.ID), mustJSON(c.Name)), "null"))
		for _, f := range c.Fragments {
			out = append(out, chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, i, mustJSON(f)), "null"))
		}
	}
	stop := t.Stop
	if stop == "" {
		stop = "stop"
		if len(t.Calls) > 0 {
			stop = "tool_calls"
		}
	}
	out = append(out, chunk(`{}`, mustJSON(stop)))
	if u := t.Usage; u != nil {
		out = append(out, "data: "+fmt.Sprintf(`{"id":"chatcmpl-llmtest","object":"chat.completion.chunk","created":1700000000,"model":%s,"system_fingerprint":"fp_llmtest","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`,
			model, u.Input, u.Output, u.Input+u.Output, u.Cached)+"\n\n")
	}
	return append(out, "data: [DONE]\n\n")
}

// AnthropicStream renders t as an Anthropic Messages stream: "event: X\n
// data: {...}\n\n" per element, from message_start to message_stop, with a
// ping as the real API sends.
func AnthropicStream(t Turn) []string {
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	u := llm.Usage{}
	if t.Usage != nil {
		u = *t.Usage
	}
	out := []string{ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_llmtest","type":"message","role":"assistant","model":%s,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1}}}`,
		mustJSON(t.model()), u.Input-u.Cached-u.CacheWrite, u.CacheWrite, u.Cached)),
		ev("ping", `{"type": "ping"}`)}
	index := 0
	if len(t.Text) > 0 {
		out = append(out, ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
		for _, s := range t.Text {
			out = append(out, ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+mustJSON(s)+`}}`))
		}
		out = append(out, ev("content_block_stop", `{"type":"content_block_stop","index":0}`))
		index++
	}
	for _, c := range t.Calls {
		out = append(out, ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%s,"name":%s,"input":{}}}`,
			index, mustJSON(c.ID), mustJSON(c.Name))))
		out = append(out, ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":""}}`, index)))
		for _, f := range c.Fragments {
			out = append(out, ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, index, mustJSON(f))))
		}
		out = append(out, ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index)))
		index++
	}
	stop := t.Stop
	if stop == "" {
		stop = "end_turn"
		if len(t.Calls) > 0 {
			stop = "tool_use"
		}
	}
	out = append(out, ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%s,"stop_sequence":null},"usage":{"output_tokens":%d}}`, mustJSON(stop), u.Output)))
	return append(out, ev("message_stop", `{"type":"message_stop"}`))
}

// OpenAIError is the reply OpenAI sends for status (400, 401, 404, 429 or
// 500; others get a generic body).
func OpenAIError(status int) Reply {
	msg, typ, code := "Something went wrong.", "invalid_request_error", "null"
	switch status {
	case http.StatusBadRequest:
		msg, code = "Invalid value for 'messages': expected an array.", "null"
	case http.StatusUnauthorized:
		msg, code = "Incorrect API key provided: sk-test***abcd. You can find your API key at https://platform.openai.com/account/api-keys.", `"invalid_api_key"`
	case http.StatusNotFound:
		msg, code = "The model `no-such-model` does not exist or you do not have access to it.", `"model_not_found"`
	case http.StatusTooManyRequests:
		msg, typ, code = "Rate limit reached for requests. Please try again in 1ms.", "requests", `"rate_limit_exceeded"`
	case http.StatusInternalServerError:
		msg, typ = "The server had an error while processing your request. Sorry about that!", "server_error"
	}
	return Reply{Status: status, Body: fmt.Sprintf(`{"error":{"message":%s,"type":%q,"param":null,"code":%s}}`, mustJSON(msg), typ, code)}
}

// AnthropicError is the reply Anthropic sends for status (400, 401, 403,
// 404, 429, 500, 529; others get a generic body).
func AnthropicError(status int) Reply {
	typ, msg := "api_error", "Internal server error"
	switch status {
	case http.StatusBadRequest:
		typ, msg = "invalid_request_error", "messages: at least one message is required"
	case http.StatusUnauthorized:
		typ, msg = "authentication_error", "invalid x-api-key"
	case http.StatusForbidden:
		typ, msg = "permission_error", "Your API key does not have permission to use the specified resource."
	case http.StatusNotFound:
		typ, msg = "not_found_error", "model: no-such-model"
	case http.StatusTooManyRequests:
		typ, msg = "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"
	case 529:
		typ, msg = "overloaded_error", "Overloaded"
	}
	return Reply{Status: status, Body: fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%s}}`, typ, mustJSON(msg))}
}

// Join concatenates chunks (handy for comparing recorded bytes).
func Join(chunks []string) string { return strings.Join(chunks, "") }
