package llm

import (
	"context"
	"io"
	"time"
)

// Decoder turns one server-sent event's data into stream events. end
// reports the provider's end-of-message marker ("[DONE]", message_stop);
// an error is a broken stream.
type Decoder interface {
	Decode(data string) (events []Event, end bool, err error)
}

// FrameStream is the provider-independent half of a streamed response: it
// reads server-sent events from the body, lets the provider's Decoder turn
// each into events, queues them, and turns read failures, cancellation and
// an end without the end marker into errors. It is an llm.Stream used by
// one goroutine; it keeps ctx because it lives within the Stream call's
// context, as the response body does, which tells a cancelled read from a
// broken one.
type FrameStream struct {
	ctx      context.Context
	body     io.ReadCloser
	sse      *SSEReader
	stop     func() bool // unregisters the close-on-cancel hook
	provider string
	dec      Decoder

	pending  []Event
	ended    bool
	finished bool // the body is being drained and released (finish)
	err      error
}

var _ Stream = (*FrameStream)(nil)

// NewFrameStream starts reading body.
func NewFrameStream(ctx context.Context, body io.ReadCloser, provider string, dec Decoder) *FrameStream {
	s := &FrameStream{ctx: ctx, body: body, sse: NewSSEReader(body), provider: provider, dec: dec}
	// net/http already aborts the read when ctx ends; closing the body as
	// well makes the release explicit and independent of the transport.
	s.stop = context.AfterFunc(ctx, func() { body.Close() })
	return s
}

// Close releases the response body.
func (s *FrameStream) Close() error {
	s.stop()
	if s.finished {
		return nil // finish releases it
	}
	return s.body.Close()
}

// drainLimit and drainWait bound what finish reads after the end marker.
const (
	drainLimit = 64 << 10
	drainWait  = 100 * time.Millisecond
)

// finish releases the body of a stream that ended with its end marker:
// what the server still sends (the close of the chunked body, sent with
// the marker or right after it) is read, at most drainLimit bytes for at
// most drainWait, so the connection goes back to the pool for the next
// request instead of being closed — a new TCP and TLS handshake each
// time. A server that keeps the stream open past its end marker costs
// drainWait once, then the connection is closed.
func (s *FrameStream) finish() {
	s.stop()
	s.finished = true
	t := time.AfterFunc(drainWait, func() { s.body.Close() })
	_, _ = io.CopyN(io.Discard, s.body, drainLimit)
	t.Stop()
	s.body.Close()
}

func (s *FrameStream) fail(err error) (Event, error) {
	s.err = err
	s.pending = nil
	s.Close()
	return Event{Kind: EventError, Err: err}, err
}

// Next returns the next event; io.EOF after EventDone. A failure is
// returned both as an EventError event and as the error, on every later
// call too.
func (s *FrameStream) Next() (Event, error) {
	for {
		if s.err != nil {
			return Event{Kind: EventError, Err: s.err}, s.err
		}
		if len(s.pending) > 0 {
			ev := s.pending[0]
			s.pending = s.pending[1:]
			return ev, nil
		}
		if s.ended {
			return Event{}, io.EOF
		}
		ev, err := s.sse.Next()
		if err != nil {
			return s.fail(ReadError(s.ctx, s.provider, err))
		}
		events, end, err := s.dec.Decode(ev.Data)
		if err != nil {
			return s.fail(err)
		}
		s.pending = append(s.pending, events...)
		if end {
			s.ended = true
			s.finish()
		}
	}
}
