package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) policyCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "policy", Short: lang.N("See what a configuration change would do before you make it")}
	cmd.AddCommand(c.policyReplayCmd())
	return cmd
}

// replayJSON is `homard policy replay --json` (docs/JSON.md, "policy
// replay").
type replayJSON struct {
	Since    time.Time          `json:"since"`
	Replayed int                `json:"replayed"`
	Skipped  int                `json:"skipped"`
	Changes  []replayChangeJSON `json:"changes"`
}

type replayChangeJSON struct {
	Run     string         `json:"run"`
	Time    time.Time      `json:"time"`
	Tool    string         `json:"tool"`
	Session string         `json:"session"`
	Outcome string         `json:"outcome"`
	Plan    string         `json:"plan"`
	Before  replayDecision `json:"before"`
	After   replayDecision `json:"after"`
}

type replayDecision struct {
	Verdict string `json:"verdict"`
	Rule    string `json:"rule"`
	Reason  string `json:"reason"`
}

func (c *cli) policyReplayCmd() *cobra.Command {
	var proposed, since string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "replay --config NEW.toml", // lang:en
		Short: lang.N("Decide your recorded tool calls again under a proposed config, without running anything"),
		Long: lang.N(`Every tool call recorded since --since is decided twice — under the config in
force and under --config — from its stored plan, and the calls whose verdict
would change are listed: calls that ran and would now ask or be refused, and
calls that asked and would now run. Nothing runs and nothing is changed.

What is replayed is the permission mode, the operator rules, the guest tools,
commands.unknown and permissions.private_egress. Not replayed: grants and
approvals (neither side uses them), and the hard limits a tool checks while
planning (paths, sensitive files, egress): a changed [files] or [egress]
section is not judged here.`),
		/* lang:en */ Example: `  cp ~/.config/homard/config.toml /tmp/new.toml && $EDITOR /tmp/new.toml
  homard policy replay --config /tmp/new.toml
  homard policy replay --config /tmp/new.toml --since 30d --json`,
	}
	cmd.Flags().StringVar(&proposed, "config", "", lang.N("the proposed config.toml to replay against (required)"))
	cmd.Flags().StringVar(&since, "since", "7d", lang.N("how far back: 7d, 36h, or a date (2026-12-01)"))
	jsonFlag(cmd, &asJSON, lang.N("print JSON (docs/JSON.md)"))
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		if proposed == "" {
			return usage(c.say.Errorf("--config NEW.toml is required: the configuration to replay against"))
		}
		from, err := c.parseSince(since, time.Now())
		if err != nil {
			return err
		}
		cfg, err := config.Load(proposed)
		if err != nil {
			return err
		}
		res, err := r.Replay(ctx, cfg, from)
		if err != nil {
			return err
		}
		if asJSON {
			out := replayJSON{Since: from.UTC(), Replayed: res.Replayed, Skipped: res.Skipped, Changes: []replayChangeJSON{}}
			for _, ch := range res.Changes {
				out.Changes = append(out.Changes, replayChangeJSON{Run: ch.Run, Time: ch.At.UTC(), Tool: ch.Tool, Session: ch.Session,
					Outcome: ch.Outcome, Plan: ch.Display,
					Before: replayDecision{string(ch.Before.Verdict), ch.Before.Rule, ch.Before.Reason},
					After:  replayDecision{string(ch.After.Verdict), ch.After.Rule, ch.After.Reason}})
			}
			return writeJSON(c.stdout, out) // plans and reasons quote what the model proposed
		}
		c.say.Fprintf(c.stdout, "replayed %d calls since %s (%d skipped: plan unreadable): %d would change under %s\n",
			res.Replayed, from.Local().Format(time.DateTime), res.Skipped, len(res.Changes), termtext.Line(proposed))
		if len(res.Changes) == 0 {
			return nil
		}
		tw := c.table("RUN\tTIME\tTOOL\tNOW\tPROPOSED\tBY\tPLAN")
		for _, ch := range res.Changes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ch.Run, ch.At.Local().Format(time.DateTime), termtext.Line(ch.Tool),
				ch.Before.Verdict, ch.After.Verdict, termtext.Line(ch.After.Rule), termtext.Line(firstLine(ch.Display)))
		}
		return tw.Flush()
	})
}
