package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) providerCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "provider", Short: lang.N("Check the configured model endpoint")}
	cmd.AddCommand(c.providerTestCmd())
	return cmd
}

func (c *cli) providerTestCmd() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "test",
		Short: lang.N("Send one tiny request (with one tool definition) and say what is wrong, if anything"),
		Long: lang.N(`test sends one short request to the model endpoint in config.toml, with one
tool definition so that a server without tool-call support is caught. It
tells apart an unreachable server, a refused key (401/403), an unknown model
name and a rejected request. The key is read from the environment variable
named by model.api_key_env and never printed. The whole test gives up after
--timeout (default 60s) and says so.`),
	}
	cmd.Flags().DurationVar(&timeout, "timeout", app.ProviderTestTimeout, lang.N("give up after `DURATION` (the whole test: connect, answer)"))
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		if timeout <= 0 {
			return usage(c.say.Errorf("--timeout %s: want a positive duration such as 60s", timeout))
		}
		rep, err := r.ProviderTestWithin(ctx, timeout)
		c.say.Fprintf(c.stdout, "provider %s · %s · model %s\n", termtext.Line(rep.Provider), termtext.Line(rep.BaseURL), termtext.Line(rep.Model))
		if err != nil {
			return err
		}
		// The reply is the model's text: the one printer, between quotes.
		c.say.Fprintf(c.stdout, "ok in %s · reply \"%s\" · tokens in %d (cached %d), out %d\n",
			rep.Latency.Round(time.Millisecond), termtext.Line(firstLine(rep.Reply)), rep.Usage.Input, rep.Usage.Cached, rep.Usage.Output)
		return nil
	})
}
