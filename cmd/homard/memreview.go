package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/memreview"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/termtext"
)

// memoryReviewNow makes a review now and shows it.
func (c *cli) memoryReviewNow(ctx context.Context, r *app.Runtime) error {
	rev, err := r.Owner.MemoryReviewRun(ctx)
	switch {
	case errors.Is(err, memreview.ErrTooFew):
		fmt.Fprintln(c.stdout, memreview.ErrorText(c.say, err))
		return nil
	case err != nil && len(rev.Proposals) == 0:
		if me := (*memreview.ModelError)(nil); errors.As(err, &me) {
			return errors.New(memreview.ErrorText(c.say, err))
		}
		return err
	case err != nil:
		fmt.Fprintln(c.stderr, termtext.Line(memreview.ErrorText(c.say, err)))
	}
	if len(rev.Proposals) == 0 {
		fmt.Fprintln(c.stdout, memreview.Nothing(c.say))
		if rev.Dropped > 0 {
			fmt.Fprintln(c.stdout, memreview.Dropped(c.say, rev.Dropped))
		}
		return nil
	}
	return c.printMemoryReview(ctx, r, rev)
}

// showMemoryReview prints the open review, if one waits.
func (c *cli) showMemoryReview(ctx context.Context, r *app.Runtime) error {
	rev, err := r.Owner.MemoryReviewOpen(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(c.stdout)
	return c.printMemoryReview(ctx, r, rev)
}

// printMemoryReview prints rev as its card reads, through termtext: its
// texts are the model's and the memory's.
func (c *cli) printMemoryReview(ctx context.Context, r *app.Runtime, rev store.MemoryReview) error {
	units, _, err := r.Owner.MemoryList(ctx)
	if err != nil {
		return err
	}
	text, _ := memreview.Card(c.say, rev, units)
	fmt.Fprint(c.stdout, termtext.Visible(text))
	return nil
}

// memoryApproveCmd is `homard memory review approve N|all`.
func (c *cli) memoryApproveCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "approve N|all", // lang:en
		Short:   lang.N("Apply a proposal of the memory review (or all of them)"),
		Example: "  homard memory review approve 2\n  homard memory review approve all", // lang:en
	}
	return c.runtimeCmd(cmd, cobra.ExactArgs(1), func(ctx context.Context, r *app.Runtime, args []string) error {
		n, err := proposalArg(c.say, args[0])
		if err != nil {
			return err
		}
		return c.answerMemoryReview(ctx, r, n, false)
	})
}

// proposalArg reads N or "all" (0).
func proposalArg(say lang.Printer, s string) (int, error) {
	if s == "all" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, usageErr("%s", memreview.BadNumber(say, s))
	}
	return n, nil
}

// answerMemoryReview approves or dismisses proposal n (0: all pending)
// and shows the review as it is then.
func (c *cli) answerMemoryReview(ctx context.Context, r *app.Runtime, n int, dismiss bool) error {
	rev, err := r.Owner.MemoryReviewAnswer(ctx, n, dismiss)
	if errors.Is(err, memreview.ErrNoReview) || errors.Is(err, memreview.ErrProposal) {
		return usageErr("%s", memreview.ErrorText(c.say, err))
	}
	if err != nil {
		return err
	}
	for _, p := range rev.Proposals {
		if p.Status == memreview.Stale && (n == 0 || p.N == n) {
			fmt.Fprintln(c.stderr, memreview.StaleNote(c.say, p.N))
		}
	}
	return c.printMemoryReview(ctx, r, rev)
}
