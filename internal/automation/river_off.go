//go:build !postgres

package automation

import (
	"context"

	"github.com/homard/homard/internal/store"
)

// riverBuilt: this build has no river (river.go); the code for river's
// scheduler in shared files is compiled out under it.
const riverBuilt = false

// newRiverScheduler is river's scheduler on a shared store (river.go); a
// build without -tags postgres has none: river is not linked into the
// default binary, whose store is SQLite's and whose size is held under
// 25 MB.
func newRiverScheduler(*sqliteScheduler, *store.Store) Scheduler { return nil }

// riverScheduler stands for river's scheduler, which this build has not:
// sqliteScheduler.river is always nil here.
type riverScheduler struct{}

func (*riverScheduler) enqueue(context.Context, store.Task, decision) error {
	panic("automation: no river in this build")
}

// queuedSlots lists src's slots queued as river jobs (river.go): none in
// a build without river.
func queuedSlots(context.Context, *store.Store) ([]QueuedSlot, error) { return nil, nil }
