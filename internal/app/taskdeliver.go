package app

import (
	"context"
	"fmt"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/store"
)

// ownerChats are the direct chats of the owners paired on platform.
func (r *Runtime) ownerChats(ctx context.Context, platform string) ([]string, error) {
	owners, err := r.Store.ChatOwners(ctx, platform)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range owners {
		c, err := r.Store.OwnerChat(ctx, o)
		if err != nil {
			return nil, err
		}
		if c != "" {
			out = append(out, c)
		}
	}
	return out, nil
}

// queueTaskCard queues an approval card of a run to the first owner chat
// on platform (a card is one message: chat_cards has one row per
// approval), and records it, so a press there is checked exactly as in an
// owner's own turn (chats_card.go). Its buttons offer once and deny.
func (r *Runtime) queueTaskCard(ctx context.Context, platform string, card channel.Card) error {
	chats, err := r.ownerChats(ctx, platform)
	if err != nil || len(chats) == 0 {
		return err
	}
	buttons := cardButtons(card)
	for _, b := range buttons {
		if len(b.Data) > chat.MaxButtonData {
			return fmt.Errorf("approval card: button data of %d bytes", len(b.Data))
		}
	}
	c := chats[0]
	return r.Store.Write(ctx, func(tx *store.Tx) error {
		_, id, err := queueChat(tx, platform, c, cardText(card), "", buttons, 0, r.now())
		if err != nil {
			return err
		}
		return tx.InsertChatCard(store.ChatCard{ApprovalID: card.ApprovalID, Platform: platform, ChatID: c,
			OutboxID: id, HashPrefix: hashPrefix(card.PlanHash), CreatedAt: r.now()})
	})
}
