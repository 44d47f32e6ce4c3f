package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The OTLP/JSON shapes as a collector reads them, declared here apart
// from the exporter's, and decoded strictly: a field the exporter invents
// fails the test.
type (
	wireValue struct {
		StringValue *string  `json:"stringValue"`
		IntValue    *string  `json:"intValue"`
		BoolValue   *bool    `json:"boolValue"`
		DoubleValue *float64 `json:"doubleValue"`
	}
	wireKV struct {
		Key   string    `json:"key"`
		Value wireValue `json:"value"`
	}
	wireResource struct {
		Attributes []wireKV `json:"attributes"`
	}
	wireScope struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	wireSpan struct {
		TraceID           string   `json:"traceId"`
		SpanID            string   `json:"spanId"`
		ParentSpanID      string   `json:"parentSpanId"`
		Name              string   `json:"name"`
		Kind              int      `json:"kind"`
		StartTimeUnixNano string   `json:"startTimeUnixNano"`
		EndTimeUnixNano   string   `json:"endTimeUnixNano"`
		Attributes        []wireKV `json:"attributes"`
		Status            struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"status"`
	}
	wireTraces struct {
		ResourceSpans []struct {
			Resource   wireResource `json:"resource"`
			ScopeSpans []struct {
				Scope wireScope  `json:"scope"`
				Spans []wireSpan `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	wirePoint struct {
		Attributes        []wireKV `json:"attributes"`
		StartTimeUnixNano string   `json:"startTimeUnixNano"`
		TimeUnixNano      string   `json:"timeUnixNano"`
		AsInt             string   `json:"asInt"`
	}
	wireMetric struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Unit        string `json:"unit"`
		Sum         struct {
			DataPoints             []wirePoint `json:"dataPoints"`
			AggregationTemporality int         `json:"aggregationTemporality"`
			IsMonotonic            bool        `json:"isMonotonic"`
		} `json:"sum"`
	}
	wireMetrics struct {
		ResourceMetrics []struct {
			Resource     wireResource `json:"resource"`
			ScopeMetrics []struct {
				Scope   wireScope    `json:"scope"`
				Metrics []wireMetric `json:"metrics"`
			} `json:"scopeMetrics"`
		} `json:"resourceMetrics"`
	}
)

// receiver is an OTLP/HTTP collector: it decodes every request strictly
// and keeps the spans, the metrics and the raw bodies.
type receiver struct {
	*httptest.Server
	t       *testing.T
	mu      sync.Mutex
	spans   []wireSpan
	metrics [][]wireMetric
	bodies  [][]byte
	headers []http.Header
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{t: t}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		rc.t.Errorf("%s %s with Content-Type %q; want POST application/json", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.bodies = append(rc.bodies, body)
	rc.headers = append(rc.headers, r.Header.Clone())
	switch r.URL.Path {
	case "/otlp/v1/traces":
		var req wireTraces
		if err := dec.Decode(&req); err != nil {
			rc.t.Errorf("traces request: %v\n%s", err, body)
		}
		for _, rs := range req.ResourceSpans {
			checkResource(rc.t, rs.Resource)
			for _, ss := range rs.ScopeSpans {
				rc.spans = append(rc.spans, ss.Spans...)
			}
		}
	case "/otlp/v1/metrics":
		var req wireMetrics
		if err := dec.Decode(&req); err != nil {
			rc.t.Errorf("metrics request: %v\n%s", err, body)
		}
		for _, rm := range req.ResourceMetrics {
			checkResource(rc.t, rm.Resource)
			for _, sm := range rm.ScopeMetrics {
				rc.metrics = append(rc.metrics, sm.Metrics)
			}
		}
	default:
		rc.t.Errorf("request to %s; want /otlp/v1/traces or /otlp/v1/metrics", r.URL.Path)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "{}")
}

func checkResource(t *testing.T, r wireResource) {
	if len(r.Attributes) != 1 || r.Attributes[0].Key != "service.name" || r.Attributes[0].Value.StringValue == nil ||
		*r.Attributes[0].Value.StringValue != "homard-test" {
		t.Errorf("resource = %+v; want service.name homard-test", r)
	}
}

func attr(s wireSpan, key string) (wireValue, bool) {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value, true
		}
	}
	return wireValue{}, false
}

var (
	traceIDRE = regexp.MustCompile(`^[0-9a-f]{32}$`)
	spanIDRE  = regexp.MustCompile(`^[0-9a-f]{16}$`)
)

func TestExportTraceAndMetrics(t *testing.T) {
	rc := newReceiver(t)
	tr, err := New(Options{Endpoint: rc.URL + "/otlp/", ServiceName: "homard-test", Version: "v1", Interval: time.Hour,
		Header: "X-Api-Key", HeaderValue: "k",
		Redact: func(s string) string { return strings.ReplaceAll(s, "SECRET", "[redacted]") }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, root := tr.Start(context.Background(), "turn", String("session", "s-SECRET-1"), Int("calls", 3))
	cctx, child := tr.Start(ctx, "model", Bool("final", true))
	_, grand := tr.StartAt(cctx, "decide", time.Now().Add(-time.Millisecond))
	grand.End(nil)
	child.SetAttr(Int("tokens", 42), Millis("took", 1500*time.Millisecond), Int("tokens", 43))
	child.End(errors.New("dial tcp: secret text of an error"))
	child.End(nil) // a span ends once
	root.End(context.Canceled)
	_, other := tr.Start(context.Background(), "other")
	other.End(nil)
	calls := Metric{Name: "homard.calls", Unit: "1", Description: "calls"}
	tr.Add(calls, 2, String("decision", "ran"))
	tr.Add(calls, 1, String("decision", "denied"))
	tr.Add(calls, 3, String("decision", "ran"))
	tr.Add(Metric{Name: "homard.duration", Unit: "ms"}, 250)
	if err := tr.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.spans) != 4 {
		t.Fatalf("%d spans received; want 4", len(rc.spans))
	}
	byName := map[string]wireSpan{}
	for _, s := range rc.spans {
		byName[s.Name] = s
		if !traceIDRE.MatchString(s.TraceID) || !spanIDRE.MatchString(s.SpanID) || s.Kind != 1 {
			t.Errorf("span %s: trace %q span %q kind %d; want 32 and 16 hex digits, kind 1", s.Name, s.TraceID, s.SpanID, s.Kind)
		}
		start, err1 := strconv.ParseInt(s.StartTimeUnixNano, 10, 64)
		end, err2 := strconv.ParseInt(s.EndTimeUnixNano, 10, 64)
		if err1 != nil || err2 != nil || start <= 0 || end < start {
			t.Errorf("span %s: start %q end %q; want decimal unix nanos, end not before start", s.Name, s.StartTimeUnixNano, s.EndTimeUnixNano)
		}
	}
	turn, model, decide, other2 := byName["turn"], byName["model"], byName["decide"], byName["other"]
	if turn.ParentSpanID != "" || model.ParentSpanID != turn.SpanID || decide.ParentSpanID != model.SpanID {
		t.Errorf("parents: turn %q, model %q (turn %s), decide %q (model %s); want a chain", turn.ParentSpanID, model.ParentSpanID, turn.SpanID, decide.ParentSpanID, model.SpanID)
	}
	if model.TraceID != turn.TraceID || decide.TraceID != turn.TraceID || other2.TraceID == turn.TraceID || other2.ParentSpanID != "" {
		t.Errorf("trace ids: turn %s model %s decide %s other %s; want one trace, the other span a new root", turn.TraceID, model.TraceID, decide.TraceID, other2.TraceID)
	}
	if v, _ := attr(turn, "session"); v.StringValue == nil || *v.StringValue != "s-[redacted]-1" {
		t.Errorf("turn session = %+v; want the redacted string", v)
	}
	if v, _ := attr(turn, "calls"); v.IntValue == nil || *v.IntValue != "3" {
		t.Errorf("turn calls = %+v; want intValue \"3\"", v)
	}
	if v, _ := attr(model, "final"); v.BoolValue == nil || !*v.BoolValue {
		t.Errorf("model final = %+v; want boolValue true", v)
	}
	if v, _ := attr(model, "tokens"); v.IntValue == nil || *v.IntValue != "43" || len(model.Attributes) != 3 {
		t.Errorf("model attributes = %+v; want final, tokens 43 (the later value), took", model.Attributes)
	}
	if v, _ := attr(model, "took"); v.IntValue == nil || *v.IntValue != "1500" {
		t.Errorf("model took = %+v; want 1500 (ms)", v)
	}
	if model.Status.Code != 2 || model.Status.Message != "error" || turn.Status.Code != 2 || turn.Status.Message != "cancelled" || decide.Status.Code != 1 {
		t.Errorf("statuses: model %+v turn %+v decide %+v; want error (class only), cancelled, ok", model.Status, turn.Status, decide.Status)
	}

	if len(rc.metrics) != 1 {
		t.Fatalf("%d metrics requests; want 1", len(rc.metrics))
	}
	ms := rc.metrics[0]
	if len(ms) != 2 || ms[0].Name != "homard.calls" || ms[1].Name != "homard.duration" || ms[1].Unit != "ms" {
		t.Fatalf("metrics = %+v; want homard.calls and homard.duration", ms)
	}
	got := map[string]string{}
	for _, p := range ms[0].Sum.DataPoints {
		if len(p.Attributes) != 1 || p.Attributes[0].Value.StringValue == nil || p.StartTimeUnixNano == "" || p.TimeUnixNano == "" {
			t.Fatalf("point = %+v; want one string attribute and times", p)
		}
		got[*p.Attributes[0].Value.StringValue] = p.AsInt
	}
	if got["ran"] != "5" || got["denied"] != "1" || !ms[0].Sum.IsMonotonic || ms[0].Sum.AggregationTemporality != 2 {
		t.Errorf("homard.calls = %+v (%v); want ran 5, denied 1, monotonic cumulative", ms[0].Sum, got)
	}
	for _, b := range rc.bodies {
		if bytes.Contains(b, []byte("SECRET")) || bytes.Contains(b, []byte("secret text")) {
			t.Errorf("a request holds what must not leave: %s", b)
		}
	}
	for _, h := range rc.headers {
		if h.Get("X-Api-Key") != "k" {
			t.Errorf("request headers %v; want X-Api-Key", h)
		}
	}
	if s := tr.Stats(); s.Exported != 4 || s.Dropped != 0 || s.Failed != 0 {
		t.Errorf("Stats = %+v; want 4 exported", s)
	}
}

// blocked is a collector that never answers until the test ends.
func blocked(t *testing.T) *httptest.Server {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv
}

func TestQueueDropsWhenFullAndNeverBlocks(t *testing.T) {
	srv := blocked(t)
	tr, err := New(Options{Endpoint: srv.URL, QueueSize: 4, Interval: time.Hour, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	for range n {
		_, s := tr.Start(context.Background(), "x")
		s.End(nil) // returns although the collector never answers
	}
	if d := tr.Stats().Dropped; d == 0 {
		t.Errorf("Dropped = 0 of %d spans with a queue of 4 and a collector that never answers; want drops counted", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := tr.Close(ctx); err == nil {
		t.Error("Close against a collector that never answers = nil; want its context's error")
	}
	_, s := tr.Start(context.Background(), "late")
	s.End(nil)
	// Every span is accounted for: dropped, or in a request that failed.
	st := tr.Stats()
	if st.Exported != 0 || st.Failed == 0 || st.Dropped+st.Unsent != n+1 {
		t.Errorf("Stats after Close = %+v; want nothing exported, failures counted, dropped + unsent = %d (the late span too)", st, n+1)
	}
}

func TestUnreachableEndpoint(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	tr, err := New(Options{Endpoint: url, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	_, s := tr.Start(context.Background(), "x")
	s.End(nil)
	tr.Add(Metric{Name: "m"}, 1)
	if err := tr.Close(context.Background()); err == nil {
		t.Error("Close with no collector = nil; want the export error")
	}
	if st := tr.Stats(); st.Failed != 2 || st.Exported != 0 || st.Unsent != 1 {
		t.Errorf("Stats = %+v; want 2 failed requests (traces, metrics), 1 span unsent", st)
	}
}

func TestCollectorRefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer srv.Close()
	tr, _ := New(Options{Endpoint: srv.URL, Interval: time.Hour})
	_, s := tr.Start(context.Background(), "x")
	s.End(nil)
	if err := tr.Close(context.Background()); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("Close against a 401 = %v; want the status", err)
	}
}

func TestFlushOnInterval(t *testing.T) {
	rc := newReceiver(t)
	tr, err := New(Options{Endpoint: rc.URL + "/otlp", ServiceName: "homard-test", Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close(context.Background())
	_, s := tr.Start(context.Background(), "x")
	s.End(nil)
	for range 500 { // the flusher sends without Close
		if tr.Stats().Exported == 1 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("Stats = %+v; want the span exported by the flusher", tr.Stats())
}

func TestNilTracer(t *testing.T) {
	var tr *Tracer
	ctx := context.Background()
	got, s := tr.Start(ctx, "x", String("k", "v"))
	if got != ctx || s != nil {
		t.Fatalf("nil Tracer Start = %v, %v; want ctx unchanged and a nil span", got, s)
	}
	allocs := testing.AllocsPerRun(100, func() {
		c, s := tr.Start(ctx, "x", String("k", "v"), Int("n", 1))
		_, s2 := tr.StartAt(c, "y", time.Time{}, Bool("b", true))
		s2.SetAttr(String("a", "b"))
		s2.EndAt(time.Time{}, nil)
		s.End(errors.ErrUnsupported)
		tr.Add(Metric{Name: "m"}, 1, String("k", "v"))
	})
	if allocs != 0 {
		t.Errorf("a nil Tracer allocates %v times per use; want 0", allocs)
	}
	if err := tr.Close(ctx); err != nil || tr.Stats() != (Stats{}) {
		t.Errorf("nil Close = %v, Stats %+v; want nothing", err, tr.Stats())
	}
}

func TestNewEndpoint(t *testing.T) {
	if tr, err := New(Options{}); tr != nil || err != nil {
		t.Errorf("New without an endpoint = %v, %v; want nil, nil (off)", tr, err)
	}
	for _, e := range []string{"127.0.0.1:4318", "ftp://h/", "http://", "http://u:p@h:4318", "http://h:4318/?a=b", "http://h/#f", "mailto:x"} {
		if tr, err := New(Options{Endpoint: e}); !errors.Is(err, ErrEndpoint) {
			tr.Close(context.Background())
			t.Errorf("New(%q) = %v; want ErrEndpoint", e, err)
		}
	}
	tr, err := New(Options{Endpoint: "https://collector.example:4318/base/"})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close(context.Background())
	if tr.traces != "https://collector.example:4318/base/v1/traces" || tr.metric != "https://collector.example:4318/base/v1/metrics" {
		t.Errorf("paths %q %q; want the signal paths under the base", tr.traces, tr.metric)
	}
}

func BenchmarkSpan(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	for _, bc := range []struct {
		name string
		tr   func() *Tracer
	}{
		{"off", func() *Tracer { return nil }},
		{"on", func() *Tracer { tr, _ := New(Options{Endpoint: srv.URL}); return tr }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tr := bc.tr()
			defer tr.Close(context.Background())
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				_, s := tr.Start(ctx, "homard.tool", String("homard.tool", "read_file"), Int("homard.step", 1))
				s.End(nil)
			}
		})
	}
}
