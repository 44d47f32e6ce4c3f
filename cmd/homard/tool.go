package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) toolCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "tool", Short: lang.N("List tools, or propose a tool call exactly as a model would")}
	cmd.AddCommand(c.toolListCmd(), c.toolCallCmd())
	return cmd
}

func (c *cli) toolListCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: lang.N("List the tools with their action and risk class")}
	load := func(_ context.Context, r *app.Runtime) ([]app.ToolInfo, error) { return r.Tools(), nil }
	return listCmd(c, cmd, lang.N("print descriptions and JSON schemas as JSON"), load, listing[app.ToolInfo]{
		header: "TOOL\tACTION\tRISK\tREAD-ONLY",
		row: func(w io.Writer, t app.ToolInfo) {
			fmt.Fprintf(w, "%s\t%s\t%s\t%v\n", termtext.Line(t.Name), termtext.Line(t.Action), termtext.Line(t.Risk), t.ReadOnly)
		},
	})
}

func (c *cli) toolCallCmd() *cobra.Command {
	var req app.CallRequest
	cmd := &cobra.Command{
		Use:   "call NAME 'JSON'", // lang:en
		Short: lang.N("Propose one tool call through the whole arbiter pipeline"),
		Long: lang.N(`call proposes a tool call exactly as a model would: strict decoding, hard
limits, policy, permission mode, approval, a confined run, redaction and an
audit record. It prints one JSON object:

  decision     ran | pending | denied | error
  reason       why, in words
  rule         the id of the rule that decided
  approval_id  the card to answer with 'homard approval approve ID'
  plan         what exactly runs (the approval is bound to its hash)
  preview      a pending call's card: a write's diff, a command's argv
  result       the tool's redacted output (a preview when it was long)
  artifact     the id of the whole result when it was too long to show;
               read on with 'homard tool call read_artifact '{"id":"…"}'

Exit status: 0 ran, 3 pending approval, 4 denied, 5 tool error or bad
arguments, 2 usage error, 1 homard failed.

After approving a pending call, run the same call again in the same session:
it runs once. A changed argument is a new plan and needs a new approval.`),
		/* lang:en */ Example: `  homard tool call read_file '{"path":"notes.txt"}'
  homard tool call write_file '{"path":"todo.md","content":"- tea\n"}' --session work
  homard tool call list_dir '{}' --as guest`,
	}
	f := cmd.Flags()
	f.StringVar(&req.As, "as", "owner", lang.N("entry trust of the caller: owner, guest or unknown"))
	f.StringVar(&req.Session, "session", "", lang.N("session `ID` the call and its approvals belong to (default cli)"))
	f.StringVar(&req.Mode, "mode", "", lang.N("permission mode for this call: safe, smart, autopilot or yolo (default from config)"))
	return leafCmd(cmd, cobra.RangeArgs(1, 2), func(ctx context.Context, args []string) error {
		req.Tool = args[0]
		if len(args) == 2 {
			req.Args = args[1]
		} else {
			b, err := io.ReadAll(io.LimitReader(c.stdin, 8<<20))
			if err != nil {
				return c.say.Errorf("read arguments from stdin: %w", err)
			}
			req.Args = string(b)
		}
		r, err := c.open(ctx, app.Options{})
		if err != nil {
			return err
		}
		defer r.Close()
		out, err := r.Call(ctx, req)
		if err != nil {
			return err
		}
		if err := writeJSON(c.stdout, out); err != nil {
			return err
		}
		switch out.Decision {
		case "ran":
			return nil
		case "pending":
			return &exitError{code: exitPending}
		case "denied":
			return &exitError{code: exitDenied}
		default:
			return &exitError{code: exitToolErr}
		}
	})
}

// writeJSON prints v as indented JSON. Strings in it may hold text from
// the model, a tool or the store: encoding/json escapes the C0 controls,
// and termtext.EscapeJSON the rest of what a terminal would obey or hide
// (C1, DEL, bidi and invisible characters), as \u escapes that decode to
// the same value.
func writeJSON(w io.Writer, v any) error { return encodeJSON(w, v, "  ") }

// writeJSONLine prints v as one line of JSON, escaped as writeJSON does.
func writeJSONLine(w io.Writer, v any) error { return encodeJSON(w, v, "") }

func encodeJSON(w io.Writer, v any, indent string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", indent)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termtext.EscapeJSON(b.Bytes()))
	return err
}
