package owner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/store"
)

// A weekly proposal's statuses, as memreview stores them.
const (
	proposalPending = "pending"
	proposalStale   = "stale"
)

// WeeklyReview is the open weekly memory review with the texts of the
// units each proposal names as they read now.
func (a Admin) WeeklyReview(ctx context.Context) (channel.WeeklyReview, error) {
	return a.weekly(ctx, -1, false)
}

// WeeklyAnswer answers proposal n (0: every pending one) of the open
// weekly review.
func (a Admin) WeeklyAnswer(ctx context.Context, n int, dismiss bool) (channel.WeeklyReview, error) {
	return a.weekly(ctx, n, dismiss)
}

// weekly shows the open review, after answering proposal n when n >= 0.
// It checks first that the proposal waits, so a wrong number is
// channel.ErrNotFound (memreview's errors are not this package's to
// know); a proposal that turned stale is channel.ErrStale, with the
// review.
func (a Admin) weekly(ctx context.Context, n int, dismiss bool) (channel.WeeklyReview, error) {
	r, err := a.o.MemoryReviewOpen(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return channel.WeeklyReview{}, fmt.Errorf("memory review: %w", channel.ErrNotFound)
	}
	if err != nil {
		return channel.WeeklyReview{}, err
	}
	was := r.Proposals // answering keeps their order
	waits := n < 0
	for i := range was {
		p := &was[i]
		waits = waits || p.Status == proposalPending && (n == 0 || p.N == n)
	}
	if !waits {
		return channel.WeeklyReview{}, fmt.Errorf("memory review proposal %d: %w", n, channel.ErrNotFound)
	}
	if n >= 0 {
		if r, err = a.o.MemoryReviewAnswer(ctx, n, dismiss); err != nil {
			return channel.WeeklyReview{}, err
		}
	}
	units, _, err := a.o.MemoryList(ctx)
	if err != nil {
		return channel.WeeklyReview{}, err
	}
	var stale []string
	out := channel.WeeklyReview{ID: r.ID, CreatedAt: r.CreatedAt.UTC(), Proposals: make([]channel.WeeklyProposal, 0, len(r.Proposals))}
	for i := range r.Proposals {
		p := &r.Proposals[i]
		if p.Status == proposalStale && i < len(was) && was[i].Status == proposalPending {
			stale = append(stale, strconv.Itoa(p.N))
		}
		sp := channel.WeeklyProposal{N: p.N, Action: p.Action, Text: p.Text, Reason: p.Reason, Status: p.Status,
			Before: make([]channel.MemoryBefore, 0, len(p.IDs))}
		for _, id := range p.IDs {
			b := channel.MemoryBefore{ID: id, Gone: true}
			for j := range units {
				if units[j].ID == id {
					b.Text, b.Gone = units[j].Text, false
				}
			}
			sp.Before = append(sp.Before, b)
		}
		out.Proposals = append(out.Proposals, sp)
	}
	if len(stale) > 0 {
		err = fmt.Errorf("proposal %s not applied: %w", strings.Join(stale, ", "), channel.ErrStale) // lang:en
	}
	return out, err
}
