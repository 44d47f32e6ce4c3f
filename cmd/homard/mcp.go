package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) mcpCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: lang.N("MCP: see, test and trust the servers of [[mcp.servers]]; serve homard's tools to another client"),
		Long: lang.N(`An MCP server's tools are offered to the model as mcp__SERVER__TOOL, each
call decided by homard's permission checks like any other tool. A server
offers nothing until you have read its tools and instructions and trusted
them (homard mcp trust NAME); if they change later, its tools are withdrawn
until you trust them again. A trust takes effect at homard's next start
(restart homard serve).

homard mcp serve is the other way round: homard as an MCP server, its tools
offered to another MCP client through homard's arbiter.`),
	}
	cmd.AddCommand(c.mcpListCmd(), c.mcpTestCmd(), c.mcpTrustCmd(), c.mcpServeCmd(), c.mcpLoginCmd(), c.mcpLogoutCmd())
	return cmd
}

// mcpStatusLine is a report's status as `mcp list` prints it.
func (c *cli) mcpStatusLine(rep app.MCPServerReport) string {
	switch rep.Status {
	case app.MCPNew, app.MCPChanged:
		return c.say.Sprintf("%s: needs trust", rep.Status)
	case app.MCPFailed:
		return "failed: " + rep.Error
	}
	return rep.Status
}

func (c *cli) mcpListCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: lang.N("Start each configured server and say whether its tools are offered")}
	load := func(_ context.Context, r *app.Runtime) ([]app.MCPServerReport, error) {
		return r.Extensions.MCPServers(), nil
	}
	return listCmd(c, cmd, lang.N("print the servers as JSON (docs/JSON.md, \"mcp\")"), load, listing[app.MCPServerReport]{
		json:   jsonEach(mcpOut),
		empty:  c.say.T("no MCP servers: add a [[mcp.servers]] table to the config (docs/CONFIG.md)"),
		header: "NAME\tTRANSPORT\tTOOLS\tSTATUS",
		row: func(w io.Writer, rep app.MCPServerReport) {
			fmt.Fprintf(w, "%s\t%s\t%d\t%s%s\n", termtext.Line(rep.Name), rep.Transport, len(rep.Tools), termtext.Line(c.mcpStatusLine(rep)), c.mcpLoginNote(rep))
		},
	})
}

func (c *cli) mcpTestCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{Use: "test NAME", Short: lang.N("Start one server, list its tools and stop it, trusting nothing")} // lang:en
	jsonFlag(cmd, &asJSON, lang.N("print the server as JSON (docs/JSON.md, \"mcp\")"))
	return leafCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, args []string) error {
		r, err := c.open(ctx, app.Options{SkipMCP: true}) // it starts the one server it looks at
		if err != nil {
			return err
		}
		defer r.Close()
		rep, err := r.Extensions.InspectMCP(ctx, args[0])
		if asJSON && rep.Name != "" {
			if jerr := writeJSON(c.stdout, mcpOut(rep)); jerr != nil {
				return jerr
			}
		}
		if err != nil {
			return err
		}
		if !asJSON {
			c.say.Fprintf(c.stdout, "%s: started and listed in %d ms, %d tools, fingerprint %s\nstatus: %s\n",
				termtext.Line(rep.Name), rep.StartMillis, len(rep.Tools), rep.Fingerprint, termtext.Line(c.mcpStatusLine(rep)))
		}
		return nil
	})
}

func (c *cli) mcpTrustCmd() *cobra.Command {
	var yes, asJSON bool
	cmd := &cobra.Command{
		Use:   "trust NAME", // lang:en
		Short: lang.N("Show a server's tools and instructions with their fingerprint, then trust them"),
		Long: lang.N(`trust starts the server, shows every tool it lists (its name, the name the
model sees, its description and input schema) and its instructions, exactly
as the model and homard would get them but printed inert, with the
fingerprint that covers them all, then asks. What is trusted is that
fingerprint: if the server lists anything else later, its tools are
withdrawn until you trust again.

Without a terminal, pass --yes (after reading 'homard mcp trust NAME' once).`),
		/* lang:en */ Example: `  homard mcp trust everything
  homard mcp trust everything --yes --json`,
	}
	cmd.Flags().BoolVar(&yes, "yes", false, lang.N("trust without asking (scripts; read the listing first)"))
	jsonFlag(cmd, &asJSON, lang.N("print the trusted server as JSON (docs/JSON.md, \"mcp\"); needs --yes"))
	return leafCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, args []string) error {
		if asJSON && !yes {
			return usage(c.say.Errorf("--json prints no question: pass --yes with it"))
		}
		r, err := c.open(ctx, app.Options{SkipMCP: true})
		if err != nil {
			return err
		}
		defer r.Close()
		rep, err := r.Extensions.InspectMCP(ctx, args[0])
		if err != nil {
			return err
		}
		if !asJSON {
			c.printMCPServer(rep)
		}
		if rep.Status == app.MCPTrusted {
			if asJSON {
				return writeJSON(c.stdout, mcpOut(rep))
			}
			c.say.Fprintf(c.stdout, "already trusted: %s lists exactly what was trusted on %s\n", termtext.Line(rep.Name), rep.TrustedAt.Local().Format(time.DateTime))
			return nil
		}
		question := c.say.Sprintf("Trust these %d tools of %s?", len(rep.Tools), termtext.Line(rep.Name))
		if ok, err := c.confirmed(yes, question, "homard mcp trust", c.say.T("not trusted; the server offers no tools")); !ok { // lang:en: a command
			return err
		}
		if err := r.Extensions.TrustMCP(ctx, rep); err != nil {
			return err
		}
		if asJSON {
			trusted, _ := r.Extensions.InspectMCP(ctx, args[0])
			return writeJSON(c.stdout, mcpOut(trusted))
		}
		c.say.Fprintf(c.stdout, "trusted %s (%s); its tools are offered from homard's next start (restart homard serve)\n", termtext.Line(rep.Name), rep.Fingerprint)
		return nil
	})
}

// printMCPServer shows what trust asks about. Every string is the
// server's: printed through termtext, so escapes and control characters
// are shown, never obeyed.
func (c *cli) printMCPServer(rep app.MCPServerReport) {
	w := c.stdout
	c.say.Fprintf(w, "MCP server %s (%s), %d tools\n", termtext.Line(rep.Name), rep.Transport, len(rep.Tools))
	if rep.Status == app.MCPChanged {
		c.say.Fprintf(w, "CHANGED since you trusted it (trusted %s, now %s)\n", rep.TrustedFingerprint, rep.Fingerprint)
	}
	if rep.Truncated {
		c.say.Fprintln(w, "the server listed more pages of tools than homard reads; only the first are shown and offered")
	}
	c.say.Fprintln(w, "\ninstructions (never shown to the model):")
	if rep.Instructions == "" {
		fmt.Fprintln(w, "  (none)")
	} else {
		fmt.Fprintln(w, indent(termtext.Visible(rep.Instructions)))
	}
	for _, t := range rep.Tools {
		c.say.Fprintf(w, "\ntool %s → %s", termtext.Line(t.Name), termtext.Line(t.Mapped))
		switch {
		case t.Refused != "":
			c.say.Fprintf(w, " (not offered: %s)", termtext.Line(t.Refused))
		case t.ReadOnly:
			fmt.Fprint(w, c.say.T(" (read_only: runs unasked in smart mode)"))
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, indent(termtext.Visible(t.Description)))
		var schema bytes.Buffer
		if json.Indent(&schema, t.InputSchema, "", "  ") != nil {
			schema.Reset()
			schema.Write(t.InputSchema)
		}
		fmt.Fprintln(w, indent("schema: "+termtext.Visible(schema.String())))
	}
	c.say.Fprintf(w, "\nfingerprint %s\n", rep.Fingerprint)
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

// mcpJSON is one server of `homard mcp list|test|trust --json`.
type mcpJSON struct {
	Name               string        `json:"name"`
	Transport          string        `json:"transport"`
	Status             string        `json:"status"`
	Error              string        `json:"error"`
	Fingerprint        string        `json:"fingerprint"`
	TrustedFingerprint string        `json:"trusted_fingerprint"`
	TrustedAt          *time.Time    `json:"trusted_at"`
	StartMS            int64         `json:"start_ms"`
	Instructions       string        `json:"instructions"`
	Truncated          bool          `json:"truncated"`
	NetworkAll         bool          `json:"network_all"`
	Tools              []mcpToolJSON `json:"tools"`
	Login              *mcpLoginJSON `json:"login"` // null: no auth = "oauth"
}

// mcpToolJSON is one tool of an mcpJSON.
type mcpToolJSON struct {
	Name        string          `json:"name"`
	Mapped      string          `json:"mapped"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	ReadOnly    bool            `json:"read_only"`
	Refused     string          `json:"refused"`
}

func mcpOut(rep app.MCPServerReport) mcpJSON {
	out := mcpJSON{Name: rep.Name, Transport: rep.Transport, Status: rep.Status, Error: rep.Error, Fingerprint: rep.Fingerprint,
		TrustedFingerprint: rep.TrustedFingerprint, TrustedAt: timeOrNull(rep.TrustedAt), StartMS: rep.StartMillis,
		Instructions: rep.Instructions, Truncated: rep.Truncated, NetworkAll: rep.NetworkAll, Tools: []mcpToolJSON{}, Login: mcpLoginOut(rep)}
	for _, t := range rep.Tools {
		schema := t.InputSchema
		if !json.Valid(schema) {
			schema = json.RawMessage("null")
		}
		out.Tools = append(out.Tools, mcpToolJSON{Name: t.Name, Mapped: t.Mapped, Description: t.Description, InputSchema: schema, ReadOnly: t.ReadOnly, Refused: t.Refused})
	}
	return out
}
