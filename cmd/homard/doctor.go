package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) doctorCmd() *cobra.Command {
	var ack bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the config, the database, the audit chain and the workspace roots",
		Long: `doctor checks the config, the database, the audit chain, the workspace
roots, the sandbox, and what the last start recovered (tool runs a stopped
homard left running, stray temp files).

When homard finds its database or its audit log damaged it refuses every
action with side effects (reads go on) until you have looked: run doctor to
see what is wrong, keep a copy of the data folder if you want to
investigate, then run 'homard doctor --ack' to accept the records as they
are and allow side effects again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := c.paths()
			if err != nil {
				return err
			}
			if ack {
				problem, err := app.Acknowledge(cmd.Context(), p)
				switch {
				case errors.Is(err, app.ErrNothingToAck):
					fmt.Fprintln(c.stdout, "nothing to acknowledge: no problem is holding side effects")
				case err != nil:
					return err
				default:
					fmt.Fprintf(c.stdout, "acknowledged: %s\nside effects are allowed again\n", termtext.Line(problem))
				}
			}
			checks := app.Doctor(cmd.Context(), p)
			failed := 0
			for _, ch := range checks {
				mark := "ok  "
				switch {
				case ch.Info:
					mark = "--  "
				case !ch.OK:
					mark = "FAIL"
					failed++
				}
				// A detail names paths (roots, the home) and may quote a
				// config value.
				fmt.Fprintf(c.stdout, "%s %-10s %s\n", mark, termtext.Line(ch.Name), termtext.Line(ch.Detail))
			}
			if failed > 0 {
				return &exitError{code: exitFailure, err: fmt.Errorf("%d check(s) failed", failed)}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&ack, "ack", false, "accept homard's records as they are after a problem doctor reported, and allow side effects again")
	return cmd
}
