package automation

import (
	"context"
	"fmt"

	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/task"
)

// deliverTask records where run runID's text goes, inside tx: "web" is
// the run's row itself (the web UI's tasks page and `homard task runs`
// read it); a chat platform queues text to each owner chat there, and the
// run keeps the first chat's outbox row, whose state (retried, sent,
// failed) is the delivery's. A platform with no paired owner chat falls
// back to the web, and says so.
func (s *Service) deliverTask(ctx context.Context, tx *store.Tx, runID int64, target, text, reminder string) error {
	if target == "web" {
		return tx.SetRunDelivery(runID, "web", 0)
	}
	chats, err := s.o.Outbox.OwnerChats(ctx, target)
	if err != nil {
		return err
	}
	if len(chats) == 0 {
		return tx.SetRunDelivery(runID, "web (no "+target+" owner is paired: homard pair "+target+")", 0)
	}
	var first int64
	for i, c := range chats {
		queue := s.o.Outbox.Queue
		if reminder != "" { // with its Snooze and Done buttons
			queue = func(tx *store.Tx, platform, chat, text string) (int64, error) {
				return s.o.Outbox.QueueReminder(tx, platform, chat, text, reminder)
			}
		}
		id, err := queue(tx, target, c, s.o.Redactor.Redact(text))
		if err != nil {
			return fmt.Errorf("deliver task run %d to %s: %w", runID, target, err)
		}
		if i == 0 {
			first = id
		}
	}
	return tx.SetRunDelivery(runID, target, first)
}

// notifyTask tells the owner text about task t on its delivery platform;
// for the web there is no push: the tasks page and `homard task list`
// show the same state, and the log has the line.
func (s *Service) notifyTask(ctx context.Context, t store.Task, b task.Body, text string) {
	s.logger().Info("task notice", "task", t.ID, "text", text)
	if b.Deliver == "" || b.Deliver == "web" {
		return
	}
	chats, err := s.o.Outbox.OwnerChats(ctx, b.Deliver)
	if err == nil {
		err = s.o.Store.Write(ctx, func(tx *store.Tx) error {
			for _, c := range chats {
				if _, err := s.o.Outbox.Queue(tx, b.Deliver, c, text); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		s.logger().Warn("task notice", "task", t.ID, "err", err)
	}
}
