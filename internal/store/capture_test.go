package store

import (
	"testing"
	"time"
)

// TestCaptureQueue: queued turns are claimed once, a second claim gets
// none while the first holds them (and all of them once it is stale),
// a release gives them back and a failed attempt counts, finishing
// removes them and records the usage, and deleting the session empties
// its queue.
func TestCaptureQueue(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	stale := t0.Add(-time.Hour)
	for i := range 3 {
		write(t, s, func(tx *Tx) error {
			turn, err := tx.AppendTurn("s", "alice", []MessageRow{{Role: RoleUser, Content: "hi"}, {Role: RoleAssistant, Content: "hello"}}, Usage{}, "", t0.Add(time.Duration(i)*time.Minute))
			if err != nil {
				return err
			}
			return tx.QueueCapture("s", turn)
		})
	}
	waiting := func(stale time.Time) int {
		t.Helper()
		n, err := s.CaptureWaiting(ctx, "s", stale)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	sessions := func(idle time.Time) []string {
		t.Helper()
		list, err := s.CaptureSessions(ctx, idle, stale)
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	if n := waiting(stale); n != 3 {
		t.Fatalf("CaptureWaiting = %d; want 3", n)
	}
	if got := sessions(t0.Add(2 * time.Minute)); len(got) != 0 {
		t.Errorf("CaptureSessions(idle at the last turn) = %v; want none: the session is not idle yet", got)
	}
	if got := sessions(t0.Add(3 * time.Minute)); len(got) != 1 || got[0] != "s" {
		t.Errorf("CaptureSessions(idle after the last turn) = %v; want [s]", got)
	}
	if got := sessions(time.Time{}); len(got) != 1 {
		t.Errorf("CaptureSessions(zero) = %v; want [s]", got)
	}

	claim := func(now time.Time, stale time.Time) (CaptureBatch, bool) {
		t.Helper()
		var b CaptureBatch
		var ok bool
		write(t, s, func(tx *Tx) error {
			var err error
			b, ok, err = tx.ClaimCapture("s", now, stale)
			return err
		})
		return b, ok
	}
	b, ok := claim(t0.Add(time.Hour), stale)
	if !ok || b.First != 1 || b.Last != 3 || b.Turns != 3 || b.Owner != "alice" {
		t.Fatalf("ClaimCapture = %+v, %v; want turns 1-3 of alice", b, ok)
	}
	if turns, err := s.CaptureClaimed(ctx, b); err != nil || len(turns) != 3 || turns[0] != 1 || turns[2] != 3 {
		t.Errorf("CaptureClaimed = %v, %v; want [1 2 3]", turns, err)
	}
	if b2, ok := claim(t0.Add(time.Hour+time.Second), stale); ok {
		t.Fatalf("a second ClaimCapture got %+v while the first holds the turns", b2)
	}
	if n := waiting(stale); n != 0 {
		t.Errorf("CaptureWaiting while claimed = %d; want 0", n)
	}
	if got := sessions(time.Time{}); len(got) != 0 {
		t.Errorf("CaptureSessions while claimed = %v; want none", got)
	}
	// A claim older than the stale time belongs to a dead process.
	if n := waiting(t0.Add(2 * time.Hour)); n != 3 {
		t.Errorf("CaptureWaiting past a stale claim = %d; want 3", n)
	}

	// Released after two failures, the turns wait again; the third
	// failure drops them.
	for i := range 3 {
		b, ok := claim(t0.Add(time.Hour+time.Duration(i+2)*time.Second), stale)
		if i > 0 && !ok {
			t.Fatalf("attempt %d: nothing to claim after a release", i+1)
		}
		if i == 0 {
			// the first claim above still holds; release it first
			write(t, s, func(tx *Tx) error {
				return tx.ReleaseCapture(CaptureBatch{Session: "s", First: 1, Last: 3, Claim: t0.Add(time.Hour).UnixNano()}, false, 3)
			})
			b, ok = claim(t0.Add(time.Hour+time.Duration(i+2)*time.Second), stale)
			if !ok {
				t.Fatal("nothing to claim after a release without a failure")
			}
		}
		write(t, s, func(tx *Tx) error { return tx.ReleaseCapture(b, true, 3) })
		want := 3
		if i == 2 {
			want = 0
		}
		if n := waiting(stale); n != want {
			t.Errorf("after %d failed attempts CaptureWaiting = %d; want %d", i+1, n, want)
		}
	}

	// A new turn, claimed and finished: gone from the queue, usage kept.
	write(t, s, func(tx *Tx) error {
		turn, err := tx.AppendTurn("s", "alice", []MessageRow{{Role: RoleUser, Content: "again"}}, Usage{}, "", t0.Add(2*time.Hour))
		if err != nil {
			return err
		}
		return tx.QueueCapture("s", turn)
	})
	b, ok = claim(t0.Add(3*time.Hour), stale)
	if !ok || b.First != 4 || b.Last != 4 {
		t.Fatalf("ClaimCapture = %+v, %v; want turn 4", b, ok)
	}
	write(t, s, func(tx *Tx) error {
		return tx.FinishCapture(b, Usage{Input: 100, Output: 20, Cached: 50}, t0.Add(3*time.Hour))
	})
	if n := waiting(t0.Add(10 * time.Hour)); n != 0 {
		t.Errorf("CaptureWaiting after FinishCapture = %d; want 0", n)
	}
	tot, err := s.CaptureUsage(ctx, "s")
	if err != nil || tot != (CaptureTotals{Calls: 1, Turns: 1, Usage: Usage{Input: 100, Output: 20, Cached: 50}}) {
		t.Errorf("CaptureUsage = %+v, %v; want one call of turn 4 with its tokens", tot, err)
	}

	write(t, s, func(tx *Tx) error {
		turn, err := tx.AppendTurn("s", "alice", []MessageRow{{Role: RoleUser, Content: "last"}}, Usage{}, "", t0.Add(4*time.Hour))
		if err != nil {
			return err
		}
		return tx.QueueCapture("s", turn)
	})
	write(t, s, func(tx *Tx) error { return tx.DeleteSession("s", "alice", t0.Add(5*time.Hour)) })
	if n := waiting(stale); n != 0 {
		t.Errorf("CaptureWaiting after DeleteSession = %d; want 0", n)
	}
}
