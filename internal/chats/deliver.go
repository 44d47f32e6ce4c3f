//go:build postgres

package chats

import (
	"context"
	"fmt"
	"time"

	"github.com/homard/homard/internal/channel/chat"
)

// Chat deliveries as jobs (Deliveries): linked only into a build with
// -tags postgres, the one whose scheduler is river's (internal/automation,
// river_chat.go); the default build's outbox loop sends every part itself
// (deliver_off.go) and its binary stays under 25 MB.

// deliverDue queues a job for each chat of a with parts to send
// (Deliveries), and returns when to look again (zero: Poll). A chat
// whose job cannot be queued (river not started, or gone) is drained
// here, under the same lock a job takes, so its order holds either way.
// The sweep runs on the replica holding the platform's lease, at each
// part queued here and every Poll: a job lost between a part's commit
// and its queueing (a crash), or stranded running on a dead replica, is
// queued again.
func (c *Runner) deliverDue(ctx context.Context, a chat.Adapter) (next time.Time) {
	for _, row := range c.firstOfEachChat(ctx, a.Platform()) {
		if ctx.Err() != nil {
			return time.Time{}
		}
		err := c.o.Deliveries.Deliver(ctx, row.Platform, row.ChatID)
		if err == nil {
			continue
		}
		c.log.Warn("chat delivery not queued as a job; sending here", "platform", row.Platform, "err", err)
		at, _ := c.drain(ctx, row.Platform, row.ChatID)
		next = earliest(next, at)
	}
	return next
}

// drain sends chatID's due parts on platform, one after the other in the
// order they were queued, and returns when its next part is due (zero:
// none left). It holds the chat's lock while it sends, on this replica
// and, through the store's named lock, across replicas: two jobs of one
// chat never send at once, so a part never goes before the one before
// it. When another holds the chat, it returns at once with a time Poll
// away. A part left sending by a dead holder is sent again with its key.
func (c *Runner) drain(ctx context.Context, platform, chatID string) (time.Time, error) {
	a := c.adapters[platform]
	if a == nil {
		return time.Time{}, fmt.Errorf("send to a %s chat: the channel does not run here", platform) // lang:en
	}
	// The chat's lock: on another replica through the database, and in
	// this process too (two jobs of one chat fetched here).
	release, ok, err := c.s.d.Store.TryLockAlone("outbox:" + platform + ":" + chatID)
	if err != nil || !ok {
		return c.s.d.Now().Add(c.o.Poll), err
	}
	defer release()
	for {
		rows, err := c.s.d.Store.OutboxUnsent(ctx, platform)
		if err != nil {
			return time.Time{}, err
		}
		i := 0
		for i < len(rows) && rows[i].ChatID != chatID {
			i++
		}
		if i == len(rows) {
			return time.Time{}, nil
		}
		if row := rows[i]; row.NextAt.After(c.s.d.Now()) {
			return row.NextAt, nil
		}
		if at, err := c.send(ctx, a, rows[i]); err != nil || !at.IsZero() {
			return at, err
		}
	}
}
