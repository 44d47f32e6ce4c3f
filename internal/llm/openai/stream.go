package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/homard/homard/internal/llm"
)

// chunk is one streamed chat.completion.chunk (the fields we use).
type chunk struct {
	Choices []struct {
		Delta struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	// Some compatible servers report a failure inside the stream.
	Error json.RawMessage `json:"error"`
}

// partialCall gathers the fragments of one tool call.
type partialCall struct {
	id, name string
	args     []byte
}

// decoder turns chat.completion.chunk events into llm events. Tool calls
// are held until [DONE]: a stream cut after finish_reason must not leave
// half-trusted proposals behind.
type decoder struct {
	secret string
	calls  map[int]*partialCall // the open call at each index
	order  []*partialCall       // every call, in the order first seen
	reason llm.StopReason
}

func newStream(ctx context.Context, body io.ReadCloser, secret string) llm.Stream {
	return llm.NewFrameStream(ctx, body, provider, &decoder{secret: secret, calls: map[int]*partialCall{}})
}

// Decode implements llm.Decoder.
func (s *decoder) Decode(data string) ([]llm.Event, bool, error) {
	if data == "[DONE]" {
		if s.reason == "" { // a server that sent no finish_reason
			s.reason = llm.StopEnd
			if len(s.calls) > 0 {
				s.reason = llm.StopToolUse
			}
		}
		events := append(s.flushCalls(), llm.Event{Kind: llm.EventDone, StopReason: s.reason})
		return events, true, nil
	}
	events, err := s.handle(data)
	return events, false, err
}

func (s *decoder) handle(data string) ([]llm.Event, error) {
	var events []llm.Event
	var c chunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		return nil, fmt.Errorf("%s: %w: malformed chunk: %v", provider, llm.ErrBrokenStream, err)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		e := llm.NewAPIError(provider, 500, []byte(`{"error":`+string(c.Error)+`}`), s.secret)
		return nil, fmt.Errorf("%w: in stream: %w", llm.ErrBrokenStream, e)
	}
	for _, ch := range c.Choices {
		if d := ch.Delta.Content; d != nil && *d != "" {
			events = append(events, llm.Event{Kind: llm.EventText, Text: *d})
		}
		for _, tc := range ch.Delta.ToolCalls {
			p := s.calls[tc.Index]
			// Some compatible servers send whole calls without an index
			// (all at 0); a new id at a used index starts a new call.
			if p == nil || (tc.ID != "" && p.id != "" && tc.ID != p.id) {
				p = &partialCall{}
				s.calls[tc.Index] = p
				s.order = append(s.order, p)
			}
			if tc.ID != "" {
				p.id = tc.ID
			}
			p.name += tc.Function.Name
			p.args = append(p.args, tc.Function.Arguments...)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.reason = stopReason(*ch.FinishReason)
		}
	}
	if u := c.Usage; u != nil {
		usage := llm.Usage{Input: u.PromptTokens, Output: u.CompletionTokens}
		if u.PromptTokensDetails != nil {
			usage.Cached = u.PromptTokensDetails.CachedTokens
		}
		events = append(events, llm.Event{Kind: llm.EventUsage, Usage: usage})
	}
	return events, nil
}

// flushCalls emits the gathered tool calls in the order first seen (which
// is index order on servers that send indexes).
func (s *decoder) flushCalls() []llm.Event {
	var events []llm.Event
	for _, p := range s.order {
		args := p.args
		if len(args) == 0 {
			args = []byte("{}")
		}
		events = append(events, llm.Event{Kind: llm.EventToolCall,
			ToolCall: llm.ToolCall{ID: p.id, Name: p.name, Args: json.RawMessage(args)}})
	}
	clear(s.calls)
	s.order = nil
	return events
}

func stopReason(v string) llm.StopReason {
	switch v {
	case "stop":
		return llm.StopEnd
	case "tool_calls", "function_call":
		return llm.StopToolUse
	case "length":
		return llm.StopMaxTokens
	}
	return llm.StopReason(v)
}
