package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) doctorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the config, the database, the audit chain and the workspace roots",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := c.paths()
			if err != nil {
				return err
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
}
