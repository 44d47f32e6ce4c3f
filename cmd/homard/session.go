package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) sessionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "List your conversations and whether they have read your data",
		Long: `A session is one conversation: homard run --session ID, a chat, a tab of
the web UI. Its history is replayed to the model on every turn.

Once a session has read your private data (a file, command output, a
memory), its web requests ask for your approval in autopilot
(permissions.private_egress): the model could carry that data out in a URL.
Start a new session for work that does not need your files.`,
	}
	cmd.AddCommand(c.sessionListCmd())
	return cmd
}

func (c *cli) sessionListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List sessions, most recently active first",
		Args:  cobra.NoArgs,
		Example: `  homard session list
  homard session list --json | jq -r '.[] | select(.private_since == null) | .id'`,
		RunE: c.withRuntime(func(cmd *cobra.Command, r *app.Runtime, _ []string) error {
			list, err := r.Owner.Sessions(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				out := make([]sessionJSON, 0, len(list))
				for _, s := range list {
					out = append(out, sessionOut(s))
				}
				return writeJSON(c.stdout, out)
			}
			if len(list) == 0 {
				fmt.Fprintln(c.stdout, `no sessions yet; start one with: homard run "…" --session NAME`)
				return nil
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SESSION\tTURNS\tLAST ACTIVE\tHAS READ YOUR DATA\tTITLE")
			for _, s := range list {
				private := "no"
				if !s.PrivateSince.IsZero() {
					private = "since " + s.PrivateSince.Local().Format(time.DateTime) + " (fetches ask)"
				}
				title := "-"
				if s.Title != "" {
					title = termtext.Line(s.Title) // the owner's words, as typed
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", termtext.Line(s.ID), s.Turns, s.LastAt.Local().Format(time.DateTime), private, title)
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array (schema: docs/JSON.md)")
	return cmd
}
