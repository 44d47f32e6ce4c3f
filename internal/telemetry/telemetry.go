// Package telemetry exports homard's traces and metrics to an
// OpenTelemetry collector the operator configured ([telemetry] endpoint):
// OTLP over HTTP with the JSON encoding (POST {endpoint}/v1/traces and
// {endpoint}/v1/metrics, Content-Type application/json).
//
// It is hand-rolled on the standard library, not the OpenTelemetry Go SDK:
// the SDK with its OTLP exporters (gRPC, protobuf) adds megabytes to a
// binary that must stay under 25 MB, and homard needs a small part of it —
// spans with ids, times, a status and a few attributes, and cumulative
// counters. The JSON shapes follow the OTLP specification's JSON mapping
// of ExportTraceServiceRequest and ExportMetricsServiceRequest (ids as hex,
// times and 64-bit integers as decimal strings, enums as integers).
//
// Contract: a nil *Tracer is telemetry off; every method is then a no-op
// that allocates nothing, so callers need no checks. A turn never waits
// for telemetry: a finished span goes to a bounded queue, and when the
// queue is full it is dropped and counted (Stats). One goroutine, started
// by New and ended by Close, flushes the queue and the counters every
// Interval as one request each; Close flushes what is left, within its
// context's deadline. Every string attribute passes through
// Options.Redact before it is sent; callers set only attributes on the
// allowlist (names, ids, decisions, counts, durations), never arguments,
// results, reasons or message text.
package telemetry

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"
)

// Attr is one attribute of a span or a counter: a string, an integer or
// a boolean.
type Attr struct {
	Key  string
	kind kind
	str  string
	num  int64
}

type kind uint8

const (
	kindString kind = iota
	kindInt
	kindBool
)

// String is a string attribute (redacted before export).
func String(key, v string) Attr { return Attr{Key: key, kind: kindString, str: v} }

// Int is an integer attribute.
func Int(key string, v int64) Attr { return Attr{Key: key, kind: kindInt, num: v} }

// Bool is a boolean attribute.
func Bool(key string, v bool) Attr {
	a := Attr{Key: key, kind: kindBool}
	if v {
		a.num = 1
	}
	return a
}

// Millis is an integer attribute holding d in whole milliseconds.
func Millis(key string, d time.Duration) Attr { return Int(key, d.Milliseconds()) }

// Value is the attribute's value as text, for tests and logs.
func (a Attr) Value() string {
	switch a.kind {
	case kindInt:
		return strconv.FormatInt(a.num, 10)
	case kindBool:
		return strconv.FormatBool(a.num == 1)
	}
	return a.str
}

// Options configure a Tracer.
type Options struct {
	// Endpoint is the collector's base URL ("http://127.0.0.1:4318"); the
	// signal paths /v1/traces and /v1/metrics are appended. Empty means
	// telemetry off: New returns a nil Tracer.
	Endpoint string
	// ServiceName is the resource's service.name. Empty means "homard".
	ServiceName string
	// Version is the instrumentation scope's version (homard's).
	Version string
	// Header and HeaderValue, when set, are sent with every request (a
	// collector's API key).
	Header, HeaderValue string
	// Redact is applied to every string attribute before export. Nil
	// means none; homard passes its secrets redactor.
	Redact func(string) string
	// Interval is how often the queue and the counters are flushed. Zero
	// means 5s.
	Interval time.Duration
	// QueueSize bounds the finished spans waiting for a flush; past it
	// spans are dropped and counted. Zero means 2048.
	QueueSize int
	// Timeout bounds one export request. Zero means 10s.
	Timeout time.Duration
}

// Tracer makes spans and counts metrics. Its methods are safe for
// concurrent use; a nil Tracer does nothing.
type Tracer struct {
	o      Options
	traces string // endpoint + /v1/traces
	metric string // endpoint + /v1/metrics
	client httpDoer
	start  time.Time // start of the cumulative counters

	queue chan *Span
	kick  chan struct{} // a flush is wanted before the tick (queue half full)
	stop  chan struct{} // closed by Close
	done  chan struct{} // closed when the flusher has returned
	// cancel ends the flusher's request in flight when Close's context
	// runs out first.
	ctx       context.Context
	cancel    context.CancelFunc
	closeOnce sync.Once
	flushMu   sync.Mutex // one flush at a time (the flusher, then Close)

	mu     sync.Mutex        // guards points
	points map[string]*point // counters, by name and attributes

	stats stats
}

// Stats are the Tracer's own counts, since New.
type Stats struct {
	// Dropped spans found the queue full.
	Dropped int64
	// Exported spans were accepted by the collector (a 2xx answer).
	Exported int64
	// Failed requests got an error or a non-2xx answer; their spans or
	// points are not sent again.
	Failed int64
	// Unsent spans were in a failed request.
	Unsent int64
}

// Stats returns the Tracer's counts; zero for a nil Tracer.
func (t *Tracer) Stats() Stats {
	if t == nil {
		return Stats{}
	}
	return Stats{Dropped: t.stats.dropped.Load(), Exported: t.stats.exported.Load(), Failed: t.stats.failed.Load(), Unsent: t.stats.unsent.Load()}
}

// ErrEndpoint is returned by New for an endpoint that is not an absolute
// http or https URL.
var ErrEndpoint = errors.New("telemetry endpoint: want an absolute http or https URL")

// New starts a Tracer exporting to o.Endpoint, and its flusher; Close
// ends it. An empty endpoint returns nil, nil: telemetry off.
func New(o Options) (*Tracer, error) {
	if o.Endpoint == "" {
		return nil, nil
	}
	base, err := baseURL(o.Endpoint)
	if err != nil {
		return nil, err
	}
	if o.ServiceName == "" {
		o.ServiceName = "homard"
	}
	if o.Interval <= 0 {
		o.Interval = 5 * time.Second
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 2048
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	t := &Tracer{
		o: o, traces: base + "/v1/traces", metric: base + "/v1/metrics",
		client: newClient(o.Timeout), start: time.Now(),
		queue: make(chan *Span, o.QueueSize), kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}),
		points: make(map[string]*point),
	}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	go t.loop()
	return t, nil
}

// Close stops the flusher and sends what is queued, giving up when ctx
// ends (give it a deadline). Spans ended after Close are dropped; a
// second Close does nothing.
func (t *Tracer) Close(ctx context.Context) error {
	if t == nil {
		return nil
	}
	first := false
	t.closeOnce.Do(func() { first = true; close(t.stop) })
	if !first {
		return nil // closed already
	}
	var cut error
	select {
	case <-t.done:
	case <-ctx.Done():
		t.cancel() // the flusher's request in flight
		<-t.done
		cut = ctx.Err()
	}
	defer t.cancel()
	if err := t.flush(ctx); err != nil {
		return err
	}
	return cut
}

// loop flushes every Interval, or sooner when the queue fills, until
// Close.
func (t *Tracer) loop() {
	defer close(t.done)
	tick := time.NewTicker(t.o.Interval)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
		case <-t.kick:
		}
		_ = t.flush(t.ctx) // counted in Stats
	}
}

// spanKey is the context key of the current span.
type spanKey struct{}

// Span is one timed operation of a trace. Its methods are safe for
// concurrent use; a nil Span does nothing.
type Span struct {
	tr     *Tracer
	trace  [16]byte
	id     [8]byte
	parent [8]byte // zero for a root span
	name   string
	start  time.Time

	mu     sync.Mutex // guards the fields below
	attrs  []Attr
	end    time.Time
	failed string // status message of an error; "" is OK
	ended  bool
}

// Start begins a span named name, a child of the span in ctx (or the
// root of a new trace), and returns ctx carrying it.
func (t *Tracer) Start(ctx context.Context, name string, attrs ...Attr) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	return t.StartAt(ctx, name, time.Now(), attrs...)
}

// StartAt is Start for a span that began at start (one measured before
// it could be reported, such as a model call).
func (t *Tracer) StartAt(ctx context.Context, name string, start time.Time, attrs ...Attr) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	s := &Span{tr: t, name: name, start: start, attrs: append([]Attr(nil), attrs...)}
	if p, ok := ctx.Value(spanKey{}).(*Span); ok && p != nil && p.tr == t {
		s.trace, s.parent = p.trace, p.id
	} else {
		putID(s.trace[:8])
		putID(s.trace[8:])
	}
	putID(s.id[:])
	return context.WithValue(ctx, spanKey{}, s), s
}

// putID fills b with random bytes, never all zero (an invalid id).
func putID(b []byte) {
	for {
		v := rand.Uint64()
		if v == 0 {
			continue
		}
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		return
	}
}

// SetAttr adds attributes to the span (a later one with the same key
// wins at export).
func (s *Span) SetAttr(attrs ...Attr) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.attrs = append(s.attrs, attrs...)
	s.mu.Unlock()
}

// End ends the span now; see EndAt.
func (s *Span) End(err error) {
	if s == nil {
		return
	}
	s.EndAt(time.Now(), err)
}

// EndAt ends the span at end and queues it for export. A non-nil err
// sets the span's status to error with a message naming only its class
// ("cancelled", "deadline", "error"): an error's text may hold what must
// not leave homard. A span ends once; later calls do nothing.
func (s *Span) EndAt(end time.Time, err error) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended, s.end = true, end
	if end.Before(s.start) {
		s.end = s.start
	}
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled):
		s.failed = "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		s.failed = "deadline"
	default:
		s.failed = "error"
	}
	s.mu.Unlock()
	s.tr.enqueue(s)
}

// enqueue hands a finished span to the flusher, or drops and counts it
// when the queue is full: never blocks.
func (t *Tracer) enqueue(s *Span) {
	select {
	case <-t.stop:
		t.stats.dropped.Add(1)
		return
	default:
	}
	select {
	case t.queue <- s:
	default:
		t.stats.dropped.Add(1)
		return
	}
	if len(t.queue) >= cap(t.queue)/2 {
		select {
		case t.kick <- struct{}{}:
		default:
		}
	}
}
