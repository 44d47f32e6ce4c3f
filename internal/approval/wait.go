package approval

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/homard/homard/internal/store"
)

// Waited is how a wait for the owner's answer ended.
type Waited int

const (
	// Answered: the owner approved or denied, in this process or
	// another.
	Answered Waited = iota
	// Lapsed: nobody answered within the wait (the approval is still
	// pending), or it expired (by time, or Lapse).
	Lapsed
)

// DefaultPoll is how often Wait reads the approval when no answer recorded
// in this process woke it: another process (`homard approval approve`
// beside a running serve) can only be seen by reading.
const DefaultPoll = 200 * time.Millisecond

// Wait is the one place a turn, a task run, a chat card or a paired
// client's call waits for the owner's answer to pending approval id. It
// returns Answered as soon as the approval is decided: at once when the
// decision went through this Service (Approve, Deny, Lapse wake it), else
// at the next read. It returns Lapsed when within has passed or the
// approval expired, and ctx's error when ctx ends first. poll is how often
// it reads; zero means DefaultPoll.
func (s *Service) Wait(ctx context.Context, id string, within, poll time.Duration) (Approval, Waited, error) {
	if poll <= 0 {
		poll = DefaultPoll
	}
	woke := s.waitFor(id)
	defer s.stopWaiting(id, woke)
	deadline := s.now().Add(within)
	t := time.NewTimer(0) // the first read is now
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return Approval{}, Lapsed, ctx.Err()
		case <-woke:
		case <-t.C:
		}
		a, err := s.Get(ctx, id)
		if err != nil {
			return Approval{}, Lapsed, err
		}
		switch a.Status {
		case Pending:
		case Expired: // by time, or lapsed with the turn that asked
			return a, Lapsed, nil
		default:
			return a, Answered, nil
		}
		now := s.now()
		if !now.Before(deadline) || !now.Before(a.ExpiresAt) {
			return a, Lapsed, nil
		}
		next := min(poll, deadline.Sub(now), a.ExpiresAt.Sub(now))
		t.Reset(max(next, time.Millisecond))
	}
}

// waitFor registers a waiter on id: the returned channel receives when an
// answer to id is recorded through s.
func (s *Service) waitFor(id string) chan struct{} {
	// On a shared database an answer recorded by another replica is
	// announced (store.TopicApprovals) and wakes the waiter at once; the
	// poll is what remains when an announcement is lost. On SQLite
	// nothing is announced and the poll reads answers from other
	// processes.
	// The announcement names no approval (store.TopicApprovals): every
	// waiter reads its own again.
	s.listen.Do(func() { _, _ = s.st.Listen(store.TopicApprovals, func(string) { s.wakeAll() }) })
	ch := make(chan struct{}, 1)
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	if s.waiters == nil {
		s.waiters = map[string][]chan struct{}{}
	}
	s.waiters[id] = append(s.waiters[id], ch)
	return ch
}

func (s *Service) stopWaiting(id string, ch chan struct{}) {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	list := s.waiters[id]
	for i, c := range list {
		if c == ch {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(s.waiters, id)
	} else {
		s.waiters[id] = list
	}
}

// wakeAll tells every waiter that an answer may have been recorded.
func (s *Service) wakeAll() {
	s.waitMu.Lock()
	ids := slices.Collect(maps.Keys(s.waiters))
	s.waitMu.Unlock()
	s.wake(ids...)
}

// wake tells the waiters on ids that an answer was recorded.
func (s *Service) wake(ids ...string) {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	for _, id := range ids {
		for _, ch := range s.waiters[id] {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}
