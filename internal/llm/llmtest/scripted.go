// Package llmtest holds fakes for tests of code that talks to a model: a
// Scripted llm.Model that plays back a list of turns, and httptest servers
// that speak the OpenAI Chat Completions and Anthropic Messages streaming
// wire formats byte for byte, including broken streams and error answers.
//
// It is production code (no "testing" import) so that internal/eval can use
// it too.
package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/homard/homard/internal/llm"
)

// ErrScriptExhausted is returned when a Scripted model is asked for more
// turns than it was given.
var ErrScriptExhausted = errors.New("llmtest: scripted model has no more turns")

// Scripted is an llm.Model that answers call i with Turns[i], event by
// event, exactly as written (a turn that does not end in Done simulates a
// cut stream). It records every request. It is safe for concurrent use.
type Scripted struct {
	mu       sync.Mutex // guards turns, next, requests
	turns    [][]llm.Event
	next     int
	requests []llm.Request
}

var _ llm.Model = (*Scripted)(nil)

// NewScripted returns a model that plays turns in order.
func NewScripted(turns ...[]llm.Event) *Scripted {
	return &Scripted{turns: turns}
}

// Stream returns the next turn.
func (s *Scripted) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, kept(req))
	if s.next >= len(s.turns) {
		return nil, fmt.Errorf("call %d: %w", s.next+1, ErrScriptExhausted)
	}
	turn := s.turns[s.next]
	s.next++
	return &scriptedStream{ctx: ctx, events: turn}, nil
}

// Requests returns a copy of the requests received so far.
func (s *Scripted) Requests() []llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llm.Request(nil), s.requests...)
}

// Remaining reports how many turns have not been played.
func (s *Scripted) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns) - s.next
}

// scriptedStream is used by one goroutine, like every llm.Stream. ctx is
// kept because the stream lives within the Stream call's context, as an
// http.Response body does.
type scriptedStream struct {
	ctx    context.Context
	events []llm.Event
	err    error
	closed bool
}

func (s *scriptedStream) Next() (llm.Event, error) {
	if s.err != nil {
		return llm.Event{Kind: llm.EventError, Err: s.err}, s.err
	}
	if s.closed {
		s.err = errors.New("llmtest: stream closed")
		return s.Next()
	}
	if err := s.ctx.Err(); err != nil {
		s.err = err
		return s.Next()
	}
	if len(s.events) == 0 {
		return llm.Event{}, io.EOF
	}
	ev := s.events[0]
	s.events = s.events[1:]
	if ev.Kind == llm.EventError {
		s.err = ev.Err
		if s.err == nil {
			s.err = errors.New("llmtest: scripted error")
		}
		return s.Next()
	}
	return ev, nil
}

func (s *scriptedStream) Close() error { s.closed = true; return nil }

// Text is a text-delta event.
func Text(s string) llm.Event { return llm.Event{Kind: llm.EventText, Text: s} }

// Call is a complete tool-call event; args is the raw argument text.
func Call(id, name, args string) llm.Event {
	return llm.Event{Kind: llm.EventToolCall, ToolCall: llm.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}}
}

// Usage is a usage event.
func Usage(input, output, cached int) llm.Event {
	return llm.Event{Kind: llm.EventUsage, Usage: llm.Usage{Input: input, Output: output, Cached: cached}}
}

// Done ends a turn.
func Done(reason llm.StopReason) llm.Event { return llm.Event{Kind: llm.EventDone, StopReason: reason} }

// Fail ends a turn with err.
func Fail(err error) llm.Event { return llm.Event{Kind: llm.EventError, Err: err} }

// Answer is a whole turn: the text in one delta, then Done(StopEnd).
func Answer(text string) []llm.Event { return []llm.Event{Text(text), Done(llm.StopEnd)} }

// kept is req as a model keeps it past its stream: with a list of
// messages of its own (llm.Model: the caller reuses its list).
func kept(req llm.Request) llm.Request {
	req.Messages = slices.Clone(req.Messages)
	return req
}
