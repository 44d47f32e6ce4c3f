package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/homard/homard/internal/llm"
)

// event is one streamed Messages event (the fields we use).
type event struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		Usage wireUsage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *wireUsage      `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type wireUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

type partialCall struct {
	id, name string
	args     []byte
}

// decoder turns Messages stream events into llm events. Tool calls are
// held until message_stop: a stream cut earlier must not leave
// half-trusted proposals behind.
type decoder struct {
	secret string
	calls  map[int]*partialCall // open tool_use blocks by index
	done   []llm.ToolCall       // finished tool_use blocks, emitted at message_stop
	usage  llm.Usage
	reason llm.StopReason
}

func newStream(ctx context.Context, body io.ReadCloser, secret string) llm.Stream {
	return llm.NewFrameStream(ctx, body, provider, &decoder{secret: secret, calls: map[int]*partialCall{}})
}

// Decode implements llm.Decoder.
func (s *decoder) Decode(data string) (events []llm.Event, end bool, err error) {
	var e event
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		return nil, false, fmt.Errorf("%s: %w: malformed event: %v", provider, llm.ErrBrokenStream, err)
	}
	switch e.Type {
	case "message_start":
		s.addUsage(e.Message.Usage)
	case "content_block_start":
		if e.ContentBlock.Type == "tool_use" {
			s.calls[e.Index] = &partialCall{id: e.ContentBlock.ID, name: e.ContentBlock.Name}
		}
	case "content_block_delta":
		switch e.Delta.Type {
		case "text_delta":
			if e.Delta.Text != "" {
				events = append(events, llm.Event{Kind: llm.EventText, Text: e.Delta.Text})
			}
		case "input_json_delta":
			p := s.calls[e.Index]
			if p == nil {
				return nil, false, fmt.Errorf("%s: %w: input_json_delta for unknown block %d", provider, llm.ErrBrokenStream, e.Index)
			}
			p.args = append(p.args, e.Delta.PartialJSON...)
		}
	case "content_block_stop":
		if p := s.calls[e.Index]; p != nil {
			args := p.args
			if len(args) == 0 {
				args = []byte("{}")
			}
			s.done = append(s.done, llm.ToolCall{ID: p.id, Name: p.name, Args: json.RawMessage(args)})
			delete(s.calls, e.Index)
		}
	case "message_delta":
		if e.Delta.StopReason != "" {
			s.reason = stopReason(e.Delta.StopReason)
		}
		if e.Usage != nil {
			// message_delta's usage is cumulative; output_tokens is final.
			s.usage.Output = e.Usage.OutputTokens
		}
	case "message_stop":
		for _, tc := range s.done {
			events = append(events, llm.Event{Kind: llm.EventToolCall, ToolCall: tc})
		}
		if s.reason == "" {
			s.reason = llm.StopEnd
		}
		events = append(events,
			llm.Event{Kind: llm.EventUsage, Usage: s.usage},
			llm.Event{Kind: llm.EventDone, StopReason: s.reason})
		return events, true, nil
	case "error":
		e := llm.NewAPIError(provider, 500, []byte(`{"error":`+string(e.Error)+`}`), s.secret)
		return nil, false, fmt.Errorf("%w: in stream: %w", llm.ErrBrokenStream, e)
	}
	// "ping" and unknown event types are ignored, as the API asks.
	return events, false, nil
}

func (s *decoder) addUsage(u wireUsage) {
	s.usage.Input = u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	s.usage.Cached = u.CacheReadInputTokens
	s.usage.CacheWrite = u.CacheCreationInputTokens
	s.usage.Output = u.OutputTokens
}

func stopReason(v string) llm.StopReason {
	switch v {
	case "end_turn", "stop_sequence":
		return llm.StopEnd
	case "tool_use":
		return llm.StopToolUse
	case "max_tokens":
		return llm.StopMaxTokens
	}
	return llm.StopReason(v)
}
