// Package anthropic is a streaming llm.Model for the Anthropic Messages API.
//
// It is a thin wire client on net/http + encoding/json and llm's SSE
// reader, not the official SDK, to keep the binary lean. It POSTs
// {BaseURL}/v1/messages with the x-api-key and anthropic-version headers
// and stream:true, marks the tools and the system prompt as a cacheable
// prefix (cache_control), turns tool_use blocks (their input_json_delta
// fragments joined) into tool calls, reports usage with cache reads and
// writes, and retries (see
// llm.Send) only before the answer has started. The API key never appears
// in errors.
package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/homard/homard/internal/llm"
)

const provider = "anthropic"

// Version is the anthropic-version header sent.
const Version = "2023-06-01"

// DefaultMaxTokens is sent when Request.MaxTokens is zero (the API requires
// the field).
const DefaultMaxTokens = 4096

// Options configure a Client. BaseURL is the API root without the version;
// zero means "https://api.anthropic.com". APIKey is sent in the x-api-key
// header.
type Options = llm.Endpoint

// Client is an llm.Model for one endpoint.
type Client struct {
	opts Options
	// wire remembers each message's content blocks across the requests
	// of a session (see llm.Memo).
	wire llm.Memo[blocks]
}

// blocks is one message's role and content blocks as JSON, comma-joined
// ("" when it has none), or why they could not be written.
type blocks struct {
	role string
	json []byte
	err  error
}

var _ llm.Model = (*Client)(nil)

// New returns a client for opts.
func New(opts Options) *Client {
	return &Client{opts: opts.WithBase("https://api.anthropic.com")}
}

// Stream sends req and streams the answer.
func (c *Client) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	body, err := c.encode(req)
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", provider, err)
	}
	h := http.Header{}
	h.Set("anthropic-version", Version)
	if c.opts.APIKey != "" {
		h.Set("x-api-key", c.opts.APIKey)
	}
	resp, err := c.opts.Stream(ctx, provider, "/v1/messages", h, body)
	if err != nil {
		return nil, err
	}
	return newStream(ctx, resp.Body, c.opts.APIKey), nil
}

type wireRequest struct {
	Model      string          `json:"model"`
	System     []wireText      `json:"system,omitempty"`
	Messages   []wireMessage   `json:"messages"`
	Tools      []wireTool      `json:"tools,omitempty"`
	ToolChoice *wireToolChoice `json:"tool_choice,omitempty"`
	MaxTokens  int             `json:"max_tokens"`
	Stream     bool            `json:"stream"`
}

type wireToolChoice struct {
	Type string `json:"type"`
}

type wireMessage struct {
	Role    string      `json:"role"`
	Content []wireBlock `json:"content"`
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
}

type wireTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *wireCache      `json:"cache_control,omitempty"`
}

// wireText is a system prompt block.
type wireText struct {
	Type         string     `json:"type"`
	Text         string     `json:"text"`
	CacheControl *wireCache `json:"cache_control,omitempty"`
}

// wireCache is a prompt-cache breakpoint: the provider caches the prompt
// up to and including the block that carries it.
type wireCache struct {
	Type string `json:"type"`
}

// ephemeral is the only cache type the Messages API defines (a 5-minute
// cache, renewed by each hit).
var ephemeral = &wireCache{Type: "ephemeral"}

// encodeRequest maps req to the wire. A tool result becomes a tool_result
// block in a user message; consecutive messages of one role are merged,
// since the API wants roles to alternate (several tool results answer one
// assistant turn). Tools keep their order so the prompt prefix stays
// byte-identical (provider caches).
//
// The prompt is rendered tools, then system, then messages, and the
// provider caches a prefix only up to a block marked with cache_control:
// the last tool and the system block carry a mark, so the tools and the
// system prompt (the same on every call of a session) are read from the
// cache after the first call. Two marks, not one: a call with the same
// tools and another system prompt still reads the tools. The API allows
// four.
// encode writes req's body: the request without its messages, with the
// messages spliced in, built from each message's blocks (written once per
// session, see llm.Memo). Consecutive messages of one role share a wire
// message, as the API wants. The bytes are those json.Marshal writes for
// the whole request.
func (c *Client) encode(req llm.Request) ([]byte, error) {
	env, err := json.Marshal(encodeRequest(req))
	if err != nil {
		return nil, err
	}
	var msgs [][]byte
	var cur []byte // the wire message being built, without its "]}"
	empty := true  // cur has no block yet
	role := ""
	end := func() {
		if cur == nil {
			return
		}
		if empty { // as json.Marshal writes a nil Content
			cur = append(cur[:len(cur)-1], "null}"...)
		} else {
			cur = append(cur, "]}"...)
		}
		msgs = append(msgs, cur)
	}
	for _, bl := range c.wire.Seq(req.Messages, encodeBlocks) {
		if bl.err != nil {
			return nil, bl.err
		}
		if cur == nil || bl.role != role {
			end()
			role, empty = bl.role, true
			cur = append([]byte(`{"role":"`+role+`","content":[`), bl.json...)
		} else if len(bl.json) > 0 && !empty {
			cur = append(append(cur, ','), bl.json...)
		} else {
			cur = append(cur, bl.json...)
		}
		empty = empty && len(bl.json) == 0
	}
	end()
	return llm.SpliceMessages(env, msgs)
}

// encodeBlocks maps one message to its wire role and content blocks.
func encodeBlocks(m llm.Message) blocks {
	role := "user"
	var bs []wireBlock
	switch m.Role {
	case llm.RoleTool:
		bs = []wireBlock{{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content}}
	case llm.RoleAssistant:
		role = "assistant"
		if m.Content != "" {
			bs = append(bs, wireBlock{Type: "text", Text: m.Content})
		}
		for _, tc := range m.ToolCalls {
			input := tc.Args
			if !isObject(input) {
				// The API needs an object; the model's broken argument
				// text was already refused when it was proposed.
				input = json.RawMessage(`{}`)
			}
			bs = append(bs, wireBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: input})
		}
	default:
		bs = []wireBlock{{Type: "text", Text: m.Content}}
	}
	if len(bs) == 0 {
		return blocks{role: role}
	}
	b, err := json.Marshal(bs)
	if err != nil {
		return blocks{err: err}
	}
	return blocks{role: role, json: b[1 : len(b)-1]} // without the brackets
}

// encodeRequest maps req to the wire, all but its messages (see encode).
func encodeRequest(req llm.Request) wireRequest {
	w := wireRequest{Model: req.Model, MaxTokens: req.MaxTokens, Stream: true}
	if req.System != "" {
		w.System = []wireText{{Type: "text", Text: req.System, CacheControl: ephemeral}}
	}
	if w.MaxTokens == 0 {
		w.MaxTokens = DefaultMaxTokens
	}
	for _, t := range req.Tools {
		schema := t.Schema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if n := len(w.Tools); n > 0 {
		w.Tools[n-1].CacheControl = ephemeral
	}
	if req.NoToolCalls && len(w.Tools) > 0 {
		w.ToolChoice = &wireToolChoice{Type: "none"}
	}
	return w
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}
