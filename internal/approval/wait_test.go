package approval

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/homard/homard/internal/policy"
)

// waitResult is one Wait's return.
type waitResult struct {
	a   Approval
	w   Waited
	err error
}

func (e *env) waitAsync(ctx context.Context, id string, within, poll time.Duration) <-chan waitResult {
	out := make(chan waitResult, 1)
	go func() {
		a, w, err := e.svc.Wait(ctx, id, within, poll)
		out <- waitResult{a, w, err}
	}()
	return out
}

// An answer recorded through the Service wakes the waiter at once: with an
// hour between reads, only the wake can end the wait before the guard.
func TestWaitWokenByAnswerInProcess(t *testing.T) {
	e := newEnv(t)
	a, _ := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	done := e.waitAsync(ctx, a.ID, 2*time.Hour, time.Hour)
	// Let the first read happen, then answer.
	for range 200 {
		e.svc.waitMu.Lock()
		n := len(e.svc.waiters[a.ID])
		e.svc.waitMu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := e.svc.Approve(t.Context(), a.ID, "alice", ScopeOnce); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.w != Answered || r.a.Status != Approved {
		t.Fatalf("Wait = %v, %v, %v; want Answered, approved (woken by Approve)", r.a.Status, r.w, r.err)
	}
	e.svc.waitMu.Lock()
	left := len(e.svc.waiters)
	e.svc.waitMu.Unlock()
	if left != 0 {
		t.Errorf("%d waiter lists left after the wait", left)
	}
}

// An answer recorded by another process (another Service on the same
// database: `homard approval approve` beside serve) is seen by reading.
func TestWaitSeesAnswerFromAnotherProcess(t *testing.T) {
	e := newEnv(t)
	a, _ := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
	other := New(e.st, Options{Now: e.clock.Now})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	done := e.waitAsync(ctx, a.ID, 2*time.Hour, 5*time.Millisecond)
	if _, err := other.Deny(t.Context(), a.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.w != Answered || r.a.Status != Denied {
		t.Fatalf("Wait = %v, %v, %v; want Answered, denied", r.a.Status, r.w, r.err)
	}
}

// Nobody answers: the wait lapses when within has passed, the approval
// stays pending; and it lapses at the approval's own expiry when that
// comes first.
func TestWaitLapses(t *testing.T) {
	e := newEnv(t)
	a, _ := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	done := e.waitAsync(ctx, a.ID, time.Minute, 5*time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("Wait returned %v, %v before the minute passed", r.w, r.err)
	case <-time.After(50 * time.Millisecond):
	}
	e.clock.Advance(time.Minute)
	r := <-done
	if r.err != nil || r.w != Lapsed || r.a.Status != Pending {
		t.Fatalf("Wait = %v, %v, %v; want Lapsed, still pending", r.a.Status, r.w, r.err)
	}

	done = e.waitAsync(ctx, a.ID, 24*time.Hour, 5*time.Millisecond)
	e.clock.Advance(30 * time.Minute) // the approval's TTL
	if r := <-done; r.err != nil || r.w != Lapsed {
		t.Fatalf("Wait past the approval's expiry = %v, %v; want Lapsed", r.w, r.err)
	}
}

// Lapse (the turn that asked ended) wakes a waiter, which lapses too.
func TestWaitWokenByLapse(t *testing.T) {
	e := newEnv(t)
	a, _ := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	done := e.waitAsync(ctx, a.ID, 2*time.Hour, time.Hour)
	time.Sleep(20 * time.Millisecond)
	if n, err := e.svc.Lapse(t.Context(), []string{a.ID}, t0); err != nil || n != 1 {
		t.Fatalf("Lapse = %d, %v", n, err)
	}
	r := <-done
	if r.err != nil || r.w != Lapsed || r.a.Status != Expired {
		t.Fatalf("Wait = %v, %v, %v; want Lapsed, expired", r.a.Status, r.w, r.err)
	}
}

// The waiter's context ending ends the wait with its error.
func TestWaitContextEnds(t *testing.T) {
	e := newEnv(t)
	a, _ := e.request(t, "alice", "s1", "notes/a.md", policy.RiskMedium)
	ctx, cancel := context.WithCancel(t.Context())
	done := e.waitAsync(ctx, a.ID, time.Hour, time.Hour)
	cancel()
	if r := <-done; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Wait after cancel = %v, %v; want context.Canceled", r.w, r.err)
	}
}
