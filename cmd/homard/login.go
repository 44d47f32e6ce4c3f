package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) loginCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "login",
		Short: lang.N("Print a fresh one-time login URL for the running homard serve"),
		Long: lang.N(`login asks the homard serve running on this home for a new one-time login
URL, as serve printed when it started: open it once in your browser within
10 minutes. No restart, and browsers already logged in stay logged in.

It works on the machine running serve, as the account that runs it: it
authenticates with the key in serve.json (DATA/serve.json, mode 0600).
A serve started with --tls-cert is not reached; restart it instead.`),
		/* lang:en */ Example: "  homard login\n  xdg-open \"$(homard login)\"",
	}
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		u, exp, err := r.LoginLink(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, termtext.Line(u))
		c.say.Fprintf(c.stderr, "open it once, before %s (single use)\n", exp.Local().Format(time.TimeOnly))
		return nil
	})
}
