// Package openai is a streaming llm.Model for the OpenAI Chat Completions
// API as spoken by OpenAI and by OpenAI-compatible servers (Ollama's /v1,
// DeepSeek, vLLM, llama.cpp server, OpenRouter, and the Chinese services
// of docs/PROVIDERS.md).
//
// It is a thin wire client on net/http + encoding/json and llm's SSE
// reader, not the official SDK, to keep the binary lean. It POSTs
// {BaseURL}/chat/completions with stream:true and
// stream_options.include_usage, joins tool-call fragments by index,
// reports usage including cached prompt tokens once per answer, and
// retries (see llm.Send) only before the answer has started. The API key
// never appears in errors. The compatible servers' documented differences
// are met in general terms, not per server: calls sent whole or without
// an index, usage in every chunk, reasoning_content (a sign of life, not
// answer text), a leading <think> block in the answer (dropped), finish
// reasons that mean failure ("sensitive", "network_error"), and a server
// that refuses tool_choice "none" (Client.AutoToolChoiceOnly).
package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/homard/homard/internal/llm"
)

const provider = "openai"

// Options configure a Client. BaseURL is the API root including the
// version, e.g. "https://api.openai.com/v1" or "http://localhost:11434/v1";
// zero means "https://api.openai.com/v1". APIKey is sent as a bearer token;
// empty sends no Authorization header (local servers).
type Options = llm.Endpoint

// Client is an llm.Model for one endpoint.
type Client struct {
	// AutoToolChoiceOnly is for a server that refuses any tool_choice but
	// "auto" (Zhipu answers HTTP 400 "Tool choice must be auto"): a
	// NoToolCalls request then sends no tool_choice, so the model may
	// still propose calls, which the caller must refuse (agent does for
	// every tool-less answer). Set it before the first Stream.
	AutoToolChoiceOnly bool

	opts Options
	// wire remembers each message's JSON across the requests of a
	// session (see llm.Memo).
	wire llm.Memo[encoded]
}

// encoded is one message's JSON, or why it could not be written.
type encoded struct {
	json []byte
	err  error
}

var _ llm.Model = (*Client)(nil)

// New returns a client for opts.
func New(opts Options) *Client {
	return &Client{opts: opts.WithBase("https://api.openai.com/v1")}
}

// Stream sends req and streams the answer.
func (c *Client) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	body, err := c.encode(req)
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", provider, err)
	}
	h := http.Header{}
	if c.opts.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	resp, err := c.opts.Stream(ctx, provider, "/chat/completions", h, body)
	if err != nil {
		return nil, err
	}
	return newStream(ctx, resp.Body, c.opts.APIKey), nil
}

type wireRequest struct {
	Model         string         `json:"model"`
	Messages      []wireMessage  `json:"messages"`
	Tools         []wireTool     `json:"tools,omitempty"`
	ToolChoice    string         `json:"tool_choice,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	Stream        bool           `json:"stream"`
	StreamOptions map[string]any `json:"stream_options"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string          `json:"type"`
	Function wireToolFuncDef `json:"function"`
}

type wireToolFuncDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// encode writes req's body: the request without its messages, with the
// messages' JSON (each written once per session, see llm.Memo) spliced in.
// The bytes are those json.Marshal writes for the whole request.
func (c *Client) encode(req llm.Request) ([]byte, error) {
	w := encodeRequest(req)
	if c.AutoToolChoiceOnly {
		w.ToolChoice = ""
	}
	env, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	var system []byte
	if req.System != "" {
		system = c.wire.Get(llm.Message{Role: "system", Content: req.System}, encodeMessage).json
	}
	wire := c.wire.Seq(req.Messages, encodeMessage)
	for _, e := range wire {
		if e.err != nil {
			return nil, e.err
		}
	}
	// Spliced from the memo's list as it is: no list of the messages'
	// bytes a request, which grew with the session.
	return llm.SpliceSeq(env, func(yield func([]byte) bool) {
		if system != nil && !yield(system) {
			return
		}
		for _, e := range wire {
			if !yield(e.json) {
				return
			}
		}
	})
}

// encodeMessage maps one message to the wire and encodes it.
func encodeMessage(m llm.Message) encoded {
	content := m.Content
	wm := wireMessage{Role: string(m.Role), Content: &content, ToolCallID: m.ToolCallID}
	if m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0 {
		if content == "" {
			wm.Content = nil
		}
		for _, tc := range m.ToolCalls {
			wm.ToolCalls = append(wm.ToolCalls, wireToolCall{ID: tc.ID, Type: "function",
				Function: wireFunction{Name: tc.Name, Arguments: string(tc.Args)}})
		}
	}
	b, err := json.Marshal(wm)
	return encoded{b, err}
}

// encodeRequest maps req to the wire, all but its messages (see encode). Tools keep their given order, so the
// prompt prefix stays byte-identical from turn to turn (provider caches).
func encodeRequest(req llm.Request) wireRequest {
	w := wireRequest{
		Model:         req.Model,
		MaxTokens:     req.MaxTokens,
		Stream:        true,
		StreamOptions: map[string]any{"include_usage": true},
	}
	for _, t := range req.Tools {
		schema := t.Schema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireTool{Type: "function",
			Function: wireToolFuncDef{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	if req.NoToolCalls && len(w.Tools) > 0 {
		w.ToolChoice = "none"
	}
	return w
}
