// Package reqlog keeps a record of what each model request contained
// (`homard logs`, issue 25): one JSON line per request with its sizes,
// message roles and tool names — and the messages' text only when the
// owner turns that on (telemetry.log_model_inputs), redacted. It answers
// "what did the model actually get?" without a debugger, and never holds
// a secret: text goes through the runtime's redactor first.
//
// The file (0600) is appended to by the model wrapper (Wrap) and rotated
// to FILE.1 past MaxBytes; a write that fails is dropped, never failing
// the request.
package reqlog

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/homard/homard/internal/llm"
)

// DefaultMaxBytes is where the file is rotated.
const DefaultMaxBytes = 16 << 20

// Entry is one model request.
type Entry struct {
	Time  time.Time `json:"time"`
	Role  string    `json:"role"` // the model's role: main, planner, worker, capture, summary
	Model string    `json:"model"`
	// Bytes is the request's text in bytes: the system prompt, every
	// message's content and tool-call arguments (not the wire's framing).
	Bytes       int `json:"bytes"`
	SystemBytes int `json:"system_bytes"`
	// Earlier sums up the request's first messages when an earlier line
	// described them, in this order (the conversation so far): Messages
	// then lists only those after them. A long session's line would
	// otherwise describe its whole history again, request after request.
	// Nil: Messages lists every message.
	Earlier     *Earlier  `json:"earlier,omitempty"`
	Messages    []Message `json:"messages"`
	Tools       []string  `json:"tools"` // the tools offered
	NoToolCalls bool      `json:"no_tool_calls,omitempty"`
}

// Earlier is what the leading messages an earlier line described add up
// to.
type Earlier struct {
	Messages  int `json:"messages"`
	Bytes     int `json:"bytes"`
	User      int `json:"user"`
	Assistant int `json:"assistant"`
	Tool      int `json:"tool"`
	Calls     int `json:"calls"` // the tool calls among them
}

// add counts m in e.
func (e *Earlier) add(m Message) {
	e.Messages++
	e.Bytes += m.Bytes
	e.Calls += len(m.Calls)
	switch m.Role {
	case string(llm.RoleUser):
		e.User++
	case string(llm.RoleAssistant):
		e.Assistant++
	case string(llm.RoleTool):
		e.Tool++
	}
}

// Message is one message of a request.
type Message struct {
	Role  string `json:"role"`
	Bytes int    `json:"bytes"`
	// Calls are the tools an assistant message called; Answers the call
	// id a tool message answers.
	Calls   []string `json:"calls,omitempty"`
	Answers string   `json:"answers,omitempty"`
	// Text is the content, redacted, only with log_model_inputs.
	Text string `json:"text,omitempty"`
}

// Options configure a Log.
type Options struct {
	// Text keeps each message's text (redacted) too.
	Text bool
	// Redact removes secrets from text; required when Text is set.
	Redact func(string) string
	// MaxBytes rotates the file; zero means DefaultMaxBytes.
	MaxBytes int64
	Now      func() time.Time
}

// Log appends entries to one file. Safe for concurrent use; nil is a
// no-op.
type Log struct {
	path string
	o    Options
	// lines remembers each message's part of a line (without its text:
	// a redaction is done again each time, as the redactor learns new
	// secrets), and which messages an earlier line described, so that a
	// long session's request is not described again message by message.
	lines llm.Memo[described]

	mu   sync.Mutex
	buf  []byte   // record's line, kept for the next
	msgs [][]byte // line's message parts, kept for the next
	f    *os.File // open for appending; nil until the first write or after a failure
	size int64    // f's size
	seen time.Time
}

// described is one message's JSON in a line (without its text), and the
// message it encodes.
type described struct {
	json []byte
	m    Message
}

// Open returns a Log appending to path (created 0600 on first write).
func Open(path string, o Options) *Log {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Redact == nil {
		o.Text = false // never text that was not redacted
	}
	return &Log{path: path, o: o}
}

// Path is the file the log appends to.
func (l *Log) Path() string { return l.path }

// EntryOf describes req as a line of the log, every message listed.
func (l *Log) EntryOf(role string, req llm.Request) Entry {
	return l.entryAfter(role, req, 0)
}

// entryAfter is EntryOf with req's first known messages summed up in
// Earlier (none when known is 0).
func (l *Log) entryAfter(role string, req llm.Request, known int) Entry {
	e := l.envelope(role, req)
	e.Messages = make([]Message, 0, len(req.Messages)-known)
	var earlier Earlier
	for i, m := range req.Messages {
		em := l.message(m)
		e.Bytes += em.Bytes
		if i < known {
			earlier.add(em)
		} else {
			e.Messages = append(e.Messages, em)
		}
	}
	if known > 0 {
		e.Earlier = &earlier
	}
	return e
}

// envelope is req's entry without its messages.
func (l *Log) envelope(role string, req llm.Request) Entry {
	e := Entry{Time: l.o.Now().UTC(), Role: role, Model: req.Model, SystemBytes: len(req.System), NoToolCalls: req.NoToolCalls,
		Bytes: len(req.System), Tools: make([]string, 0, len(req.Tools))}
	for _, t := range req.Tools {
		e.Tools = append(e.Tools, t.Name)
	}
	return e
}

// message describes one message.
func (l *Log) message(m llm.Message) Message {
	n := len(m.Content)
	em := Message{Role: string(m.Role), Answers: m.ToolCallID}
	for _, c := range m.ToolCalls {
		em.Calls = append(em.Calls, c.Name)
		n += len(c.Args)
	}
	em.Bytes = n
	if l.o.Text {
		em.Text = l.o.Redact(m.Content)
	}
	return em
}

// line appends the JSON of entryAfter(role, req, known) to dst, byte for
// byte, where known is how many of req's first messages an earlier line
// described in this order. Each message's part is remembered across
// requests (without its text: a redaction is done again each time, as
// the redactor learns new secrets). l.mu is held: the list of parts is
// l's own.
func (l *Log) line(dst []byte, role string, req llm.Request) ([]byte, error) {
	e := l.envelope(role, req)
	parts, known := l.lines.SeqKnown(req.Messages, func(m llm.Message) described {
		em := l.message(m)
		em.Text = ""
		b, err := json.Marshal(em)
		if err != nil {
			panic(err) // a Message of strings, ints and a string slice always encodes
		}
		return described{json: b, m: em}
	})
	var earlier Earlier
	l.msgs = l.msgs[:0]
	for i, p := range parts {
		e.Bytes += p.m.Bytes
		switch {
		case i < known:
			earlier.add(p.m)
		case l.o.Text:
			b, err := json.Marshal(l.message(req.Messages[i]))
			if err != nil {
				return nil, err
			}
			l.msgs = append(l.msgs, b)
		default:
			l.msgs = append(l.msgs, p.json)
		}
	}
	if known > 0 {
		e.Earlier = &earlier
	}
	env, err := json.Marshal(e) // Messages nil: "messages":null, filled below
	if err != nil {
		return nil, err
	}
	return llm.AppendSpliced(dst, env, slices.Values(l.msgs))
}

// maxKept is the largest line buffer record keeps for the next line.
const maxKept = 1 << 20

// record writes req's line. The line is built in a buffer l keeps, as
// is the list of its messages' parts: a long session's line is kilobytes
// a request, which allocated afresh grew the garbage collector's share
// of a turn with the session (issue 22).
func (l *Log) record(role string, req llm.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line, err := l.line(l.buf[:0], role, req)
	if err != nil {
		return
	}
	line = append(line, '\n')
	l.writeLocked(line)
	if cap(line) <= maxKept {
		l.buf = line[:0]
	}
}

// Add appends e; a failure is dropped (the log is a diagnostic, never a
// reason for a request to fail).
func (l *Log) Add(e Entry) {
	if l == nil {
		return
	}
	line, err := json.Marshal(e)
	if err != nil {
		return
	}
	l.write(line)
}

// reopenEvery is how often write checks that the file it holds open is
// still the one at the path (an owner may move or delete the log).
const reopenEvery = 5 * time.Second

// write appends line and a newline, rotating the file first when it
// would grow past MaxBytes.
func (l *Log) write(line []byte) {
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writeLocked(line)
}

// writeLocked is write of a line ending in its newline, l.mu held.
func (l *Log) writeLocked(line []byte) {
	now := time.Now()
	if l.f != nil && now.Sub(l.seen) > reopenEvery {
		if fi, err := os.Stat(l.path); err != nil || !sameFile(l.f, fi) {
			l.close()
		}
		l.seen = now
	}
	if l.f == nil && !l.open(now) {
		return
	}
	if l.size > 0 && l.size+int64(len(line)) > l.o.MaxBytes {
		l.close()
		_ = os.Rename(l.path, l.path+".1")
		if !l.open(now) {
			return
		}
	}
	n, err := l.f.Write(line)
	l.size += int64(n)
	if err != nil {
		l.close()
	}
}

// open opens the path for appending and reports whether it could.
func (l *Log) open(now time.Time) bool {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return false
	}
	l.f, l.size, l.seen = f, fi.Size(), now
	return true
}

// sameFile reports whether fi is the file f has open.
func sameFile(f *os.File, fi os.FileInfo) bool {
	own, err := f.Stat()
	return err == nil && os.SameFile(own, fi)
}

// close closes the file held open; the next write opens the path again.
func (l *Log) close() {
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}

// Close closes the file; a later write opens it again.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.close()
	return nil
}

// Wrap returns m logging each request it is sent as role; nil l returns
// m itself.
func (l *Log) Wrap(m llm.Model, role string) llm.Model {
	if l == nil || m == nil {
		return m
	}
	return logged{Model: m, l: l, role: role}
}

type logged struct {
	llm.Model
	l    *Log
	role string
}

func (w logged) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	w.l.record(w.role, req)
	return w.Model.Stream(ctx, req)
}
