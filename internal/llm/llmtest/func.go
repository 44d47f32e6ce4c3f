package llmtest

import (
	"context"
	"sync"

	"github.com/homard/homard/internal/llm"
)

// Func is an llm.Model whose answers are computed from the requests: call
// i (from 0) is answered with Reply(i, req), event by event, as Scripted
// plays a turn. It records every request. It is safe for concurrent use if
// Reply is.
type Func struct {
	reply func(call int, req llm.Request) []llm.Event

	mu       sync.Mutex // guards requests
	requests []llm.Request
}

var _ llm.Model = (*Func)(nil)

// NewFunc returns a model that answers with reply.
func NewFunc(reply func(call int, req llm.Request) []llm.Event) *Func {
	return &Func{reply: reply}
}

// Stream records req and plays reply's answer to it.
func (f *Func) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	f.mu.Lock()
	call := len(f.requests)
	f.requests = append(f.requests, kept(req))
	f.mu.Unlock()
	return &scriptedStream{ctx: ctx, events: f.reply(call, req)}, nil
}

// Requests returns a copy of the requests received so far.
func (f *Func) Requests() []llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]llm.Request(nil), f.requests...)
}
