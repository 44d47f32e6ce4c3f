package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/split"
	"github.com/homard/homard/internal/termtext"
)

// splitFlags are run's flags for --split.
type splitFlags struct {
	on       bool
	planHash string
	code     string
}

// runSplit runs task as a planner and workers (internal/split): the plan
// is shown on stderr and approved at the terminal, or with --plan-hash
// for exactly the plan a previous run showed; a plan that lets your data
// reach a host is high risk, and with permissions.totp it needs a code.
func (c *cli) runSplit(ctx context.Context, r *app.Runtime, task string, f splitFlags, ask func(context.Context, channel.Card) (channel.Choice, error)) error {
	approve := func(ctx context.Context, p split.Plan) error {
		// The plan is the planner's text: shown through the one printer.
		fmt.Fprintf(c.stderr, "plan:\n%s\n", termtext.Visible(p.String()))
		hash := p.Hash()
		switch {
		case f.planHash != "":
			if !strings.HasPrefix(hash, strings.ToLower(f.planHash)) || len(f.planHash) < 12 {
				return c.say.Errorf("%w: --plan-hash %s is not this plan's (%s); the planner wrote another plan",
					split.ErrNotApproved, termtext.Line(f.planHash), hash[:12])
			}
		case c.interactive():
			fmt.Fprint(c.stderr, c.say.T("run this plan? [y/N] "))
			line, _ := bufio.NewReader(c.stdin).ReadString('\n')
			if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
				return split.ErrNotApproved
			}
		default:
			c.say.Fprintf(c.stdout, "not run: approve exactly this plan with\n  homard run --split %s --plan-hash %s\n",
				quoteArg(task), hash[:12])
			return split.ErrNotApproved
		}
		risk := p.Risk()
		if !r.Owner.NeedsCodeAt(risk, p.Reach()) {
			return nil
		}
		code := f.code
		if code == "" && c.interactive() {
			fmt.Fprint(c.stderr, c.say.T("code from your authenticator app: "))
			line, _ := bufio.NewReader(c.stdin).ReadString('\n')
			code = strings.TrimSpace(line)
		}
		if code == "" {
			return c.say.Errorf("%w: the plan is %s risk, class %s, and permissions.totp asks for a code: add --code CODE", channel.ErrCodeNeeded, risk, p.Reach())
		}
		return r.Owner.CheckCode(ctx, "the plan", code) // lang:en: named in an English error
	}
	res, err := r.Split(ctx, app.SplitRequest{
		Task: task, Ask: ask, Approve: approve,
		OnValue: func(v split.Value) {
			if v.OK {
				fmt.Fprintf(c.stderr, "%s: %s\n", termtext.Line(v.Item), termtext.Line(v.Text))
			} else {
				c.say.Fprintf(c.stderr, "%s: no value (%s)\n", termtext.Line(v.Item), termtext.Line(v.Why))
			}
		},
	})
	if errors.Is(err, split.ErrNotApproved) {
		if err != split.ErrNotApproved { // it says why
			fmt.Fprintln(c.stderr, "homard:", err)
		}
		return &exitError{code: exitPending}
	}
	if err != nil {
		return err
	}
	if res.Question != "" {
		return c.say.Errorf("the planner needs more before it can plan: %s (run again with a clearer task)", termtext.Line(res.Question))
	}
	fmt.Fprintln(c.stdout, termtext.Visible(strings.TrimRight(res.Answer, "\n")))
	for _, v := range res.Values {
		if v.Artifact != "" {
			c.say.Fprintf(c.stdout, "\n— %s (as the worker wrote it; the planner did not read it) —\n%s\n", termtext.Line(v.Item), termtext.Visible(v.Artifact))
		}
	}
	return nil
}

// quoteArg quotes s for a shell command line to copy.
func quoteArg(s string) string {
	return "'" + strings.ReplaceAll(termtext.Line(s), "'", `'\''`) + "'"
}
