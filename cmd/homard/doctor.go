package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) doctorCmd() *cobra.Command {
	var ack, offline, asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: lang.N("Check the config, the model, the database, the audit chain and the workspace roots"),
		Long: lang.N(`doctor checks the config, the model (its key is set or in the vault, its
endpoint answers and takes the key; --offline skips the network), the
database, the audit chain, the workspace roots, the sandbox, and what the
last start recovered (tool runs a stopped homard left running, stray temp
files). It exits 1 when a check fails; --json prints the checks as JSON.

When homard finds its database or its audit log damaged it refuses every
action with side effects (reads go on) until you have looked: run doctor to
see what is wrong, keep a copy of the data folder if you want to
investigate, then run 'homard doctor --ack' to accept the records as they
are and allow side effects again.`),
	}
	cmd.Flags().BoolVar(&offline, "offline", false, lang.N("skip the checks that use the network (the model endpoint)"))
	jsonFlag(cmd, &asJSON, lang.N("print the checks as JSON: {checks: [{name, status (ok, fail, info), detail}], failed}"))
	cmd.Flags().BoolVar(&ack, "ack", false, lang.N("accept homard's records as they are after a problem doctor reported, and allow side effects again"))
	return leafCmd(cmd, cobra.NoArgs, func(ctx context.Context, _ []string) error {
		p, err := c.paths()
		if err != nil {
			return err
		}
		storeURL := os.Getenv(config.StoreEnv)
		if ack {
			problem, err := app.Acknowledge(ctx, p, storeURL)
			switch {
			case errors.Is(err, app.ErrNothingToAck):
				c.say.Fprintln(c.stdout, "nothing to acknowledge: no problem is holding side effects")
			case err != nil:
				return err
			default:
				c.say.Fprintf(c.stdout, "acknowledged: %s\nside effects are allowed again\n", termtext.Line(problem))
			}
		}
		checks := app.Doctor(ctx, p, app.DoctorOptions{Offline: offline, StoreURL: storeURL})
		failed := 0
		report := doctorReport{Checks: []doctorCheck{}}
		for _, ch := range checks {
			mark, status := "ok  ", "ok"
			switch {
			case ch.Info:
				mark, status = "--  ", "info"
			case !ch.OK:
				mark, status = "FAIL", "fail"
				failed++
			}
			if asJSON {
				report.Checks = append(report.Checks, doctorCheck{Name: ch.Name, Status: status, Detail: ch.Detail})
				continue
			}
			// A detail names paths (roots, the home), may quote a
			// config value or a provider's error message.
			fmt.Fprintf(c.stdout, "%s %-10s %s\n", mark, termtext.Line(ch.Name), termtext.Line(ch.Detail))
		}
		if asJSON {
			report.Failed = failed
			if err := writeJSON(c.stdout, report); err != nil { // details quote provider errors
				return err
			}
		}
		if failed > 0 {
			return &exitError{code: exitFailure, err: c.say.Errorf("%d check(s) failed", failed)}
		}
		return nil
	})
}

// doctorReport is what `homard doctor --json` prints.
type doctorReport struct {
	Checks []doctorCheck `json:"checks"`
	Failed int           `json:"failed"`
}

// doctorCheck is one check: status is "ok", "fail" or "info" (not a
// failure, worth knowing).
type doctorCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}
