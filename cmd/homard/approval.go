package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

func (c *cli) approvalCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approval",
		Short: lang.N("List, inspect, approve or deny calls waiting for you"),
		Long: lang.N(`An approval is bound to the tool, the SHA-256 of the exact canonical plan,
the owner and the session, and it expires. It is single use. Scopes:

  once     this exact plan, one run
  session  this tool on the same paths (e.g. notes/**) for this session
  always   this tool on the same paths in any session, until it expires

Critical actions can only be approved once. After approving, run the same
call again in the same session (a model retries by itself).

A card shows what the call does: a write's diff against the file, a
command's exact argv, a fetch's URL (show ID --full for a long one).
A session or always approval leaves a grant: list them with 'grants',
end one with 'revoke ID'. See docs/APPROVALS.md.`),
	}
	cmd.AddCommand(c.approvalListCmd(), c.approvalShowCmd(), c.approvalApproveCmd(), c.approvalDenyCmd(),
		c.approvalGrantsCmd(), c.approvalRevokeCmd(), c.approvalSuggestCmd())
	return cmd
}

func (c *cli) approvalListCmd() *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{Use: "list", Short: lang.N("List pending approvals (--all for every state)")}
	cmd.Flags().BoolVar(&all, "all", false, lang.N("include approved, denied, consumed and expired approvals"))
	jsonFlag(cmd, &asJSON, lang.N("print JSON"))
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		status := "pending"
		if all {
			status = ""
		}
		list, err := r.Owner.Approvals(ctx, status)
		if err != nil {
			return err
		}
		// "no approvals " with --all, as Println spaced the empty word before.
		empty := c.say.T("no approvals pending")
		if all {
			empty = c.say.T("no approvals ")
		}
		return listing[app.Approval]{
			json:   jsonEach(func(a app.Approval) app.ApprovalJSON { return app.NewApprovalJSON(a, false) }),
			empty:  empty,
			header: "ID\tSTATUS\tTOOL\tRISK\tSESSION\tHASH\tEXPIRES\tPLAN",
			row: func(w io.Writer, a app.Approval) {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Line(a.ID), a.Status, termtext.Line(a.Tool), a.Risk, termtext.Line(a.Session),
					a.PlanHash[:12], a.ExpiresAt.Local().Format(time.DateTime), termtext.Line(firstLine(a.Display)))
			},
		}.print(c, list, asJSON)
	})
}

func (c *cli) approvalShowCmd() *cobra.Command {
	var full bool
	cmd := &cobra.Command{Use: "show ID", Short: lang.N("Show one approval card: the exact plan, what it does (a diff, an argv), its hash, who asked, when it expires")} // lang:en
	load := func(ctx context.Context, r *app.Runtime, id string) (app.Approval, error) {
		return r.Owner.Approval(ctx, id)
	}
	toJSON := func(a app.Approval) app.ApprovalJSON { return app.NewApprovalJSON(a, true) }
	showCmd(c, cmd, lang.N("print JSON (docs/JSON.md), with the whole preview"), load, toJSON, func(w io.Writer, a app.Approval) {
		// Every field may hold text the model chose (the tool name, the
		// plan, a reason quoting it): each goes through the one printer.
		line := termtext.Line
		c.say.Fprintf(w, "approval %s  [%s]\n", line(a.ID), a.Status)
		c.say.Fprintf(w, "tool      %s (risk %s)\n", line(a.Tool), a.Risk)
		c.say.Fprintf(w, "owner     %s   session %s\n", line(a.Owner), line(a.Session))
		c.say.Fprintf(w, "plan hash %s\n", line(a.PlanHash))
		if a.Reason != "" {
			c.say.Fprintf(w, "why       %s (%s)\n", line(a.Reason), line(a.Rule))
		}
		if cov := app.NewApprovalJSON(a, false).Covers; cov != "" {
			c.say.Fprintf(w, "session   or always would also let run unasked: %s\n", line(cov))
		}
		c.say.Fprintf(w, "asked     %s\n", c.stamp(a.CreatedAt))
		c.say.Fprintf(w, "expires   %s\n", c.stamp(a.ExpiresAt))
		if a.DecidedBy != "" {
			c.say.Fprintf(w, "decided   %s by %s (scope %s)\n", c.stamp(a.DecidedAt), line(a.DecidedBy), a.Scope)
		}
		fmt.Fprintf(w, "\n%s\n", termtext.Visible(a.Display))
		if a.Preview != "" {
			c.say.Fprintln(w, "\n─ what it does ─")
			c.printPreview(w, a.Preview, previewOpts{colour: isTerminal(w), full: full, id: a.ID})
		}
	})
	cmd.Flags().BoolVar(&full, "full", false, lang.N("show the whole preview (a long diff is cut at 200 lines otherwise)"))
	return cmd
}

func (c *cli) approvalGrantsCmd() *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "grants",
		Short: lang.N("List standing session and always approvals (grants)"),
		Long: lang.N(`A session or always approval leaves a grant: later calls it covers run
without asking until it expires. End one with: homard approval revoke ID`),
	}
	cmd.Flags().BoolVar(&all, "all", false, lang.N("include revoked and expired grants"))
	jsonFlag(cmd, &asJSON, lang.N("print JSON (docs/JSON.md)"))
	return c.runtimeCmd(cmd, cobra.NoArgs, func(ctx context.Context, r *app.Runtime, _ []string) error {
		list, err := r.Owner.Grants(ctx, all)
		if err != nil {
			return err
		}
		now := time.Now()
		return listing[app.Grant]{
			json:   jsonEach(func(g app.Grant) app.GrantJSON { return app.NewGrantJSON(g, now) }),
			empty:  c.say.T("no active grants; a session or always approval makes one"),
			header: "ID\tTOOL\tSCOPE\tCOVERS\tUP TO RISK\tCREATED\tEXPIRES\tSTATE", // lang:en: column names (tabwriter aligns bytes, not wide characters)
			row: func(w io.Writer, g app.Grant) {
				j := app.NewGrantJSON(g, now)
				covers := strings.Join(j.Patterns, " ")
				if j.Template != "" {
					covers = j.Template
				}
				if covers == "" {
					covers = c.say.T("(calls without a path)")
				}
				scope := j.Scope
				if j.Session != "" {
					scope += " " + j.Session
				}
				state := "active"
				switch {
				case !g.RevokedAt.IsZero():
					state = "revoked"
				case !j.Active:
					state = "expired"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Line(j.ID), termtext.Line(j.Tool), termtext.Line(scope),
					termtext.Line(covers), j.MaxRisk, g.CreatedAt.Local().Format(time.DateTime), g.ExpiresAt.Local().Format(time.DateTime), state)
			},
		}.print(c, list, asJSON)
	})
}

func (c *cli) approvalRevokeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "revoke ID", // lang:en
		Short: lang.N("End a grant now: the calls it covered ask again"),
		/* lang:en */ Example: `  homard approval grants
  homard approval revoke gr_1a2b3c4d5e6f7a8b`,
	}
	return c.argCmd(cmd, func(ctx context.Context, r *app.Runtime, id string) (string, error) {
		g, err := r.Owner.RevokeGrant(ctx, id)
		return c.say.Sprintf("revoked %s (%s, %s); the calls it covered ask again", termtext.Line(g.ID), termtext.Line(g.Tool), g.Scope), err
	})
}

func (c *cli) approvalApproveCmd() *cobra.Command {
	var scope, code string
	cmd := &cobra.Command{
		Use:   "approve ID", // lang:en
		Short: lang.N("Approve a pending call (once, for this session, or always)"),
		Long: lang.N(`Approve a pending call (once, for this session, or always).

With permissions.totp set, approving a card of that risk or higher needs a
code from your authenticator app (homard totp setup): give it with --code,
or type it when asked at a terminal. A code works once.`),
		/* lang:en */ Example: `  homard approval approve ap_1a2b3c4d5e6f7a8b
  homard approval approve ap_1a2b3c4d5e6f7a8b --scope session
  homard approval approve ap_1a2b3c4d5e6f7a8b --code 492039`,
	}
	cmd.Flags().StringVar(&scope, "scope", "once", lang.N("once, session or always"))
	cmd.Flags().StringVar(&code, "code", "", lang.N("a code from your authenticator app, for a card that needs one (permissions.totp)"))
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		a, err := r.Owner.ApproveCode(ctx, args[0], scope, code)
		if errors.Is(err, channel.ErrCodeNeeded) && code == "" && c.interactive() {
			fmt.Fprint(c.stderr, c.say.T("code from your authenticator app: "))
			line, _ := bufio.NewReader(c.stdin).ReadString('\n')
			a, err = r.Owner.ApproveCode(ctx, args[0], scope, strings.TrimSpace(line))
		}
		if err != nil {
			return err
		}
		c.say.Fprintf(c.stdout, "approved %s (%s, scope %s); run the same call again in session %s to execute it\n",
			termtext.Line(a.ID), termtext.Line(a.Tool), a.Scope, termtext.Line(a.Session))
		if si, ok := r.RunningServe(); ok {
			c.say.Fprintf(c.stdout, "homard serve (pid %d) is running: a turn there waiting on this card goes on by itself\n", si.PID)
		}
		return nil
	})
}

func (c *cli) approvalDenyCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "deny ID", Short: lang.N("Deny a pending call")} // lang:en
	return c.argCmd(cmd, func(ctx context.Context, r *app.Runtime, id string) (string, error) {
		return "denied " + termtext.Line(id), r.Owner.Deny(ctx, id)
	})
}

func firstLine(s string) string {
	for i, ch := range s {
		if ch == '\n' {
			return s[:i] + " …"
		}
	}
	if r := []rune(s); len(r) > 80 {
		return string(r[:77]) + "..."
	}
	return s
}

func (c *cli) approvalSuggestCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "suggest",
		Short: lang.N("Grants homard proposes from what you approved again and again (nothing is applied until you accept one)"),
		Long: lang.N(`When you approved the same tool on the same folder or host at least 3 times
in the last 7 days, homard proposes the grant that would have covered those
calls: as narrow as they were (a file's folder, a web page's exact origin),
no riskier than the riskiest of them, and expiring after 30 days. Nothing
changes until you accept one. Never proposed: critical calls, commands
(approve a command for the session on its card), calls without a path or
host, and what an always grant already covers.`),
		/* lang:en */ Example: `  homard approval suggest
  homard approval suggest accept 1
  homard approval suggest --json`,
	}
	cmd.AddCommand(c.approvalSuggestAcceptCmd())
	load := func(ctx context.Context, r *app.Runtime) ([]app.Suggestion, error) { return r.Owner.Suggestions(ctx) }
	n := 0 // the row's number, which `suggest accept N` takes (the command runs once)
	return listCmd(c, cmd, lang.N("print JSON"), load, listing[app.Suggestion]{
		json: func(items []app.Suggestion) any {
			out := make([]app.SuggestionJSON, 0, len(items))
			for i, s := range items {
				out = append(out, app.NewSuggestionJSON(i+1, s))
			}
			return out
		},
		empty:  c.say.T("no suggestions: nothing was approved 3 times in 7 days on one folder or host"),
		header: "N\tID\tTOOL\tCOVERS\tUP TO RISK\tAPPROVED\tEXPIRES", // lang:en: column names (tabwriter aligns bytes, not wide characters)
		row: func(w io.Writer, s app.Suggestion) {
			n++
			c.say.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%d times in 7 days\tafter %s\n", n, s.ID, termtext.Line(s.Tool),
				termtext.Line(strings.Join(s.Patterns, " ")), s.MaxRisk, s.Count, c.say.Sprintf("%d days", int(app.SuggestTTL.Hours()/24)))
		},
	})
}

// approvalSuggestAcceptCmd is `approval suggest accept`.
func (c *cli) approvalSuggestAcceptCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "accept N|ID", // lang:en
		Short: lang.N("Make one suggestion a grant: an always approval of that scope, expiring after 30 days"),
		/* lang:en */ Example: `  homard approval suggest
  homard approval suggest accept 1`,
	}
	return c.argCmd(cmd, func(ctx context.Context, r *app.Runtime, ref string) (string, error) {
		g, err := r.Owner.AcceptSuggestion(ctx, ref)
		return c.say.Sprintf("granted %s: %s on %s, up to %s risk, until %s; end it with homard approval revoke %s",
			termtext.Line(g.ID), termtext.Line(g.Tool), termtext.Line(strings.Join(g.Patterns, " ")), g.MaxRisk,
			g.ExpiresAt.Local().Format(time.DateTime), termtext.Line(g.ID)), err
	})
}
