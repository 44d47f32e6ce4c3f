package history

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// db is a fake session store: turns of string messages, two per turn.
type db struct {
	turns   map[string][]int // session → its turn numbers
	fetches []int            // afterTurn of every fetch
}

func (d *db) add(session string, n int) {
	for range n {
		d.turns[session] = append(d.turns[session], len(d.turns[session])+1)
	}
}

func (d *db) fetch(session string) Fetch[string] {
	return func(after int) ([]string, []int, error) {
		d.fetches = append(d.fetches, after)
		var msgs []string
		var turns []int
		for _, t := range d.turns[session] {
			if t > after {
				msgs = append(msgs, fmt.Sprintf("%s/%d/user", session, t), fmt.Sprintf("%s/%d/answer", session, t))
				turns = append(turns, t, t)
			}
		}
		return msgs, turns, nil
	}
}

func want(session string, from, to int) []string {
	var out []string
	for t := from; t <= to; t++ {
		out = append(out, fmt.Sprintf("%s/%d/user", session, t), fmt.Sprintf("%s/%d/answer", session, t))
	}
	return out
}

func TestLoadReadsOnlyNewTurns(t *testing.T) {
	d := &db{turns: map[string][]int{}}
	c := New[string](0)
	d.add("s", 3)
	got, turns, err := c.Load("s", 1, 0, d.fetch("s"))
	if err != nil || !slices.Equal(got, want("s", 1, 3)) || !slices.Equal(turns, []int{1, 1, 2, 2, 3, 3}) {
		t.Fatalf("first load = %q %v, %v", got, turns, err)
	}
	d.add("s", 2)
	got, _, _ = c.Load("s", 1, 0, d.fetch("s"))
	if !slices.Equal(got, want("s", 1, 5)) {
		t.Errorf("second load = %q; want turns 1-5", got)
	}
	if !slices.Equal(d.fetches, []int{0, 3}) {
		t.Errorf("fetched after turns %v; want [0 3]: the second load reads only turns 4-5", d.fetches)
	}
	// Appending to what Load returned does not change the cache.
	_ = append(got, "planted")
	again, _, _ := c.Load("s", 1, 0, d.fetch("s"))
	if !slices.Equal(again, want("s", 1, 5)) {
		t.Errorf("after an append to a returned slice the cache holds %q", again)
	}
}

// TestLoadTwins: the cases that must read again from the start — a session
// deleted and created again (another born), a summary covering fewer
// turns — and the one that trims: a summary covering more.
func TestLoadTwins(t *testing.T) {
	d := &db{turns: map[string][]int{}}
	c := New[string](0)
	d.add("s", 4)
	c.Load("s", 1, 0, d.fetch("s"))

	// The summary now covers turns 1-2: they are dropped, nothing is read
	// again but turns after 4.
	d.fetches = nil
	got, turns, _ := c.Load("s", 1, 2, d.fetch("s"))
	if !slices.Equal(got, want("s", 3, 4)) || !slices.Equal(turns, []int{3, 3, 4, 4}) || !slices.Equal(d.fetches, []int{4}) {
		t.Errorf("after a fold through 2: %q %v, fetched %v; want turns 3-4, fetched [4]", got, turns, d.fetches)
	}

	// Deleted and created again: new born, turns restart at 1.
	d.turns["s"] = nil
	d.add("s", 1)
	d.fetches = nil
	got, _, _ = c.Load("s", 2, 0, d.fetch("s"))
	if !slices.Equal(got, want("s", 1, 1)) || !slices.Equal(d.fetches, []int{0}) {
		t.Errorf("recreated session: %q, fetched %v; want turn 1 read from the start", got, d.fetches)
	}

	// A summary that covers fewer turns than the cache thinks: read again.
	d.add("s", 3)
	c.Load("s", 2, 2, d.fetch("s"))
	d.fetches = nil
	got, _, _ = c.Load("s", 2, 1, d.fetch("s"))
	if !slices.Equal(got, want("s", 2, 4)) || !slices.Equal(d.fetches, []int{1}) {
		t.Errorf("summary moved back: %q, fetched %v; want turns 2-4 read after 1", got, d.fetches)
	}
}

func TestLoadErrorIsNotCached(t *testing.T) {
	d := &db{turns: map[string][]int{}}
	c := New[string](0)
	d.add("s", 2)
	boom := errors.New("disk")
	if _, _, err := c.Load("s", 1, 0, func(int) ([]string, []int, error) { return nil, nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("Load err = %v; want the fetch's", err)
	}
	got, _, err := c.Load("s", 1, 0, d.fetch("s"))
	if err != nil || !slices.Equal(got, want("s", 1, 2)) || !slices.Equal(d.fetches, []int{0}) {
		t.Errorf("after a failed fetch: %q %v, fetched %v; want everything read from the start", got, err, d.fetches)
	}
}

func TestEvictsLeastRecentlyUsed(t *testing.T) {
	d := &db{turns: map[string][]int{}}
	c := New[string](2)
	for _, s := range []string{"a", "b"} {
		d.add(s, 1)
		c.Load(s, 1, 0, d.fetch(s))
	}
	c.Load("a", 1, 0, d.fetch("a")) // a is now the most recent
	d.add("c", 1)
	c.Load("c", 1, 0, d.fetch("c"))
	d.fetches = nil
	c.Load("a", 1, 0, d.fetch("a"))
	c.Load("b", 1, 0, d.fetch("b"))
	if !slices.Equal(d.fetches, []int{1, 0}) {
		t.Errorf("fetched after %v; want [1 0]: a kept, b evicted", d.fetches)
	}
	c.Forget("a")
	d.fetches = nil
	c.Load("a", 1, 0, d.fetch("a"))
	if !slices.Equal(d.fetches, []int{0}) {
		t.Errorf("after Forget fetched after %v; want [0]", d.fetches)
	}
}

// TestLoadConcurrent: loads of one session from many goroutines while
// turns are appended each see a prefix of the session in order (run with
// -race: the in-place append is under the lock).
func TestLoadConcurrent(t *testing.T) {
	var mu sync.Mutex
	n := 0 // turns stored
	fetch := func(after int) ([]string, []int, error) {
		mu.Lock()
		defer mu.Unlock()
		var msgs []string
		var turns []int
		for tn := after + 1; tn <= n; tn++ {
			msgs, turns = append(msgs, fmt.Sprint(tn)), append(turns, tn)
		}
		return msgs, turns, nil
	}
	c := New[string](0)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				mu.Lock()
				n++
				mu.Unlock()
				got, turns, err := c.Load("s", 1, 0, fetch)
				if err != nil {
					t.Error(err)
					return
				}
				for i := range got {
					if got[i] != fmt.Sprint(i+1) || turns[i] != i+1 {
						t.Errorf("load %d: %v; want 1..%d in order", len(got), got, len(got))
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
