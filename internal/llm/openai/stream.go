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

// stream is an llm.Stream over one response body. It is used by one
// goroutine. ctx is kept because the stream lives within the Stream call's
// context, as the response body does: it tells a cancelled read from a
// broken one.
type stream struct {
	ctx    context.Context
	body   io.ReadCloser
	sse    *llm.SSEReader
	secret string
	stop   func() bool // unregisters the close-on-cancel hook

	pending []llm.Event
	calls   map[int]*partialCall // the open call at each index
	order   []*partialCall       // every call, in the order first seen
	reason  llm.StopReason
	ended   bool // EventDone queued
	err     error
}

func newStream(ctx context.Context, body io.ReadCloser, secret string) *stream {
	s := &stream{ctx: ctx, body: body, sse: llm.NewSSEReader(body), secret: secret, calls: map[int]*partialCall{}}
	// net/http already aborts the read when ctx ends; closing the body as
	// well makes the release explicit and independent of the transport.
	s.stop = context.AfterFunc(ctx, func() { body.Close() })
	return s
}

func (s *stream) Close() error {
	s.stop()
	return s.body.Close()
}

func (s *stream) fail(err error) (llm.Event, error) {
	s.err = err
	s.pending = nil
	s.Close()
	return llm.Event{Kind: llm.EventError, Err: err}, err
}

func (s *stream) Next() (llm.Event, error) {
	for {
		if s.err != nil {
			return llm.Event{Kind: llm.EventError, Err: s.err}, s.err
		}
		if len(s.pending) > 0 {
			ev := s.pending[0]
			s.pending = s.pending[1:]
			return ev, nil
		}
		if s.ended {
			return llm.Event{}, io.EOF
		}
		ev, err := s.sse.Next()
		if err != nil {
			return s.fail(llm.ReadError(s.ctx, provider, err))
		}
		if ev.Data == "[DONE]" {
			if s.reason == "" { // a server that sent no finish_reason
				s.reason = llm.StopEnd
				if len(s.calls) > 0 {
					s.reason = llm.StopToolUse
				}
			}
			s.flushCalls()
			s.pending = append(s.pending, llm.Event{Kind: llm.EventDone, StopReason: s.reason})
			s.ended = true
			s.Close()
			continue
		}
		if err := s.handle(ev.Data); err != nil {
			return s.fail(err)
		}
	}
}

func (s *stream) handle(data string) error {
	var c chunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		return fmt.Errorf("%s: %w: malformed chunk: %v", provider, llm.ErrBrokenStream, err)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		e := llm.NewAPIError(provider, 500, []byte(`{"error":`+string(c.Error)+`}`), s.secret)
		return fmt.Errorf("%w: in stream: %w", llm.ErrBrokenStream, e)
	}
	for _, ch := range c.Choices {
		if d := ch.Delta.Content; d != nil && *d != "" {
			s.pending = append(s.pending, llm.Event{Kind: llm.EventText, Text: *d})
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
			// Tool calls are held until [DONE]: a stream cut after
			// finish_reason must not leave half-trusted proposals behind.
			s.reason = stopReason(*ch.FinishReason)
		}
	}
	if u := c.Usage; u != nil {
		usage := llm.Usage{Input: u.PromptTokens, Output: u.CompletionTokens}
		if u.PromptTokensDetails != nil {
			usage.Cached = u.PromptTokensDetails.CachedTokens
		}
		s.pending = append(s.pending, llm.Event{Kind: llm.EventUsage, Usage: usage})
	}
	return nil
}

// flushCalls emits the gathered tool calls in the order first seen (which
// is index order on servers that send indexes).
func (s *stream) flushCalls() {
	for _, p := range s.order {
		args := p.args
		if len(args) == 0 {
			args = []byte("{}")
		}
		s.pending = append(s.pending, llm.Event{Kind: llm.EventToolCall,
			ToolCall: llm.ToolCall{ID: p.id, Name: p.name, Args: json.RawMessage(args)}})
	}
	clear(s.calls)
	s.order = nil
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
