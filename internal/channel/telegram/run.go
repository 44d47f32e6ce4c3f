package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/homard/homard/internal/channel/chat"
)

// allowedUpdates lists what Run asks for. Listing it explicitly matters:
// without it Telegram keeps the list of the previous caller (a webhook or
// another tool's poller may have set a different one).
var allowedUpdates = []string{"message", "edited_message", "channel_post", "callback_query", "my_chat_member"}

type getUpdatesParams struct {
	Offset         int64    `json:"offset,omitempty"`
	Limit          int      `json:"limit"`
	Timeout        int      `json:"timeout"`
	AllowedUpdates []string `json:"allowed_updates"`
}

// conflictLimit is how many 409 answers in a row mean another client
// polls for the bot. One alone does not: any getUpdates call for the bot
// (a one-off check by a script or a second homard started by mistake and
// stopped) ends the poll in progress with 409, and a poller that is
// really there keeps ending each of ours.
const conflictLimit = 3

// Run polls getUpdates until ctx ends (it then returns ctx.Err()), the
// token is refused (chat.ErrUnauthorized) or another client polls for this
// bot (chat.ErrConflict: Telegram's 409 three times in a row, with a
// backoff between; also when a webhook is set).
//
// Each update goes to sink.Receive in order. The next poll's offset, which
// tells Telegram to forget what came before, moves past an update only
// after Receive returned nil for it: when Receive fails, Run waits (capped
// exponential backoff with jitter) and asks again from that update, so
// Telegram delivers it again. Network failures, 5xx and 429 are retried the
// same way (429 after its retry_after).
func (b *Bot) Run(ctx context.Context, sink chat.Sink) error {
	var me *user
	failures := 0
	for me == nil {
		u, err := b.getMe(ctx)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, chat.ErrUnauthorized):
			return err
		case err != nil:
			if err := b.wait(ctx, "getMe", err, &failures); err != nil {
				return err
			}
			continue
		}
		me = u
	}

	var offset int64
	// Poll failures and save failures back off apart: a poll that
	// succeeds between two failed saves must not reset the save backoff.
	failures, saveFailures, conflicts := 0, 0, 0
	for {
		var batch []json.RawMessage
		err := b.call(ctx, "getUpdates", getUpdatesParams{
			Offset: offset, Limit: 100, Timeout: int(b.poll / time.Second), AllowedUpdates: allowedUpdates,
		}, &batch)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch apiCode(err) {
		case http.StatusConflict:
			conflicts++
			if conflicts >= conflictLimit {
				return fmt.Errorf("%w (%v): stop the other program polling with this token, or delete its webhook", chat.ErrConflict, err)
			}
		case http.StatusUnauthorized, http.StatusNotFound:
			return unauthorized(err)
		default:
			conflicts = 0
		}
		if err != nil {
			if err := b.wait(ctx, "getUpdates", err, &failures); err != nil {
				return err
			}
			continue
		}
		failures = 0
		for _, raw := range batch {
			var u update
			if err := json.Unmarshal(raw, &u); err != nil {
				// A field of an unexpected type: the update is still
				// recorded (as KindOther, by its id) before it is confirmed.
				b.log.Warn("telegram: an update did not decode; recording it as other", "err", err)
				u = update{UpdateID: updateID(raw)}
			}
			if u.UpdateID == 0 {
				// It cannot be named, so it cannot be confirmed alone; the
				// next update's offset will confirm it.
				b.log.Warn("telegram: skipped an update without update_id")
				continue
			}
			if err := sink.Receive(ctx, inbound(u, me)); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				// Not saved: ask for it again, after a pause.
				if err := b.wait(ctx, "save update", err, &saveFailures); err != nil {
					return err
				}
				break
			}
			saveFailures = 0
			offset = u.UpdateID + 1
		}
	}
}

// updateID reads only the update_id of an update that did not decode.
func updateID(raw json.RawMessage) int64 {
	var u struct {
		UpdateID int64 `json:"update_id"`
	}
	_ = json.Unmarshal(raw, &u)
	return u.UpdateID
}

// wait logs a failure and sleeps before the next try: retry_after when
// Telegram gave one, else capped exponential backoff with jitter. It
// returns ctx.Err() when ctx ends first.
func (b *Bot) wait(ctx context.Context, what string, err error, failures *int) error {
	*failures++
	d := b.backoff(*failures)
	var api *APIError
	if errors.As(err, &api) && api.RetryAfter > 0 {
		d = api.RetryAfter
	}
	b.log.Warn("telegram: "+what+" failed; retrying", "err", err, "in", d, "failures", *failures)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// backoff is the pause after n failures in a row: RetryMin doubled each
// time up to RetryMax, with the upper half randomised so that bots
// restarted together do not retry together.
func (b *Bot) backoff(n int) time.Duration {
	d := b.backMin
	for i := 1; i < n && d < b.backMax; i++ {
		d *= 2
	}
	d = min(d, b.backMax)
	half := d / 2
	return half + rand.N(half+1)
}
