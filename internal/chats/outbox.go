package chats

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/store"
)

// outboxLoop sends a's queued parts, oldest first and one chat in order
// (a part waits for the one before it), or hands each chat with parts to
// send to a job (Options.Deliveries: deliverDue), and checks open cards,
// until ctx ends. Every hour it also prunes old chat state.
func (c *Runner) outboxLoop(ctx context.Context, a chat.Adapter) {
	lastPrune := time.Time{}
	for {
		var next time.Time
		if c.o.Deliveries != nil {
			next = c.deliverDue(ctx, a)
		} else {
			next = c.sendDue(ctx, a)
		}
		c.checkCards(ctx, a)
		if now := c.s.d.Now(); now.Sub(lastPrune) > time.Hour {
			lastPrune = now
			c.prune(ctx)
		}
		wait := c.o.Poll
		if !next.IsZero() {
			wait = min(wait, max(next.Sub(c.s.d.Now()), time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-c.wakeOut[a.Platform()]:
		case <-t.C:
		}
		t.Stop()
	}
}

// sendDue sends the first unsent part of each chat that is due, and
// returns when the earliest part that is not yet due will be (zero:
// none).
func (c *Runner) sendDue(ctx context.Context, a chat.Adapter) (next time.Time) {
	for _, row := range c.firstOfEachChat(ctx, a.Platform()) {
		if ctx.Err() != nil {
			return time.Time{}
		}
		at := row.NextAt
		if !at.After(c.s.d.Now()) {
			at, _ = c.send(ctx, a, row)
		}
		next = earliest(next, at)
	}
	return next
}

// firstOfEachChat is the first unsent part of each chat on platform,
// oldest first: a chat's later parts wait for it. None when the store
// cannot be read (the next poll tries again).
func (c *Runner) firstOfEachChat(ctx context.Context, platform string) []store.OutboxRow {
	rows, err := c.s.d.Store.OutboxUnsent(ctx, platform)
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	first := rows[:0]
	for _, row := range rows {
		if !seen[row.ChatID] {
			seen[row.ChatID] = true
			first = append(first, row)
		}
	}
	return first
}

// earliest is the earlier of two times, a zero one meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// send tries one part; it returns when to try again (zero: sent or given
// up, or a write of the row's state failed: err). A row left sending by a
// crash comes here again with the same Key: platforms with a
// duplicate-send guard drop the second copy.
func (c *Runner) send(ctx context.Context, a chat.Adapter, row store.OutboxRow) (time.Time, error) {
	if err := c.s.d.Store.Write(ctx, func(tx *store.Tx) error { return tx.OutboxSending(row.ID) }); err != nil {
		return time.Time{}, err
	}
	attempt := row.Attempts + 1
	var buttons []chat.Button
	_ = json.Unmarshal([]byte(row.Buttons), &buttons) // written by queue
	out := chat.Outbound{ChatID: row.ChatID, Text: row.Text, ReplyTo: row.ReplyTo, Buttons: buttons, Key: strconv.FormatInt(row.ID, 10)}
	msgID, err := a.Send(ctx, out)
	if ctx.Err() != nil {
		return time.Time{}, ctx.Err() // stays sending; sent again at the next start
	}
	bg := context.WithoutCancel(ctx)
	if err == nil {
		err := c.s.d.Store.Write(bg, func(tx *store.Tx) error { return tx.OutboxSent(row.ID, msgID, c.s.d.Now()) })
		if err != nil {
			c.log.Warn("record sent part", "outbox", row.ID, "err", err)
		}
		return time.Time{}, err
	}
	var retry *chat.RetryError
	if attempt >= c.o.MaxAttempts {
		c.log.Warn("chat part given up", "platform", row.Platform, "outbox", row.ID, "attempts", attempt, "err", err)
		return time.Time{}, c.s.d.Store.Write(bg, func(tx *store.Tx) error { return tx.OutboxFailed(row.ID, errText(err)) })
	}
	wait := c.o.Backoff(attempt)
	if errors.As(err, &retry) && retry.After > 0 {
		wait = retry.After
	}
	at := c.s.d.Now().Add(wait)
	c.log.Info("chat part retried", "platform", row.Platform, "outbox", row.ID, "attempt", attempt, "wait", wait, "err", err)
	if err := c.s.d.Store.Write(bg, func(tx *store.Tx) error { return tx.OutboxRetry(row.ID, at, errText(err)) }); err != nil {
		return time.Time{}, err
	}
	return at, nil
}

// How long finished chat state is kept: sent or failed reply parts and
// the cards of decided approvals (what `homard channel list` and a look
// at a past card may need), and used or expired pairing codes (a code
// lives 10 minutes; a day is enough to see what happened).
const (
	outboxKeep  = 30 * 24 * time.Hour
	cardKeep    = 30 * 24 * time.Hour
	pairingKeep = 24 * time.Hour
)

// prune forgets handled deliveries older than inboxKeep and the finished
// chat state older than its keep time (store.PruneChatState).
func (c *Runner) prune(ctx context.Context) {
	now := c.s.d.Now()
	err := c.s.d.Store.Write(ctx, func(tx *store.Tx) error {
		if _, err := tx.PruneInbox(now.Add(-inboxKeep)); err != nil {
			return err
		}
		_, err := tx.PruneChatState(now.Add(-outboxKeep), now.Add(-cardKeep), now.Add(-pairingKeep))
		return err
	})
	if err != nil && ctx.Err() == nil {
		c.log.Warn("prune chat state", "err", err)
	}
}
