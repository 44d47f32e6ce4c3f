package app

import (
	"context"
	"fmt"

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

// deliverTask records where run runID's text goes, inside tx: "web" is
// the run's row itself (the web UI's tasks page and `homard task runs`
// read it); a chat platform queues text to each owner chat there, and the
// run keeps the first chat's outbox row, whose state (retried, sent,
// failed) is the delivery's. A platform with no paired owner chat falls
// back to the web, and says so.
func (r *Runtime) deliverTask(ctx context.Context, tx *store.Tx, runID int64, target, text string) error {
	if target == "web" {
		return tx.SetRunDelivery(runID, "web", 0)
	}
	chats, err := r.ownerChats(ctx, target)
	if err != nil {
		return err
	}
	if len(chats) == 0 {
		return tx.SetRunDelivery(runID, "web (no "+target+" owner is paired: homard pair "+target+")", 0)
	}
	var first int64
	for i, c := range chats {
		id, err := r.Chats.Queue(tx, target, c, r.redactor.Redact(text))
		if err != nil {
			return fmt.Errorf("deliver task run %d to %s: %w", runID, target, err)
		}
		if i == 0 {
			first = id
		}
	}
	return tx.SetRunDelivery(runID, target, first)
}
