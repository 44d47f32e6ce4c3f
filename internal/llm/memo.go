package llm

import (
	"bytes"
	"errors"
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

// size is what a key holds on to, in bytes.
func (k Key) size() int {
	return len(k.content) + len(k.toolCallID) + len(k.call[0]) + len(k.call[1]) + len(k.call[2]) + len(k.calls)
}

// Memo remembers a value computed from a message, for at most MaxBytes of
// messages (content and calls); past that it forgets everything and starts
// again, so a memo costs nothing once its sessions are over and never more
// than about MaxBytes plus its values. The zero Memo is ready to use, with
// MaxBytes 8 MiB. It is safe for concurrent use.
type Memo[V any] struct {
	// MaxBytes bounds the messages remembered. Zero means 8 MiB.
	MaxBytes int

	mu    sync.Mutex
	m     map[Key]V
	bytes int
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
		limit = 8 << 20
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
func SpliceMessages(env []byte, msgs [][]byte) ([]byte, error) {
	i := bytes.Index(env, nullMessages)
	if i < 0 {
		return nil, errors.New(`request has no "messages":null to fill`)
	}
	n := len(env) + 2
	for _, m := range msgs {
		n += len(m) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, env[:i+len(nullMessages)-len("null")]...)
	out = append(out, '[')
	for j, m := range msgs {
		if j > 0 {
			out = append(out, ',')
		}
		out = append(out, m...)
	}
	out = append(out, ']')
	return append(out, env[i+len(nullMessages):]...), nil
}
