package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) channelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "channel",
		Short: lang.N("List the chat channels (Telegram, Discord, Feishu) and allow group chats"),
		Long: lang.N(`Chat channels run inside 'homard serve' when [channels.<platform>] enables
them (docs/CHANNELS.md). The bot answers its paired owners in direct chats
(homard pair), and in group chats only those allowed here or in the config's
groups list, and there only explicit mentions, as a guest.`),
	}
	cmd.AddCommand(c.channelListCmd(), c.channelAllowCmd(true), c.channelAllowCmd(false))
	return cmd
}

func (c *cli) channelListCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: lang.N("Show each chat channel: enabled, bot, owners, groups, state and last error")}
	load := func(ctx context.Context, r *app.Runtime) ([]app.ChannelStatus, error) { return r.Chats.List(ctx) }
	return listCmd(c, cmd, lang.N("print a JSON array"), load, listing[app.ChannelStatus]{
		header: "CHANNEL\tENABLED\tBOT\tOWNERS\tGROUPS\tSTATE\tLAST ERROR", // lang:en: column names (tabwriter aligns bytes, not wide characters)
		row: func(w io.Writer, s app.ChannelStatus) {
			bot, state, groups := "-", s.State, strings.Join(s.Groups, ",")
			if groups == "" {
				groups = "-"
			}
			if s.Bot != "" {
				bot = "@" + s.Bot
			}
			if state == "" {
				state = "-"
			}
			fmt.Fprintf(w, "%s\t%t\t%s\t%d\t%s\t%s\t%s\n", s.Channel, s.Enabled, termtext.Line(bot), s.Owners,
				termtext.Line(groups), state, termtext.Line(s.LastError))
		},
	})
}

func (c *cli) channelAllowCmd(allow bool) *cobra.Command {
	use, short, done := "allow", c.say.T("Let the bot answer mentions in a group chat, as a guest"), "allowed"
	if !allow {
		use, short, done = "deny", c.say.T("Stop answering in a group chat allowed with 'homard channel allow'"), c.say.T("no longer allowed")
	}
	cmd := &cobra.Command{
		Use:     use + " PLATFORM CHAT_ID", // lang:en
		Short:   short,
		Example: "  homard channel " + use + " telegram -1001234567890", // lang:en
	}
	// Group ids are often negative (Telegram's -100…): flags end at the
	// platform name, so the id is never read as one.
	cmd.Flags().SetInterspersed(false)
	return c.runtimeCmd(cmd, cobra.ExactArgs(2), func(ctx context.Context, r *app.Runtime, args []string) error {
		if err := r.Chats.Allow(ctx, args[0], args[1], allow); err != nil {
			return err
		}
		c.say.Fprintf(c.stdout, "%s group %s: %s\n", args[0], termtext.Line(args[1]), done)
		return nil
	})
}

// pairJSON is the first line `homard pair --json` prints (docs/JSON.md
// "## pair"), before it waits for the code to be used.
type pairJSON struct {
	Code      string    `json:"code"`
	ExpiresAt time.Time `json:"expires_at"`
}

func (c *cli) pairCmd() *cobra.Command {
	var asJSON, yes bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "pair " + strings.Join(config.PlatformNames(), "|"),
		Short: lang.N("Pair your chat account as this homard's owner with a one-time code"),
		Long: lang.N(`pair prints a one-time code (valid 10 minutes, single use; wrong codes
never spend it: an account that sends 5 wrong ones is no longer heard for
this pairing) and waits until you send "/pair CODE" to the bot in a direct chat.
It then shows which account used it and asks you to confirm; that account
becomes an owner. 'homard serve' must be running the channel.`),
		/* lang:en */ Example: `  homard pair telegram
  homard pair discord --json --yes     # scripts: {"code","expires_at"} first`,
	}
	f := cmd.Flags()
	jsonFlag(cmd, &asJSON, lang.N(`print {"code","expires_at"} as the first line`))
	f.BoolVar(&yes, "yes", false, lang.N("accept the account that used the code without asking"))
	f.DurationVar(&timeout, "timeout", 10*time.Minute, lang.N("how long to wait for the code (at most 10m)"))
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		pc, err := r.Chats.PairStart(ctx, args[0])
		if err != nil {
			return err
		}
		if asJSON {
			if err := writeJSONLine(c.stdout, pairJSON{Code: pc.Code, ExpiresAt: pc.ExpiresAt.UTC()}); err != nil {
				return err
			}
		} else {
			c.say.Fprintf(c.stdout, "Send this to the bot in a direct chat, within 10 minutes:\n\n  /pair %s\n\nWaiting…\n", pc.Code)
		}
		if timeout <= 0 || timeout > 10*time.Minute {
			timeout = 10 * time.Minute
		}
		wctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		use, err := r.Chats.PairWait(wctx, pc.ID, 500*time.Millisecond)
		if err := c.pairWaitErr(err, ctx, wctx, timeout, args[0]); err != nil {
			return err
		}
		c.say.Fprintf(c.stderr, "The code was used by %s account %s (%s).\n", args[0], termtext.Line(use.UserID), termtext.Line(use.Name))
		accept := yes
		if !yes {
			fmt.Fprint(c.stderr, c.say.T("Make this account an owner? [y/N] "))
			line, _ := bufio.NewReader(c.stdin).ReadString('\n')
			accept = strings.EqualFold(strings.TrimSpace(line), "y") || strings.EqualFold(strings.TrimSpace(line), "yes")
		}
		if err := r.Chats.PairConfirm(context.WithoutCancel(ctx), pc.ID, accept); err != nil {
			return err
		}
		if !accept {
			c.say.Fprintln(c.stdout, "not paired")
			return nil
		}
		c.say.Fprintf(c.stdout, "paired: %s account %s is an owner\n", args[0], termtext.Line(use.UserID))
		return nil
	})
}

// pairWaitErr is what `homard pair` reports for PairWait's err: nil when
// the code was used, a hint when no one used it before timeout (wait, the
// context PairWait got, ended while ctx, the command's, did not).
func (c *cli) pairWaitErr(err error, ctx, wait context.Context, timeout time.Duration, platform string) error {
	// Not errors.Is(err, wait.Err()): both are nil when the code was used
	// in time, and errors.Is(nil, nil) holds.
	if err != nil && wait.Err() != nil && ctx.Err() == nil {
		return c.say.Errorf("pair: no one used the code within %s; run `homard pair %s` again", timeout, platform)
	}
	return err
}
