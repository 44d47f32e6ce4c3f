package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
)

// mcpServeCmd is `homard mcp serve`: homard as an MCP server over stdio.
func (c *cli) mcpServeCmd() *cobra.Command {
	var client string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: lang.N("Serve homard's tools to another MCP client over stdio, through homard's arbiter"),
		Long: lang.N(`serve makes homard an MCP server on stdin and stdout, so another MCP client
(an editor, another agent) can use homard's tools as its guarded tool layer:

  {"command": "homard", "args": ["mcp", "serve", "--client", "editor"]}

Every call is a proposal decided by homard's arbiter at trust "paired": the
owner's tools but memory (never offered), in your permission mode but never
above smart, without your standing session or always grants. A call that
needs approval waits (gateway.approval_wait) for you on your own channels —
the web UI, 'homard approval approve ID', a chat card — and can only be
approved once. Nothing offered to the client can answer an approval, so the
client's model cannot approve its own calls. Results read from files, pages
or commands reach the client between untrusted markers. The calls are in the
audit log under session mcp-CLIENT.`),
	}
	cmd.Flags().StringVar(&client, "client", "client", lang.N("the client's name: its calls run in session mcp-NAME (lowercase letters, digits, '-')"))
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		return r.Extensions.MCPServe(ctx, io.NopCloser(c.stdin), nopWriteCloser{c.stdout}, client)
	})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
