package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
)

func (c *cli) totpCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "totp",
		Short: lang.N("Set up the authenticator app whose codes approve what you set aside"),
		Long: lang.N(`A second factor for approvals: with permissions.totp = "high" (or
"medium", "critical"), approving a card of that risk or higher needs a
6-digit code from an authenticator app (any TOTP app: Aegis, Google
Authenticator, 1Password…), so a stolen API token or a terminal left open is
not enough to approve it.

  homard totp setup      shows a QR code and an otpauth:// link once; scan it
  homard totp confirm N  turns it on with the first code the app shows
  homard totp status     says whether it is on; never shows the secret again

A code works once. Five wrong codes in 15 minutes refuse every code for the
rest of those 15 minutes. Chat buttons cannot carry a code: approve such
cards in the web UI or with "homard approval approve ID --code N".`),
	}
	cmd.AddCommand(c.totpSetupCmd(), c.totpConfirmCmd(), c.totpStatusCmd(), c.totpRemoveCmd())
	return cmd
}

func (c *cli) totpSetupCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{Use: "setup", Short: lang.N("Make a new secret and show it once as a QR code and a link")}
	cmd.Flags().BoolVar(&force, "force", false, lang.N("replace the authenticator already set up (its codes stop working)"))
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		e, err := r.Owner.TOTP().Setup(ctx, r.Config.Owner, force)
		if err != nil {
			return err
		}
		c.say.Fprintf(c.stdout, "Scan this with your authenticator app (it is shown once, never again):\n\n%s\n%s\n\n", e.QR, e.URI)
		if !c.interactive() {
			c.say.Fprintln(c.stdout, "then turn it on with the code the app shows: homard totp confirm CODE")
			return nil
		}
		fmt.Fprint(c.stderr, c.say.T("code the app shows now: "))
		line, _ := bufio.NewReader(c.stdin).ReadString('\n')
		if err := r.Owner.TOTP().Confirm(ctx, r.Config.Owner, strings.TrimSpace(line)); err != nil {
			return c.say.Errorf("%w (the secret is kept: try again with `homard totp confirm CODE`)", err)
		}
		c.say.Fprintln(c.stdout, "authenticator on")
		return nil
	})
}

func (c *cli) totpConfirmCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "confirm CODE", Short: lang.N("Turn the authenticator on with the first code it shows")} // lang:en
	return c.argCmd(cmd, func(ctx context.Context, r *app.Runtime, code string) (string, error) {
		return c.say.T("authenticator on"), r.Owner.TOTP().Confirm(ctx, r.Config.Owner, code)
	})
}

func (c *cli) totpStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{Use: "status", Short: lang.N("Say whether the authenticator is on (never its secret)")}
	jsonFlag(cmd, &asJSON, lang.N("print the state as JSON"))
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		st, err := r.Owner.TOTP().Status(ctx, r.Config.Owner)
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(c.stdout, st)
		}
		when := func(t time.Time) string { return t.Local().Format(time.DateTime) }
		switch st.State {
		case "none":
			c.say.Fprintln(c.stdout, "no authenticator: homard totp setup")
		case "pending":
			c.say.Fprintf(c.stdout, "set up %s, not on yet: homard totp confirm CODE\n", when(st.Created))
		default:
			c.say.Fprintf(c.stdout, "on since %s", when(st.Activated))
			if !st.LastUsed.IsZero() {
				c.say.Fprintf(c.stdout, ", last code %s", when(st.LastUsed))
			}
			fmt.Fprintln(c.stdout)
		}
		c.say.Fprintf(c.stdout, "approvals that need a code: %s\n", c.codeNeeds(r.Config.Permissions.TOTP))
		return nil
	})
}

// codeNeeds says which approvals permissions.totp sets aside.
func (c *cli) codeNeeds(level string) string {
	if level == "off" {
		return c.say.T(`none (permissions.totp = "off")`)
	}
	return c.say.Sprintf(`%[1]s risk and higher (permissions.totp = "%[1]s")`, level)
}

func (c *cli) totpRemoveCmd() *cobra.Command {
	var code string
	cmd := &cobra.Command{Use: "remove --code CODE", Short: lang.N("Remove the authenticator (a code from it is needed)")} // lang:en
	cmd.Flags().StringVar(&code, "code", "", lang.N("a code from the authenticator being removed"))
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		if err := r.Owner.TOTP().Remove(ctx, r.Config.Owner, code); err != nil {
			return err
		}
		c.say.Fprintln(c.stdout, "authenticator removed")
		if r.Config.Permissions.TOTP != "off" {
			c.say.Fprintf(c.stdout, "permissions.totp is %q: approvals of that risk now cannot be given until you set one up again\n", r.Config.Permissions.TOTP)
		}
		return nil
	})
}
