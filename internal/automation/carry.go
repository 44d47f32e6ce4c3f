package automation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/homard/homard/internal/store"
)

// QueuedSlot is a task's slot queued as a river job that has not ended.
type QueuedSlot struct {
	TaskID  string
	SlotKey string
	Slot    time.Time
}

// CarryQueuedSlots carries the slots src has queued as river jobs into
// dst, a copy of src's rows (store.Copy) without river's tables: a tick
// queues a slot and moves its task's next run time on in the same step,
// so without this the copy would never run a slot queued and not yet run
// in src. Each such task of dst that is still active gets its next run
// time set back to its oldest queued slot, which dst's scheduler then
// runs or records missed by the task's catch-up policy, as after any
// stop. It returns how many tasks it set back. A store without river
// (SQLite, or a build without -tags postgres) has nothing to carry.
func CarryQueuedSlots(ctx context.Context, src, dst *store.Store) (int, error) {
	slots, err := queuedSlots(ctx, src)
	if err != nil || len(slots) == 0 {
		return 0, err
	}
	oldest := map[string]time.Time{}
	for _, s := range slots {
		if at, ok := oldest[s.TaskID]; !ok || s.Slot.Before(at) {
			oldest[s.TaskID] = s.Slot
		}
	}
	n := 0
	for id, slot := range oldest {
		t, err := dst.Task(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return n, err
		}
		if t.Status != store.TaskActive || (!t.NextRunAt.IsZero() && !slot.Before(t.NextRunAt)) {
			continue
		}
		if err := dst.Write(ctx, func(tx *store.Tx) error { return tx.SetNextRun(id, slot) }); err != nil {
			return n, fmt.Errorf("carry the queued slot of task %s: %w", id, err)
		}
		n++
	}
	return n, nil
}
