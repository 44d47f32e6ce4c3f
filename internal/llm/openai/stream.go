package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/homard/homard/internal/llm"
)

// chunk is one streamed chat.completion.chunk (the fields we use). A
// chunk's "message" (MiniMax ends some streams with the whole answer
// again as a chat.completion) is not read: the deltas already carried it.
type chunk struct {
	Choices []struct {
		Delta struct {
			Content *string `json:"content"`
			// ReasoningContent is the model's reasoning before or
			// between answers (Zhipu, SiliconFlow, Ark, DeepSeek...):
			// never part of the answer, only a sign of life.
			ReasoningContent string `json:"reasoning_content"`
			ToolCalls        []struct {
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
// and usage are held until [DONE]: a stream cut after finish_reason must
// not leave half-trusted proposals behind, and a server that reports usage
// in several chunks (MiniMax, in every one) must be counted once.
type decoder struct {
	secret string
	calls  map[int]*partialCall // the open call at each index
	order  []*partialCall       // every call, in the order first seen
	reason llm.StopReason
	// usage is the last usage reported that counts anything (usage is
	// for the whole request, so a later report replaces an earlier one).
	usage *llm.Usage
	think thinkFilter
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
		var events []llm.Event
		if t := s.think.flush(); t != "" {
			events = append(events, llm.Event{Kind: llm.EventText, Text: t})
		}
		events = append(events, s.flushCalls()...)
		if s.usage != nil {
			events = append(events, llm.Event{Kind: llm.EventUsage, Usage: *s.usage})
		}
		events = append(events, llm.Event{Kind: llm.EventDone, StopReason: s.reason})
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
		if ch.Delta.ReasoningContent != "" {
			events = append(events, llm.Event{Kind: llm.EventThinking})
		}
		if d := ch.Delta.Content; d != nil && *d != "" {
			if t := s.think.text(*d); t != "" {
				events = append(events, llm.Event{Kind: llm.EventText, Text: t})
			}
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
			if err := failedFinish(*ch.FinishReason); err != nil {
				return nil, err
			}
			s.reason = stopReason(*ch.FinishReason)
		}
	}
	if u := c.Usage; u != nil {
		usage := llm.Usage{Input: u.PromptTokens, Output: u.CompletionTokens}
		if u.PromptTokensDetails != nil {
			usage.Cached = u.PromptTokensDetails.CachedTokens
		}
		if s.usage == nil || usage != (llm.Usage{}) {
			s.usage = &usage
		}
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

// failedFinish is the error for a finish_reason that says the answer
// failed rather than ended: Zhipu's "sensitive" (its content review cut
// the answer; Tencent Hunyuan uses the same word) and "network_error" (the
// model failed mid-answer). The stream then ends as broken: what was
// gathered, tool calls included, is not handed on as an answer.
func failedFinish(v string) error {
	switch v {
	case "sensitive":
		return fmt.Errorf("%s: %w: the provider's content review stopped the answer (finish_reason %q); rephrase the request or start a new session",
			provider, llm.ErrBrokenStream, v)
	case "network_error":
		return fmt.Errorf("%s: %w: the provider's model failed in the middle of the answer (finish_reason %q); try again",
			provider, llm.ErrBrokenStream, v)
	}
	return nil
}

// thinkFilter drops a <think>…</think> block at the start of the answer:
// models that reason in the answer text itself (MiniMax-M2 on its
// OpenAI-compatible API, Zhipu's GLM-Z1) send their reasoning there. The
// tags may be split across deltas anywhere. Text that does not begin with
// the tag, or a tag later in the answer, is left as it is.
type thinkFilter struct {
	state   thinkState
	pending string // undecided text at the start, or the tail of the block
}

type thinkState int

const (
	thinkStart  thinkState = iota // nothing but blanks yet
	thinkInside                   // in the block: dropped
	thinkAfter                    // the block ended: blanks dropped
	thinkText                     // the answer: passed on
)

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
	blanks     = " \t\r\n"
)

// text takes one content delta and returns the answer text it releases.
func (f *thinkFilter) text(d string) string {
	switch f.state {
	case thinkText:
		return d
	case thinkStart:
		f.pending += d
		head := strings.TrimLeft(f.pending, blanks)
		switch {
		case strings.HasPrefix(head, thinkOpen):
			f.state, f.pending = thinkInside, ""
			return f.text(head[len(thinkOpen):])
		case strings.HasPrefix(thinkOpen, head): // "" or a cut tag: wait
			return ""
		}
		out := f.pending
		f.state, f.pending = thinkText, ""
		return out
	case thinkInside:
		f.pending += d
		i := strings.Index(f.pending, thinkClose)
		if i < 0 {
			// Keep only what could still begin the closing tag.
			if n := len(thinkClose) - 1; len(f.pending) > n {
				f.pending = f.pending[len(f.pending)-n:]
			}
			return ""
		}
		rest := f.pending[i+len(thinkClose):]
		f.state, f.pending = thinkAfter, ""
		return f.text(rest)
	}
	// thinkAfter
	d = strings.TrimLeft(d, blanks)
	if d == "" {
		return ""
	}
	f.state = thinkText
	return d
}

// flush returns what is still held at the end of the answer: blanks or a
// cut "<thi" that never became a block are answer text; an unclosed
// block is reasoning and is dropped.
func (f *thinkFilter) flush() string {
	if f.state != thinkStart {
		return ""
	}
	out := f.pending
	f.pending = ""
	return out
}
