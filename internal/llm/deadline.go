package llm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrModelTimeout is the cause of a stream ended because the model did not
// answer, or stopped answering, within its deadline.
var ErrModelTimeout = errors.New("the model did not answer in time")

// Deadlines bound how long a model may keep a turn waiting: First is the
// time from sending a request to its first event (headers and the first
// streamed event), Idle the longest silence between two events after it,
// Total the whole request, retries and streaming included (a model that
// trickles forever). A zero field means no bound.
type Deadlines struct {
	First time.Duration
	Idle  time.Duration
	Total time.Duration
	// FirstSetting, IdleSetting and TotalSetting name the configuration
	// keys, for the error message ("model.first_event_timeout").
	FirstSetting, IdleSetting, TotalSetting string
}

// WithDeadlines wraps m so that a request that gets no answer, or a stream
// that stalls, ends with ErrModelTimeout instead of hanging the turn: the
// stream's context is cancelled, which closes its connection.
func WithDeadlines(m Model, d Deadlines) Model {
	if d.First <= 0 && d.Idle <= 0 && d.Total <= 0 {
		return m
	}
	return &deadlineModel{m: m, d: d}
}

type deadlineModel struct {
	m Model
	d Deadlines
}

func (dm *deadlineModel) Stream(ctx context.Context, req Request) (Stream, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	s := &deadlineStream{cancel: cancel, d: dm.d}
	if dm.d.Total > 0 {
		s.total = time.AfterFunc(dm.d.Total, func() {
			cancel(fmt.Errorf("%w: the answer took longer than %s in all (%s); the model is too slow for this limit — raise the setting, or ask for a shorter answer",
				ErrModelTimeout, dm.d.Total, dm.d.TotalSetting))
		})
	}
	s.arm(dm.d.First, dm.firstErr())
	inner, err := dm.m.Stream(ctx, req)
	if err != nil {
		s.stop()
		s.stopTotal()
		if cause := context.Cause(ctx); errors.Is(cause, ErrModelTimeout) {
			cancel(nil)
			return nil, cause
		}
		cancel(nil)
		return nil, err
	}
	s.inner, s.ctx = inner, ctx
	return s, nil
}

func (dm *deadlineModel) firstErr() error {
	return fmt.Errorf("%w: no answer within %s of sending the request (%s); the endpoint accepted the connection but sent nothing — check that it is up and not overloaded, or raise the setting",
		ErrModelTimeout, dm.d.First, dm.d.FirstSetting)
}

// deadlineStream re-arms its timer after every event: the first event must
// come within First, each next one within Idle.
type deadlineStream struct {
	inner  Stream
	ctx    context.Context
	cancel context.CancelCauseFunc
	d      Deadlines

	mu    sync.Mutex // guards timer
	timer *time.Timer
	total *time.Timer // set before the stream is shared; Stop is safe to race
}

func (s *deadlineStream) stopTotal() {
	if s.total != nil {
		s.total.Stop()
	}
}

func (s *deadlineStream) arm(after time.Duration, cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	if after > 0 {
		s.timer = time.AfterFunc(after, func() { s.cancel(cause) })
	}
}

func (s *deadlineStream) stop() { s.arm(0, nil) }

func (s *deadlineStream) Next() (Event, error) {
	ev, err := s.inner.Next()
	if err != nil {
		s.stop()
		s.stopTotal()
		if cause := context.Cause(s.ctx); errors.Is(cause, ErrModelTimeout) {
			return Event{Kind: EventError, Err: cause}, cause
		}
		return ev, err
	}
	s.arm(s.d.Idle, fmt.Errorf("%w: the answer stopped for %s in the middle of the stream (%s); the model or the endpoint stalled — try again, or raise the setting",
		ErrModelTimeout, s.d.Idle, s.d.IdleSetting))
	return ev, nil
}

func (s *deadlineStream) Close() error {
	s.stop()
	s.stopTotal()
	err := s.inner.Close()
	s.cancel(nil)
	return err
}
