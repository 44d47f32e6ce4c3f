package owner

import (
	"errors"
	"strconv"

	"context"
	"fmt"
	"github.com/homard/homard/internal/store"
	"time"

	"github.com/homard/homard/internal/memory"
)

// MemoryPath is the owner's memory file, the Markdown truth.
func (o *Actions) MemoryPath() (string, error) { return o.d.Memory.Path(o.d.Owner) }

// MemoryList returns every memory unit and the lines of the file it could
// not read.
func (o *Actions) MemoryList(ctx context.Context) ([]memory.Unit, []memory.Problem, error) {
	return o.d.Memory.List(ctx, o.d.Owner)
}

// MemorySearch returns up to limit units matching query, best first.
func (o *Actions) MemorySearch(ctx context.Context, query string, limit int) ([]memory.Unit, error) {
	return o.d.Memory.Recall(ctx, o.d.Owner, query, limit)
}

// MemoryAdd remembers text the owner gave, of kind fact, preference or
// task, for ttl (zero: no expiry). It is audited as the owner's.
func (o *Actions) MemoryAdd(ctx context.Context, text, kind string, ttl time.Duration) (memory.Unit, error) {
	k, err := memory.ParseKind(kind)
	if err != nil {
		return memory.Unit{}, fmt.Errorf("%w: --kind: %w", ErrBadRequest, err)
	}
	if ttl < 0 {
		return memory.Unit{}, fmt.Errorf("%w: --ttl must not be negative", ErrBadRequest)
	}
	u, err := o.d.Memory.Remember(ctx, o.d.Owner, memory.Note{Text: text, Kind: k, TTL: ttl, Source: "owner"})
	if err != nil {
		return u, err
	}
	return u, o.Audit(ctx, "memory.add", "owner.memory", "the owner added to memory", map[string]string{"id": u.ID, "kind": string(u.Kind)}, nil)
}

// MemoryForget removes one unit; it is audited as the owner's.
func (o *Actions) MemoryForget(ctx context.Context, id string) (memory.Unit, error) {
	u, err := o.d.Memory.Forget(ctx, o.d.Owner, id)
	if err != nil {
		return u, err
	}
	return u, o.Audit(ctx, "memory.forget", "owner.memory", "the owner removed a memory", map[string]string{"id": u.ID}, nil)
}

// MemoryRebuild rebuilds the search index from the Markdown file.
func (o *Actions) MemoryRebuild(ctx context.Context) (memory.Status, error) {
	return o.d.Memory.Rebuild(ctx, o.d.Owner)
}

// Now is the facade's clock (what "expired" is judged against).
func (o *Actions) Now() time.Time { return o.d.Now() }

// MemoryReview lists the notes capture proposed that wait for the owner,
// those contradicting a remembered preference first.
func (o *Actions) MemoryReview(ctx context.Context) ([]memory.Candidate, error) {
	return o.d.Memory.Candidates(ctx, o.d.Owner)
}

// MemoryAccept remembers a waiting note (replacing unit replace, when set,
// in the same write).
func (o *Actions) MemoryAccept(ctx context.Context, id, replace string) (memory.Candidate, error) {
	return o.d.Memory.Accept(ctx, o.d.Owner, id, replace)
}

// MemoryDismiss drops a waiting note.
func (o *Actions) MemoryDismiss(ctx context.Context, id string) (memory.Candidate, error) {
	return o.d.Memory.Dismiss(ctx, o.d.Owner, id)
}

// Reviews is the weekly memory review as the owner answers it
// (memreview.Service).
type Reviews interface {
	// Run makes a review now and returns it (a review with no proposal is
	// not kept).
	Run(ctx context.Context) (store.MemoryReview, error)
	// Open is the open review (store.ErrNotFound: none waits).
	Open(ctx context.Context) (store.MemoryReview, error)
	// Answer approves or dismisses proposal n of review id (0: every
	// pending one; id "": the open review).
	Answer(ctx context.Context, id string, n int, dismiss bool) (store.MemoryReview, error)
}

// errNoReviews: the review is not wired in this process.
var errNoReviews = errors.New("the weekly memory review is not available here")

// MemoryReviewRun makes a memory review now: its proposals wait for the
// owner; nothing in memory changes.
func (o *Actions) MemoryReviewRun(ctx context.Context) (store.MemoryReview, error) {
	if o.d.Reviews == nil {
		return store.MemoryReview{}, errNoReviews
	}
	return o.d.Reviews.Run(ctx)
}

// MemoryReviewOpen is the memory review waiting for the owner
// (store.ErrNotFound when none does).
func (o *Actions) MemoryReviewOpen(ctx context.Context) (store.MemoryReview, error) {
	if o.d.Reviews == nil {
		return store.MemoryReview{}, errNoReviews
	}
	return o.d.Reviews.Open(ctx)
}

// MemoryReviewAnswer approves (or dismisses) proposal n of the open
// memory review, every pending one when n is 0; an approval edits only
// the units the proposal names. It is audited as the owner's.
func (o *Actions) MemoryReviewAnswer(ctx context.Context, n int, dismiss bool) (store.MemoryReview, error) {
	if o.d.Reviews == nil {
		return store.MemoryReview{}, errNoReviews
	}
	r, err := o.d.Reviews.Answer(ctx, "", n, dismiss)
	if err != nil {
		return r, err
	}
	what, summary := "memory.review-approve", "the owner approved memory review proposals" // lang:en
	if dismiss {
		what, summary = "memory.review-dismiss", "the owner dismissed memory review proposals" // lang:en
	}
	return r, o.Audit(ctx, what, "owner.memory", summary, map[string]string{"review": r.ID, "proposal": strconv.Itoa(n)}, nil)
}
