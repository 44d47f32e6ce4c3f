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
	Bytes       int       `json:"bytes"`
	SystemBytes int       `json:"system_bytes"`
	Messages    []Message `json:"messages"`
	Tools       []string  `json:"tools"` // the tools offered
	NoToolCalls bool      `json:"no_tool_calls,omitempty"`
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
	mu   sync.Mutex
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

// EntryOf describes req as a line of the log.
func (l *Log) EntryOf(role string, req llm.Request) Entry {
	e := Entry{Time: l.o.Now().UTC(), Role: role, Model: req.Model, SystemBytes: len(req.System), NoToolCalls: req.NoToolCalls,
		Messages: make([]Message, 0, len(req.Messages)), Tools: make([]string, 0, len(req.Tools))}
	e.Bytes = e.SystemBytes
	for _, m := range req.Messages {
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
		e.Bytes += n
		e.Messages = append(e.Messages, em)
	}
	for _, t := range req.Tools {
		e.Tools = append(e.Tools, t.Name)
	}
	return e
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
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if fi, err := os.Stat(l.path); err == nil && fi.Size()+int64(len(line)) > l.o.MaxBytes {
		_ = os.Rename(l.path, l.path+".1")
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	_, _ = f.Write(line)
	_ = f.Close()
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
	w.l.Add(w.l.EntryOf(w.role, req))
	return w.Model.Stream(ctx, req)
}
