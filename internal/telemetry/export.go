package telemetry

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// maxBatch is the most spans one request carries; a flush sends as many
// requests as the queue needs.
const maxBatch = 512

type stats struct {
	dropped, exported, failed, unsent atomic.Int64
}

// httpDoer is the one method of *http.Client the exporter uses.
type httpDoer interface {
	Do(*http.Request) (*http.Response, error)
}

// newClient is a plain client with a timeout: the endpoint is the
// operator's own configuration (like a chat platform's api_base), so a
// loopback or private collector is allowed and the egress client's
// address checks do not apply.
func newClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout}
}

// baseURL checks an endpoint and returns it without a trailing slash.
func baseURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" ||
		u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", ErrEndpoint
	}
	return strings.TrimRight(s, "/"), nil
}

// Metric names one counter: a monotonic cumulative sum.
type Metric struct {
	Name, Unit, Description string
}

// point is one counter with one set of attributes.
type point struct {
	m     Metric
	attrs []Attr
	value int64
}

// Add adds n to the counter m with attrs (n may be 0: the point then
// exists with its current value).
func (t *Tracer) Add(m Metric, n int64, attrs ...Attr) {
	if t == nil {
		return
	}
	var key strings.Builder
	key.WriteString(m.Name)
	for _, a := range attrs {
		key.WriteByte(0)
		key.WriteString(a.Key)
		key.WriteByte(0)
		key.WriteString(a.Value())
	}
	t.mu.Lock()
	p, ok := t.points[key.String()]
	if !ok {
		p = &point{m: m, attrs: append([]Attr(nil), attrs...)}
		t.points[key.String()] = p
	}
	p.value += n
	t.mu.Unlock()
}

// flush sends what is queued, in requests of at most maxBatch spans, then
// the counters. It returns the first error; every failure is counted.
func (t *Tracer) flush(ctx context.Context) error {
	t.flushMu.Lock()
	defer t.flushMu.Unlock()
	var first error
	for {
		batch := make([]*Span, 0, min(len(t.queue), maxBatch))
	drain:
		for len(batch) < maxBatch {
			select {
			case s := <-t.queue:
				batch = append(batch, s)
			default:
				break drain
			}
		}
		if len(batch) == 0 {
			break
		}
		err := t.post(ctx, t.traces, t.traceRequest(batch))
		if err == nil {
			t.stats.exported.Add(int64(len(batch)))
		} else {
			t.stats.unsent.Add(int64(len(batch)))
			if first == nil {
				first = err
			}
		}
		if ctx.Err() != nil {
			return first
		}
	}
	if body := t.metricRequest(time.Now()); body != nil {
		if err := t.post(ctx, t.metric, body); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Probe sends the collector an export with no spans, as a check that it
// answers (doctor): nil when it accepts one.
func (t *Tracer) Probe(ctx context.Context) error {
	return t.post(ctx, t.traces, []byte(`{"resourceSpans":[]}`))
}

// post sends one OTLP/JSON request; any answer but 2xx is a failure.
func (t *Tracer) post(ctx context.Context, url string, body []byte) error {
	err := func() error {
		ctx, cancel := context.WithTimeout(ctx, t.o.Timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if t.o.Header != "" {
			req.Header.Set(t.o.Header, t.o.HeaderValue)
		}
		resp, err := t.client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("status %s", resp.Status)
		}
		return nil
	}()
	if err != nil {
		t.stats.failed.Add(1)
		return fmt.Errorf("telemetry export: %w", err)
	}
	return nil
}

// The OTLP/JSON shapes, as much of them as homard sends.
type (
	keyValue struct {
		Key   string   `json:"key"`
		Value anyValue `json:"value"`
	}
	anyValue struct {
		StringValue *string `json:"stringValue,omitempty"`
		IntValue    string  `json:"intValue,omitempty"` // int64 as a decimal string
		BoolValue   *bool   `json:"boolValue,omitempty"`
	}
	resource struct {
		Attributes []keyValue `json:"attributes"`
	}
	scope struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
	}
	status struct {
		Code    int    `json:"code"` // 1 OK, 2 ERROR
		Message string `json:"message,omitempty"`
	}
	otlpSpan struct {
		TraceID           string     `json:"traceId"`
		SpanID            string     `json:"spanId"`
		ParentSpanID      string     `json:"parentSpanId,omitempty"`
		Name              string     `json:"name"`
		Kind              int        `json:"kind"` // 1 INTERNAL
		StartTimeUnixNano string     `json:"startTimeUnixNano"`
		EndTimeUnixNano   string     `json:"endTimeUnixNano"`
		Attributes        []keyValue `json:"attributes,omitempty"`
		Status            status     `json:"status"`
	}
	scopeSpans struct {
		Scope scope      `json:"scope"`
		Spans []otlpSpan `json:"spans"`
	}
	resourceSpans struct {
		Resource   resource     `json:"resource"`
		ScopeSpans []scopeSpans `json:"scopeSpans"`
	}
	traceRequest struct {
		ResourceSpans []resourceSpans `json:"resourceSpans"`
	}
	dataPoint struct {
		Attributes        []keyValue `json:"attributes,omitempty"`
		StartTimeUnixNano string     `json:"startTimeUnixNano"`
		TimeUnixNano      string     `json:"timeUnixNano"`
		AsInt             string     `json:"asInt"`
	}
	sum struct {
		DataPoints             []dataPoint `json:"dataPoints"`
		AggregationTemporality int         `json:"aggregationTemporality"` // 2 CUMULATIVE
		IsMonotonic            bool        `json:"isMonotonic"`
	}
	otlpMetric struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		Unit        string `json:"unit,omitempty"`
		Sum         sum    `json:"sum"`
	}
	scopeMetrics struct {
		Scope   scope        `json:"scope"`
		Metrics []otlpMetric `json:"metrics"`
	}
	resourceMetrics struct {
		Resource     resource       `json:"resource"`
		ScopeMetrics []scopeMetrics `json:"scopeMetrics"`
	}
	metricRequest struct {
		ResourceMetrics []resourceMetrics `json:"resourceMetrics"`
	}
)

const (
	spanKindInternal = 1
	statusOK         = 1
	statusError      = 2
	cumulative       = 2
)

func nanos(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) }

// keyValues encodes attrs, redacting every string; a later attribute
// with a key already seen replaces the earlier one.
func (t *Tracer) keyValues(attrs []Attr) []keyValue {
	out := make([]keyValue, 0, len(attrs))
	for _, a := range attrs {
		kv := keyValue{Key: a.Key}
		switch a.kind {
		case kindInt:
			kv.Value.IntValue = strconv.FormatInt(a.num, 10)
		case kindBool:
			b := a.num == 1
			kv.Value.BoolValue = &b
		default:
			s := t.o.Redact(a.str)
			kv.Value.StringValue = &s
		}
		if i := slices.IndexFunc(out, func(o keyValue) bool { return o.Key == a.Key }); i >= 0 {
			out[i] = kv
			continue
		}
		out = append(out, kv)
	}
	return out
}

func (t *Tracer) resource() resource {
	name := t.o.Redact(t.o.ServiceName)
	return resource{Attributes: []keyValue{{Key: "service.name", Value: anyValue{StringValue: &name}}}}
}

func (t *Tracer) scope() scope { return scope{Name: "homard", Version: t.o.Version} }

// traceRequest encodes finished spans as one ExportTraceServiceRequest.
func (t *Tracer) traceRequest(batch []*Span) []byte {
	spans := make([]otlpSpan, 0, len(batch))
	for _, s := range batch {
		s.mu.Lock()
		o := otlpSpan{
			TraceID: hex.EncodeToString(s.trace[:]), SpanID: hex.EncodeToString(s.id[:]),
			Name: s.name, Kind: spanKindInternal,
			StartTimeUnixNano: nanos(s.start), EndTimeUnixNano: nanos(s.end),
			Attributes: t.keyValues(s.attrs), Status: status{Code: statusOK},
		}
		if s.parent != ([8]byte{}) {
			o.ParentSpanID = hex.EncodeToString(s.parent[:])
		}
		if s.failed != "" {
			o.Status = status{Code: statusError, Message: s.failed}
		}
		s.mu.Unlock()
		spans = append(spans, o)
	}
	req := traceRequest{ResourceSpans: []resourceSpans{{
		Resource:   t.resource(),
		ScopeSpans: []scopeSpans{{Scope: t.scope(), Spans: spans}},
	}}}
	b, _ := json.Marshal(req) // plain structs: cannot fail
	return b
}

// metricRequest encodes every counter as one ExportMetricsServiceRequest
// at now; nil when there is none.
func (t *Tracer) metricRequest(now time.Time) []byte {
	t.mu.Lock()
	byName := map[string]*otlpMetric{}
	var order []string
	for _, p := range t.points {
		m, ok := byName[p.m.Name]
		if !ok {
			m = &otlpMetric{Name: p.m.Name, Description: p.m.Description, Unit: p.m.Unit,
				Sum: sum{AggregationTemporality: cumulative, IsMonotonic: true}}
			byName[p.m.Name] = m
			order = append(order, p.m.Name)
		}
		m.Sum.DataPoints = append(m.Sum.DataPoints, dataPoint{
			Attributes: t.keyValues(p.attrs), StartTimeUnixNano: nanos(t.start), TimeUnixNano: nanos(now),
			AsInt: strconv.FormatInt(p.value, 10),
		})
	}
	t.mu.Unlock()
	if len(order) == 0 {
		return nil
	}
	slices.Sort(order)
	metrics := make([]otlpMetric, 0, len(order))
	for _, n := range order {
		metrics = append(metrics, *byName[n])
	}
	req := metricRequest{ResourceMetrics: []resourceMetrics{{
		Resource:     t.resource(),
		ScopeMetrics: []scopeMetrics{{Scope: t.scope(), Metrics: metrics}},
	}}}
	b, _ := json.Marshal(req)
	return b
}
