// Package llm defines what homard exchanges with a language model: Message,
// ToolCall, ToolSpec, Request, the streamed Event, and the Model interface that
// every provider client implements.
//
// Contract: a Model only proposes. A ToolCall carries the model's raw argument
// text; nothing here validates or runs it (that is the arbiter's job). Errors
// from providers are classified with the sentinels in errors.go and never
// contain the API key.
//
// The package also holds what the wire clients share: a small Server-Sent
// Events reader (sse.go) and the HTTP send-with-retry loop (transport.go).
// The clients are thin wire clients on net/http + encoding/json rather than
// the official SDKs, to keep the binary lean (see issue 4).
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// Role is who wrote a Message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool is a tool result; ToolCallID names the call it answers.
	RoleTool Role = "tool"
)

// Message is one entry of the conversation sent to the model. The system
// prompt is not a Message; it is Request.System.
type Message struct {
	Role    Role
	Content string
	// ToolCalls are the calls an assistant message proposed.
	ToolCalls []ToolCall
	// ToolCallID is set on a RoleTool message: the ToolCall.ID it answers.
	ToolCallID string
}

// ToolCall is one tool call the model proposed.
type ToolCall struct {
	ID   string
	Name string
	// Args is the model's argument text as received. It is usually a JSON
	// object but is not validated here; the arbiter decodes it strictly.
	Args json.RawMessage
}

// ToolSpec describes a tool offered to the model.
type ToolSpec struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the arguments (an object schema).
	Schema json.RawMessage
}

// Request is one call to a model.
type Request struct {
	Model    string
	System   string
	Messages []Message
	Tools    []ToolSpec
	// NoToolCalls asks for a text answer only (tool_choice "none"). The
	// tools are still sent, so the prompt prefix — and the provider's
	// prompt cache — stays the same, and a history holding tool calls
	// stays valid for providers that require tool definitions with it.
	// A server that refuses tool_choice "none" is not asked for it
	// (openai.Client.AutoToolChoiceOnly): the answer may then hold calls
	// anyway, and the caller must refuse them.
	NoToolCalls bool
	// MaxTokens caps the answer. Zero means the provider's default (the
	// anthropic client, where the field is required, uses 4096).
	MaxTokens int
}

// EventKind says which field of an Event is set.
type EventKind int

const (
	// EventText carries Text, a fragment of the answer.
	EventText EventKind = iota + 1
	// EventToolCall carries ToolCall, complete (all fragments joined).
	EventToolCall
	// EventUsage carries Usage.
	EventUsage
	// EventDone carries StopReason; it is the last event of a good stream.
	EventDone
	// EventError carries Err; it is the last event of a failed stream.
	EventError
	// EventThinking carries nothing: the model is reasoning (a
	// reasoning_content delta), which is not part of the answer. It tells
	// the stream's deadlines that the model is still at work, so a long
	// think before the answer or between tool calls is not taken for a
	// stall; everything else skips it.
	EventThinking
)

func (k EventKind) String() string {
	switch k {
	case EventText:
		return "text"
	case EventToolCall:
		return "tool_call"
	case EventUsage:
		return "usage"
	case EventDone:
		return "done"
	case EventError:
		return "error"
	case EventThinking:
		return "thinking"
	}
	return "unknown"
}

// StopReason says why the model stopped. Provider values are mapped to the
// constants below; an unknown value is passed through unchanged.
type StopReason string

const (
	StopEnd       StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
)

// Usage counts tokens of one model call.
type Usage struct {
	// Input is every prompt token, cached or not.
	Input int
	// Output is the tokens generated.
	Output int
	// Cached is the part of Input read from the provider's prompt cache
	// (a cache hit: Anthropic's cache_read_input_tokens, OpenAI's
	// prompt_tokens_details.cached_tokens).
	Cached int
	// CacheWrite is the part of Input written to the provider's prompt
	// cache by this call (Anthropic's cache_creation_input_tokens, priced
	// above plain input); zero on wires that cache on their own (OpenAI).
	CacheWrite int
}

// Event is one item of a model's streamed answer.
type Event struct {
	Kind       EventKind
	Text       string
	ToolCall   ToolCall
	Usage      Usage
	StopReason StopReason
	Err        error
}

// Model is a language model that streams its answer.
type Model interface {
	// Stream sends req and returns the answer as it arrives. An error
	// returned here means nothing was received (after any retries). The
	// stream lives within ctx: when ctx ends, the stream ends and its
	// connection is closed. req.Messages is the caller's again once the
	// stream is closed (it is reused for a later request): a model that
	// keeps the messages past that copies them.
	Stream(ctx context.Context, req Request) (Stream, error)
}

// Stream yields the events of one answer. The caller must call Close (it is
// safe to call more than once); Close releases the connection even when the
// caller stops early.
type Stream interface {
	// Next returns the next event. After EventDone it returns io.EOF. A
	// failure is returned both as an EventError event and as the error;
	// later calls return the same error.
	Next() (Event, error)
	Close() error
}

// Result is a whole answer gathered by Collect.
type Result struct {
	Text       string
	ToolCalls  []ToolCall
	Usage      Usage
	StopReason StopReason
}

// Collect reads s to its end and closes it. On failure it returns what was
// received so far together with the error.
func Collect(s Stream) (Result, error) {
	defer s.Close()
	var r Result
	var text strings.Builder
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			r.Text = text.String()
			return r, nil
		}
		if err != nil {
			r.Text = text.String()
			return r, err
		}
		switch ev.Kind {
		case EventText:
			text.WriteString(ev.Text)
		case EventToolCall:
			r.ToolCalls = append(r.ToolCalls, ev.ToolCall)
		case EventUsage:
			r.Usage = ev.Usage
		case EventDone:
			r.StopReason = ev.StopReason
		}
	}
}
