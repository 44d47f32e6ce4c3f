package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A long session sends its whole history with every request. What is done
// to each message for a request — its wire encoding, its token estimate —
// does not change from one request to the next, so doing it again for
// every old message made each turn a little slower than the one before
// (issue 22: +12–18 % over 50 turns). A Memo remembers that work per
// message.

// Key is a comparable form of a Message: two messages with equal keys are
// equal in every field. Its strings share the message's memory.
type Key struct {
	role       Role
	content    string
	toolCallID string
	call       [3]string // a single tool call's ID, name and arguments
	calls      string    // two or more tool calls, length-prefixed
}

// KeyOf returns m's key. Only a message with two or more tool calls costs
// an allocation (its calls, written out once).
func KeyOf(m Message) Key {
	k := Key{role: m.Role, content: m.Content, toolCallID: m.ToolCallID}
	if len(m.ToolCalls) == 1 {
		c := m.ToolCalls[0]
		k.call = [3]string{c.ID, c.Name, string(c.Args)}
	} else if len(m.ToolCalls) > 1 {
		var b strings.Builder
		for _, c := range m.ToolCalls {
			for _, s := range []string{c.ID, c.Name, string(c.Args)} {
				// Length-prefixed, so that no choice of fields can
				// write the same key as another.
				b.WriteString(strconv.Itoa(len(s)))
				b.WriteByte(':')
				b.WriteString(s)
			}
		}
		k.calls = b.String()
	}
	return k
}

// size is what a key holds on to, in bytes, and what its entry costs
// besides: a memo of many short messages is bounded by their number too
// (an hour's soak with 64 sessions of short turns grew its live heap to
// 66 MB when only the text was counted).
func (k Key) size() int {
	return entryCost + len(k.content) + len(k.toolCallID) + len(k.call[0]) + len(k.call[1]) + len(k.call[2]) + len(k.calls)
}

// entryCost is what one remembered message costs beyond its text: the
// key's strings and the map's slot, and a typical value (a message's
// wire JSON is counted as about its text again).
const entryCost = 256

// Memo remembers a value computed from a message, for at most MaxBytes of
// messages (content and calls, and entryCost each); past that it forgets
// everything and starts again, so a memo costs nothing once its sessions
// are over and never more than about MaxBytes plus its values. The zero
// Memo is ready to use, with MaxBytes 4 MiB. It is safe for concurrent
// use.
type Memo[V any] struct {
	// MaxBytes bounds the messages remembered. Zero means 4 MiB.
	MaxBytes int

	mu    sync.Mutex
	m     map[Key]V
	bytes int
	runs  [memoRuns]run[V]
	clock uint64 // counts Seq calls, to find the run served longest ago
}

// memoRuns is how many recent sequences a Memo keeps for Seq: about as
// many conversations as take turns on one client at a time.
const memoRuns = 4

// A run is a sequence of messages Seq served and their values. The next
// request of the same conversation starts with it: looking its messages
// up again would hash every old message's text (at 50 turns, 45 KB a
// request) and touch a large map at random.
type run[V any] struct {
	msgs []Message
	vals []V
	used uint64 // when last served
	gen  uint64 // when made: tells a run from the one that took its place
}

// Get returns the value for m, computing it with f the first time.
func (c *Memo[V]) Get(m Message, f func(Message) V) V {
	k := KeyOf(m)
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = f(m)
	c.mu.Lock()
	defer c.mu.Unlock()
	limit := c.MaxBytes
	if limit <= 0 {
		limit = 4 << 20
	}
	if c.m == nil || c.bytes+k.size() > limit {
		c.m, c.bytes = make(map[Key]V), 0
	}
	if k.size() <= limit {
		if _, dup := c.m[k]; !dup {
			c.bytes += k.size()
		}
		c.m[k] = v
	}
	return v
}

// Seq returns f's values for msgs in order, as Get would for each. A
// request's messages are those of the previous request of its
// conversation and a few more: Seq compares msgs with the sequences it
// served last, message by message (an old message's strings are shared
// with the history it came from, so comparing them compares pointers), and
// computes or looks up only what follows the longest match. The result
// must not be modified; appending to it copies.
func (c *Memo[V]) Seq(msgs []Message, f func(Message) V) []V {
	vals, _ := c.SeqKnown(msgs, f)
	return vals
}

// SeqKnown is Seq, and how many of msgs' first messages an earlier call
// served in the same order (the conversation it continues).
func (c *Memo[V]) SeqKnown(msgs []Message, f func(Message) V) (vals []V, known int) {
	c.mu.Lock()
	c.clock++
	best, n := -1, 0
	for i := range c.runs {
		r := &c.runs[i]
		k := 0
		for k < len(r.msgs) && k < len(msgs) && sameMessage(r.msgs[k], msgs[k]) {
			k++
		}
		if k > n {
			best, n = i, k
		}
	}
	var gen uint64
	var knownMsgs []Message // a run's first n: never written again
	var knownVals []V
	if best >= 0 {
		r := &c.runs[best]
		r.used, gen = c.clock, r.gen
		knownMsgs, knownVals = r.msgs[:n:n], r.vals[:n:n]
		if n == len(msgs) {
			c.mu.Unlock()
			return knownVals, n
		}
	}
	c.mu.Unlock()
	// What follows the match: looked up one by one, outside the lock.
	more := make([]V, 0, len(msgs)-n)
	owned := make([]Message, 0, len(msgs)-n)
	for _, m := range msgs[n:] {
		more = append(more, c.Get(m, f))
		owned = append(owned, ownMessage(m))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if best >= 0 {
		r := &c.runs[best]
		if r.gen == gen && len(r.msgs) == n {
			// The request extends the run: appended in place. A slice
			// the run returned before ends where the run did then, and
			// its capacity with it, so nothing it holds changes.
			r.msgs, r.vals = append(r.msgs, owned...), append(r.vals, more...)
			return r.vals[:len(r.vals):len(r.vals)], n
		}
	}
	// A new run, in the place of the one served longest ago; the run it
	// branches from is only read.
	old := 0
	for i := range c.runs {
		if c.runs[i].used < c.runs[old].used {
			old = i
		}
	}
	r := run[V]{msgs: make([]Message, 0, len(msgs)+8), vals: make([]V, 0, len(msgs)+8), used: c.clock, gen: c.clock}
	r.msgs, r.vals = append(append(r.msgs, knownMsgs...), owned...), append(append(r.vals, knownVals...), more...)
	c.runs[old] = r
	return r.vals[:len(r.vals):len(r.vals)], n
}

// ownMessage returns m with its tool calls' arguments copied: a caller
// changing its bytes later must not change what a run remembers.
func ownMessage(m Message) Message {
	if len(m.ToolCalls) == 0 {
		return m
	}
	calls := make([]ToolCall, len(m.ToolCalls))
	for i, c := range m.ToolCalls {
		c.Args = append(json.RawMessage(nil), c.Args...)
		calls[i] = c
	}
	m.ToolCalls = calls
	return m
}

// sameMessage reports whether a and b are equal in every field. Strings
// sharing memory compare in constant time.
func sameMessage(a, b Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolCallID != b.ToolCallID || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i, c := range a.ToolCalls {
		d := b.ToolCalls[i]
		if c.ID != d.ID || c.Name != d.Name || string(c.Args) != string(d.Args) {
			return false
		}
	}
	return true
}

// Len returns how many messages c remembers.
func (c *Memo[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// nullMessages is how a wire request's messages field encodes when left
// nil. It cannot occur inside a JSON string: the quotes would be escaped.
var nullMessages = []byte(`"messages":null`)

// SpliceMessages returns env, a request encoded with its "messages" field
// nil, with that field's null replaced by the array of msgs, each one
// message's JSON as encoding/json wrote it: the bytes json.Marshal would
// have written for the whole request, without encoding the history again.
// The result is a buffer of GetBuffer: hand it to Endpoint.Stream, or to
// PutBuffer once used, and it is reused.
func SpliceMessages(env []byte, msgs [][]byte) ([]byte, error) {
	return SpliceSeq(env, slices.Values(msgs))
}

// SpliceSeq is SpliceMessages of the messages msgs yields (twice: once to
// size the buffer), for a caller that has them in a list of its own.
func SpliceSeq(env []byte, msgs iter.Seq[[]byte]) ([]byte, error) {
	n := len(env) + 2
	for m := range msgs {
		n += len(m) + 1
	}
	return AppendSpliced(GetBuffer(n), env, msgs)
}

// AppendSpliced appends SpliceSeq's result to dst.
func AppendSpliced(dst, env []byte, msgs iter.Seq[[]byte]) ([]byte, error) {
	i := bytes.Index(env, nullMessages)
	if i < 0 {
		return nil, errors.New(`request has no "messages":null to fill`)
	}
	out := append(dst, env[:i+len(nullMessages)-len("null")]...)
	out = append(out, '[')
	first := true
	for m := range msgs {
		if !first {
			out = append(out, ',')
		}
		out, first = append(out, m...), false
	}
	out = append(out, ']')
	return append(out, env[i+len(nullMessages):]...), nil
}
