package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) checkpointCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "List the saved copies of files tools replaced, and roll one back",
		Long: `Before write_file or edit_file replaces a file, homard keeps a checkpoint of
the old content (bounded in number and size; the oldest are pruned).
A command's applied changes are one checkpoint: rolling it back removes
what the command created and restores what it replaced or deleted.
rollback first shows a preview; to proceed, pass the saved content's hash
(or its first 8+ characters) with --hash, so you roll back exactly what you saw.`,
	}
	cmd.AddCommand(c.checkpointListCmd(), c.checkpointRollbackCmd())
	return cmd
}

func (c *cli) checkpointListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List checkpoints, newest first",
		Args:  cobra.NoArgs,
		RunE: c.withRuntime(func(cmd *cobra.Command, r *app.Runtime, _ []string) error {
			cps, err := r.Workspace.Checkpoints()
			if err != nil {
				return err
			}
			if asJSON {
				out := make([]checkpointJSON, 0, len(cps))
				for _, cp := range cps {
					out = append(out, checkpointOut(cp))
				}
				return writeJSON(c.stdout, out)
			}
			if len(cps) == 0 {
				fmt.Fprintln(c.stdout, "no checkpoints")
				return nil
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTIME\tROOT\tPATH\tBYTES\tHASH")
			for _, cp := range cps {
				// Rel is a path the model chose.
				where := termtext.Line(cp.Rel)
				if cp.Paths > 0 { // a change set: what made it, from its description
					where = "(" + termtext.Line(strings.TrimPrefix(cp.Target, cp.Root+": ")) + ")"
					if cp.Pinned {
						where += " pinned"
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", termtext.Line(cp.ID), cp.Time.Local().Format(time.DateTime),
					termtext.Line(cp.Root), where, cp.Size, termtext.Line(cp.SHA256[:12]))
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array (schema: docs/JSON.md)")
	return cmd
}

func (c *cli) checkpointRollbackCmd() *cobra.Command {
	var hash string
	cmd := &cobra.Command{
		Use:   "rollback ID [--hash HASH]",
		Short: "Preview a rollback; with --hash, restore the saved content",
		Args:  cobra.ExactArgs(1),
		RunE: c.withRuntime(func(cmd *cobra.Command, r *app.Runtime, args []string) error {
			pv, err := r.Owner.RollbackPreview(args[0])
			if err != nil {
				return err
			}
			// The preview names a path the model chose and shows a diff of
			// content it wrote.
			fmt.Fprintln(c.stdout, termtext.Visible(pv.String()))
			if hash == "" {
				fmt.Fprintf(c.stdout, "\nto restore, run: homard checkpoint rollback %s --hash %s\n", termtext.Line(args[0]), pv.SavedSHA256()[:12])
				return nil
			}
			if _, err := r.Owner.Rollback(cmd.Context(), args[0], hash); err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "restored %s from checkpoint %s\n", termtext.Line(pv.Checkpoint.Target), termtext.Line(args[0]))
			return nil
		}),
	}
	cmd.Flags().StringVar(&hash, "hash", "", "the saved content's SHA-256 (8+ leading characters) shown by the preview")
	return cmd
}
