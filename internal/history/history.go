// Package history keeps the decoded conversations of recently used
// sessions, so that a turn reads from the database only the turns stored
// since the one before it instead of the whole session again.
//
// Without it a session's every turn decoded all its earlier turns from
// SQLite (rows, then the tool calls' JSON): over 50 one-tool turns that
// was the largest part of the per-turn growth (BenchmarkSessionGrowth in
// internal/app).
//
// The cache relies on how sessions are stored: a turn's messages are
// written whole in one transaction (store.Tx.AppendTurn), turn numbers
// only grow, and stored messages are never changed, only deleted with
// their session. So what is cached is a prefix of what the database
// holds, and the rest is "the turns after the last cached one". A session
// deleted and created again under the same id is told apart by its
// creation time (born); a summary that now covers more turns trims the
// cached prefix. Any process may append turns (another `homard run` on
// the same home): they are read as the turns after the cached ones.
//
// Contract: a Cache is safe for concurrent use. The slices Load returns
// must not be modified (agent.Conversation.History is not); appending to
// them is safe, as they are returned without spare capacity.
package history

import (
	"slices"
	"sync"
)

// DefaultSessions is how many sessions a Cache keeps by default. A
// session's loaded history is bounded by the context budget (older turns
// are folded into a summary and no longer loaded).
const DefaultSessions = 8

// A Cache keeps the messages M of up to max sessions, least recently used
// first out.
type Cache[M any] struct {
	mu    sync.Mutex
	max   int
	clock uint64
	m     map[string]*entry[M]
}

type entry[M any] struct {
	born    int64 // the session's creation time, unix nanoseconds
	through int   // the summary covers turns ≤ through; none of them is kept
	last    int   // the last turn read; msgs holds turns (through, last]
	msgs    []M
	turns   []int // turns[i] is msgs[i]'s turn
	used    uint64
}

// New returns a Cache of at most max sessions (DefaultSessions when max
// is not positive).
func New[M any](max int) *Cache[M] {
	if max <= 0 {
		max = DefaultSessions
	}
	return &Cache[M]{max: max, m: make(map[string]*entry[M])}
}

// Fetch reads the messages of the session's turns after afterTurn, in
// conversation order, and each one's turn.
type Fetch[M any] func(afterTurn int) (msgs []M, turns []int, err error)

// Load returns the messages of session's turns after through (the turns
// its summary does not cover) and each one's turn, reading through fetch
// only the turns stored after those it holds. born identifies the session
// (its creation time).
func (c *Cache[M]) Load(session string, born int64, through int, fetch Fetch[M]) ([]M, []int, error) {
	c.mu.Lock()
	e := c.m[session]
	if e == nil || e.born != born || through < e.through {
		e = &entry[M]{born: born, through: through, last: through}
	} else if through > e.through {
		// The summary now covers more turns: drop them from the front.
		i, _ := slices.BinarySearch(e.turns, through+1)
		e = &entry[M]{born: born, through: through, last: max(e.last, through),
			msgs: slices.Clone(e.msgs[i:]), turns: slices.Clone(e.turns[i:])}
	}
	last := e.last
	c.mu.Unlock()

	// Read outside the lock: other sessions' loads go on meanwhile.
	msgs, turns, err := fetch(last)
	if err != nil {
		return nil, nil, err
	}
	if len(turns) > 0 {
		last = turns[len(turns)-1]
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	c.clock++
	// Another load of this session may have added turns to e meanwhile:
	// add only the fetched turns after e's last.
	i, _ := slices.BinarySearch(turns, e.last+1)
	msgs, turns = msgs[i:], turns[i:]
	last = max(last, e.last)
	if cur := c.m[session]; cur == e {
		// The entry in the map: append in place, into spare capacity when
		// there is some. A slice returned before has no capacity (Clip),
		// so it never sees what is appended after it.
		e.msgs, e.turns, e.last, e.used = append(e.msgs, msgs...), append(e.turns, turns...), last, c.clock
	} else {
		fresh := &entry[M]{born: born, through: through, last: last, used: c.clock,
			msgs: append(slices.Clip(e.msgs), msgs...), turns: append(slices.Clip(e.turns), turns...)}
		if cur == nil || cur.born != born || cur.through <= through && cur.last <= last {
			c.m[session] = fresh
			c.evict()
		}
		e = fresh
	}
	return slices.Clip(e.msgs), slices.Clip(e.turns), nil
}

// Forget drops what the cache holds of session.
func (c *Cache[M]) Forget(session string) {
	c.mu.Lock()
	delete(c.m, session)
	c.mu.Unlock()
}

// evict drops the least recently used sessions past max. Called with mu
// held.
func (c *Cache[M]) evict() {
	for len(c.m) > c.max {
		var oldest string
		var used uint64
		for s, e := range c.m {
			if oldest == "" || e.used < used {
				oldest, used = s, e.used
			}
		}
		delete(c.m, oldest)
	}
}
