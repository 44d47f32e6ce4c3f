package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) sessionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: lang.N("List your conversations and whether they have read your data"),
		Long: lang.N(`A session is one conversation: homard run --session ID, a chat, a tab of
the web UI. Its history is replayed to the model on every turn.

Once a session has read your private data (a file, command output, a
memory), its web requests ask for your approval in autopilot
(permissions.private_egress): the model could carry that data out in a URL.
Start a new session for work that does not need your files.`),
	}
	cmd.AddCommand(c.sessionListCmd())
	return cmd
}

func (c *cli) sessionListCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: lang.N("List sessions, most recently active first"),
		/* lang:en */ Example: `  homard session list
  homard session list --json | jq -r '.[] | select(.private_since == null) | .id'`,
	}
	load := func(ctx context.Context, r *app.Runtime) ([]app.SessionSummary, error) { return r.Owner.Sessions(ctx) }
	return listCmd(c, cmd, lang.N("print a JSON array (schema: docs/JSON.md)"), load, listing[app.SessionSummary]{
		json:   jsonEach(sessionOut),
		empty:  c.say.T(`no sessions yet; start one with: homard run "…" --session NAME`),
		header: "SESSION\tTURNS\tLAST ACTIVE\tHAS READ YOUR DATA\tTITLE", // lang:en: column names (tabwriter aligns bytes, not wide characters)
		row: func(w io.Writer, s app.SessionSummary) {
			private := "no"
			if !s.PrivateSince.IsZero() {
				private = c.say.Sprintf("since %s (fetches ask)", s.PrivateSince.Local().Format(time.DateTime))
			}
			title := "-"
			if s.Title != "" {
				title = termtext.Line(s.Title) // the owner's words, as typed
			}
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\n", termtext.Line(s.ID), s.Turns, s.LastAt.Local().Format(time.DateTime), private, title)
		},
	})
}
