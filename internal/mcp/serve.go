package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServedTool is one of homard's own tools offered to an MCP client by
// `homard mcp serve`.
type ServedTool struct {
	Name        string
	Description string
	InputSchema json.RawMessage // a JSON schema of type object
	ReadOnly    bool            // shown as the readOnlyHint annotation
}

// ServedResult is what the client reads for one call: text only, and
// IsError for a refusal, a failure or a call still waiting for the owner.
type ServedResult struct {
	Text    string
	IsError bool
}

// CallFunc decides and runs one call of a served tool. It is homard's
// arbiter behind the client: every call is a proposal, like a model's.
type CallFunc func(ctx context.Context, tool string, args json.RawMessage) (ServedResult, error)

// Serve runs homard as an MCP server over in and out (newline-delimited
// JSON-RPC, frames capped at MaxLine) until ctx ends or the client goes
// away. It offers tools only: no resources, prompts, sampling or
// logging, and no tool that could answer an approval. version is
// homard's, shown to the client.
func Serve(ctx context.Context, in io.ReadCloser, out io.WriteCloser, version string, tools []ServedTool, call CallFunc) error {
	s := mcp.NewServer(&mcp.Implementation{Name: "homard", Version: version}, &mcp.ServerOptions{
		Instructions: "homard's tools. Every call is decided by homard's arbiter on the owner's machine: it may run, be refused, or wait for the owner's approval on the owner's own channels.",
	})
	for _, t := range tools {
		var schema map[string]any
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil || schema["type"] != "object" {
			return fmt.Errorf("mcp serve: tool %s: its input schema is not a JSON object schema", t.Name)
		}
		name := t.Name
		s.AddTool(&mcp.Tool{
			Name: name, Description: t.Description, InputSchema: schema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: t.ReadOnly},
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := req.Params.Arguments
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			res, err := call(ctx, name, args)
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Text}}, IsError: res.IsError}, nil
		})
	}
	err := s.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: MaxLine})
	if ctx.Err() != nil {
		return nil
	}
	return err
}
