package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Result is what one tool call returned, sorted for the caller: only Text
// may reach the model (wrapped as untrusted); Binary becomes artifacts.
type Result struct {
	// Text joins the result's text parts (and embedded text resources),
	// capped at MaxText bytes on a character boundary.
	Text string
	// Truncated: Text was cut at MaxText; Omitted bytes were left out.
	Truncated bool
	Omitted   int
	// Binary holds images, audio and embedded binary resources.
	Binary []Blob
	// Placeholders describes, in homard's words, each part not passed on:
	// resource links (never followed) and content types homard does not
	// know. They carry nothing the server wrote.
	Placeholders []string
	// IsError: the server reported the call failed (or refused it).
	IsError bool
}

// Blob is one binary part of a result.
type Blob struct {
	Kind string // "image", "audio" or "resource"
	// MIME is the type the server declared: untrusted, check it before use.
	MIME string
	Data []byte
}

// Call runs one tool by its original name with arguments already decoded
// and checked by the caller (against the schema it pinned: CompileSchema,
// Schema.Check), and sends them exactly as given. It refuses a tool the
// current listing does not offer, and every call while the listing does
// not match the pinned fingerprint. A call that loses the server returns
// an error; the server restarts on a later call.
func (s *Server) Call(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	cs, listing, err := s.current(ctx)
	if err != nil {
		return Result{}, err
	}
	s.mu.Lock()
	pin := s.pin
	s.mu.Unlock()
	switch {
	case pin == "":
		return Result{}, fmt.Errorf("%w: run homard mcp trust %s", ErrNotTrusted, s.cfg.Name)
	case listing.Fingerprint != pin:
		return Result{}, fmt.Errorf("%w: mcp server %s now lists %s; run homard mcp trust %s to review it", ErrToolsChanged, s.cfg.Name, listing.Fingerprint, s.cfg.Name)
	case !listing.offers(name):
		return Result{}, fmt.Errorf("%w: mcp server %s offers no tool %q", ErrUnknownTool, s.cfg.Name, name)
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	limit := s.cfg.callTimeout()
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			// The server answered with a protocol error (unknown tool,
			// invalid arguments): the model may act on it.
			return Result{Text: fmt.Sprintf("the server refused the call: %s", capText(rpcErr.Message, 1024)), IsError: true}, nil
		}
		if cctx.Err() != nil {
			return Result{}, s.callError(cctx, name, limit.String(), err)
		}
		// The connection is broken (the process exited, a frame was over
		// MaxLine): drop the session, restart on a later call.
		s.drop(cs)
		return Result{}, fmt.Errorf("mcp server %s stopped during %s (it exited, or sent a message over %d MiB); it restarts on a later call: %w", s.cfg.Name, name, MaxLine>>20, err)
	}
	s.mu.Lock()
	s.backoff = minBackoff
	s.mu.Unlock()
	return convert(res), nil
}

// convert sorts a call's content into text, blobs and placeholders.
func convert(res *sdk.CallToolResult) Result {
	out := Result{IsError: res.IsError}
	var text []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			text = append(text, c.Text)
		case *sdk.ImageContent:
			out.Binary = append(out.Binary, Blob{Kind: "image", MIME: c.MIMEType, Data: c.Data})
		case *sdk.AudioContent:
			out.Binary = append(out.Binary, Blob{Kind: "audio", MIME: c.MIMEType, Data: c.Data})
		case *sdk.EmbeddedResource:
			switch {
			case c.Resource == nil:
				out.Placeholders = append(out.Placeholders, "an empty embedded resource")
			case c.Resource.Blob != nil:
				out.Binary = append(out.Binary, Blob{Kind: "resource", MIME: c.Resource.MIMEType, Data: c.Resource.Blob})
			default:
				text = append(text, c.Resource.Text)
			}
		case *sdk.ResourceLink:
			out.Placeholders = append(out.Placeholders, "a resource link (homard does not follow links)")
		default:
			out.Placeholders = append(out.Placeholders, fmt.Sprintf("a %T part homard does not pass on", c))
		}
	}
	if res.NeedsInput() {
		out.IsError = true
		out.Placeholders = append(out.Placeholders, "the server asked for input during the call; homard gives none")
	}
	if len(text) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			text = append(text, string(b))
		}
	}
	joined := strings.Join(text, "\n")
	out.Text = capText(joined, MaxText)
	if len(out.Text) < len(joined) {
		out.Truncated, out.Omitted = true, len(joined)-len(out.Text)
	}
	return out
}

// capText cuts s to at most n bytes without splitting a character.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
