package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) checkpointCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: lang.N("List the saved copies of files tools replaced, and roll one back"),
		Long: lang.N(`Before write_file or edit_file replaces a file, homard keeps a checkpoint of
the old content (bounded in number and size; the oldest are pruned).
A command's applied changes are one checkpoint: rolling it back removes
what the command created and restores what it replaced or deleted.
rollback first shows a preview; to proceed, pass the saved content's hash
(or its first 8+ characters) with --hash, so you roll back exactly what you saw.`),
	}
	cmd.AddCommand(c.checkpointListCmd(), c.checkpointRollbackCmd())
	return cmd
}

func (c *cli) checkpointListCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: lang.N("List checkpoints, newest first")}
	load := func(_ context.Context, r *app.Runtime) ([]app.Checkpoint, error) { return r.Workspace.Checkpoints() }
	return listCmd(c, cmd, lang.N("print a JSON array (schema: docs/JSON.md)"), load, listing[app.Checkpoint]{
		json:   jsonEach(checkpointOut),
		empty:  c.say.T("no checkpoints"),
		header: "ID\tTIME\tROOT\tPATH\tBYTES\tHASH",
		row: func(w io.Writer, cp app.Checkpoint) {
			// Rel is a path the model chose.
			where := termtext.Line(cp.Rel)
			if cp.Paths > 0 { // a change set: what made it, from its description
				where = "(" + termtext.Line(strings.TrimPrefix(cp.Target, cp.Root+": ")) + ")"
				if cp.Pinned {
					where += " pinned"
				}
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\n", termtext.Line(cp.ID), cp.Time.Local().Format(time.DateTime),
				termtext.Line(cp.Root), where, cp.Size, termtext.Line(cp.SHA256[:12]))
		},
	})
}

func (c *cli) checkpointRollbackCmd() *cobra.Command {
	var hash string
	cmd := &cobra.Command{Use: "rollback ID [--hash HASH]", Short: lang.N("Preview a rollback; with --hash, restore the saved content")} // lang:en
	cmd.Flags().StringVar(&hash, "hash", "", lang.N("the saved content's SHA-256 (8+ leading characters) shown by the preview"))
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		pv, err := r.Owner.RollbackPreview(args[0])
		if err != nil {
			return err
		}
		// The preview names a path the model chose and shows a diff of
		// content it wrote.
		fmt.Fprintln(c.stdout, termtext.Visible(pv.String()))
		if hash == "" {
			c.say.Fprintf(c.stdout, "\nto restore, run: homard checkpoint rollback %s --hash %s\n", termtext.Line(args[0]), pv.SavedSHA256()[:12])
			return nil
		}
		if _, err := r.Owner.Rollback(ctx, args[0], hash); err != nil {
			return err
		}
		c.say.Fprintf(c.stdout, "restored %s from checkpoint %s\n", termtext.Line(pv.Checkpoint.Target), termtext.Line(args[0]))
		return nil
	})
}
