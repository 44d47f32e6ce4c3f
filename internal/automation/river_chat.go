//go:build postgres

package automation

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
)

// Chat deliveries as river jobs (issue 27 point 4). The store's
// chat_outbox stays the queue of record; a job names one chat of one
// platform, and its worker, on whichever replica fetches it, runs the
// chat core's drain (chats.Deliveries): under the chat's lock it sends
// the chat's due parts in the order they were queued, each claimed
// (sending) before it goes with its row id as the platform's
// duplicate-send key, and says when the next part is due, which the job
// waits for snoozed. The chat core's sweep queues a job per chat with
// parts to send unless one waits to start already.

// chatArgs is one chat's delivery job.
type chatArgs struct {
	Platform string `json:"platform"`
	Chat     string `json:"chat"`
}

func (chatArgs) Kind() string { return "homard.chat_outbox" }

// chatJobAttempts bounds a job whose drain keeps failing (the store
// unreachable): the sweep queues a new one for a chat whose parts are
// still unsent, so a discarded job loses nothing.
const chatJobAttempts = 10

// riverChatQueue starts the name of each owner's queue of chat jobs: a
// queue of their own, so that long task runs never hold them up.
const riverChatQueue = "homard_chats"

// chatJobs is what Deliver needs of a started river: set by Run once its
// client started.
type chatJobs struct {
	client *river.Client[*sql.Tx]
	db     *sql.DB
}

// chatDrain is the chat core's drain (chats.Runner's, through Work).
type chatDrain = func(ctx context.Context, platform, chatID string) (time.Time, error)

// chatState is riverScheduler's part in chat deliveries; its fields are
// set and read on different goroutines.
type chatState struct {
	jobs  atomic.Pointer[chatJobs]
	drain atomic.Pointer[chatDrain]
}

// Work makes drain the work of this replica's chat jobs (chats.Deliveries).
func (r *riverScheduler) Work(drain func(ctx context.Context, platform, chatID string) (time.Time, error)) {
	r.chat.drain.Store(&drain)
}

// Deliver queues a job for chatID on platform unless one waits to start
// (available, scheduled — a snoozed one —, pending or retryable). A job
// already running does not count: it may have passed the part just
// queued, or be stranded on a dead replica until river rescues it. Two
// sweeps at once may queue two: the second's drain finds the chat held,
// or nothing to send.
func (r *riverScheduler) Deliver(ctx context.Context, platform, chatID string) error {
	j := r.chat.jobs.Load()
	if j == nil {
		return errors.New("queue a chat delivery: river is not running") // lang:en
	}
	var waiting bool
	err := j.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM river_job WHERE kind = $1 AND queue = $2
		AND state IN ('available', 'scheduled', 'pending', 'retryable') AND args->>'platform' = $3 AND args->>'chat' = $4)`,
		chatArgs{}.Kind(), r.chatQueue, platform, chatID).Scan(&waiting)
	if err != nil || waiting {
		return err
	}
	_, err = j.client.Insert(ctx, chatArgs{Platform: platform, Chat: chatID},
		&river.InsertOpts{Queue: r.chatQueue, MaxAttempts: chatJobAttempts})
	return err
}

// chatWorker drains one chat on the replica that fetched its job.
type chatWorker struct {
	river.WorkerDefaults[chatArgs]
	r *riverScheduler
}

// NextRetry: a drain cut short (its replica stopping) or failed is tried
// again a poll later, on whichever replica fetches it.
func (w *chatWorker) NextRetry(*river.Job[chatArgs]) time.Time { return time.Now().Add(w.r.tune.poll) }

// Work drains the chat, then waits snoozed until its next part is due (a
// retry's time, or the chat held by another drain). A replica running no
// chat channel leaves the job to another.
func (w *chatWorker) Work(ctx context.Context, job *river.Job[chatArgs]) error {
	f := w.r.chat.drain.Load()
	if f == nil {
		return river.JobSnooze(5 * time.Second)
	}
	next, err := (*f)(ctx, job.Args.Platform, job.Args.Chat)
	switch {
	case err != nil:
		return err
	case next.IsZero():
		return nil
	}
	return river.JobSnooze(max(time.Until(next), 0))
}
