package chats

import (
	"context"
	"fmt"
	"strings"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/store"
)

// MemoryReviews is the weekly memory review as its card's buttons need it
// (app wires memreview.Service).
type MemoryReviews interface {
	// Press answers a review card's button for the owner and returns the
	// card as it is then: its text and the buttons still to press.
	Press(ctx context.Context, data string) (string, []chat.Button, error)
}

// isReviewButton reports whether data is a memory review card's button:
// "v:<review id>:<n|a|x>" (memreview.ParseButton reads the rest).
func isReviewButton(data string) bool {
	return strings.HasPrefix(data, "v:rv_") && len(data) <= chat.MaxButtonData
}

// QueueMemoryReview queues a memory review's card, text with buttons, to
// the first owner chat of every enabled chat platform (none paired:
// nothing is queued there).
func (s *Service) QueueMemoryReview(ctx context.Context, text string, buttons []chat.Button) error {
	for _, b := range buttons {
		if len(b.Data) > chat.MaxButtonData {
			return fmt.Errorf("memory review card: button data of %d bytes", len(b.Data)) // lang:en (an error for the log)
		}
	}
	for _, p := range config.Platforms {
		if !s.d.Config.Channels.Of(p.Name).Enabled {
			continue
		}
		chats, err := s.OwnerChats(ctx, p.Name)
		if err != nil {
			return err
		}
		if len(chats) == 0 {
			continue
		}
		err = s.d.Store.Write(ctx, func(tx *store.Tx) error {
			_, _, err := queueChat(tx, p.Name, chats[0], text, "", buttons, 0, s.d.Now())
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// reviewPress handles a memory review card's buttons: only a paired owner
// who is the chat, in their own direct chat (the checks of an approval
// card's press); the review must be the owner's open one (the review
// service checks). The card is edited to show where each proposal stands,
// with the buttons still to press.
func (c *Runner) reviewPress(ctx context.Context, a chat.Adapter, row store.InboxRow, in chat.Inbound, refuse func(string), ack func(string)) {
	p := *in.Press
	if !c.ownerPressed(ctx, row, in, refuse) {
		return
	}
	if c.s.d.Reviews == nil {
		refuse("memory reviews are not available here") // lang:en (the audit's reason)
		return
	}
	text, buttons, err := c.s.d.Reviews().Press(ctx, p.Data)
	if err != nil {
		c.finish(ctx, row, inboxHandled, "memory review press failed") // lang:en (the inbox row's note)
		ack(err.Error())
		return
	}
	c.finish(ctx, row, inboxHandled, "memory review answered") // lang:en (the inbox row's note)
	ack("")                                                    // the edited card says what was done
	if max := a.MaxChars(); max > 0 {
		text = chat.Split(text, max)[0]
	}
	out := chat.Outbound{ChatID: in.Chat.ID, Text: text, Buttons: buttons}
	if err := a.Edit(ctx, in.Chat.ID, p.MessageID, out); err != nil && ctx.Err() == nil {
		c.log.Warn("edit memory review card", "platform", row.Platform, "err", err)
	}
}
