// Package turntrace follows homard's agent turns into OpenTelemetry
// spans and counters (internal/telemetry exports them): a trace per turn
// with a root homard.turn, a homard.model_call per model call
// (agent.Options.OnModelCall) and a homard.tool per tool call from its
// proposal to its decision and run (the agent's events), with children
// homard.decide and homard.run laid out from arbiter.Outcome's
// DecideDur and RunDur. internal/app wires it into every turn: Run's
// (the CLI, chat, the gateway, chat platforms) and scheduled runs'.
//
// What may be exported is an allowlist, set in this package and nowhere
// else: tool names, rule ids, decisions, risk, the step, durations, token
// and call counts, the model's name, the session id, the trust, why a
// loop stopped (homard's own words, naming a tool at most). NEVER
// arguments, plans, results, reasons, message text, URLs or any secret.
// Every string is also passed through homard's redactor by the exporter
// (Open's redact), as defence in depth.
package turntrace

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/telemetry"
)

// The counters, exported as monotonic cumulative sums.
var (
	metricTurns      = telemetry.Metric{Name: "homard.turns", Unit: "1", Description: "agent turns, by trust"}
	metricTurnTime   = telemetry.Metric{Name: "homard.turn.duration", Unit: "ms", Description: "time spent in turns"}
	metricProposals  = telemetry.Metric{Name: "homard.tool.proposals", Unit: "1", Description: "tool calls decided, by decision"}
	metricToolTime   = telemetry.Metric{Name: "homard.tool.duration", Unit: "ms", Description: "time spent deciding and running tool calls"}
	metricModelCalls = telemetry.Metric{Name: "homard.model.calls", Unit: "1", Description: "model calls"}
	metricModelTime  = telemetry.Metric{Name: "homard.model.duration", Unit: "ms", Description: "time spent in model calls"}
	metricTokens     = telemetry.Metric{Name: "homard.model.tokens", Unit: "{token}", Description: "model tokens, by direction (input, output)"}
)

// Keys releases a vault secret for a host; *secrets.Vault is one.
type Keys interface {
	Release(name, scheme, host string) (header, value string, err error)
}

// Open builds the exporter from [telemetry]: nil, nil (off) without an
// endpoint. headers_secret is released from keys for the endpoint's
// scheme and host; when it cannot be, Open returns the error and no
// tracer (sending without the collector's key would only be refused).
// Every string attribute passes through redact.
func Open(c config.Telemetry, keys Keys, redact func(string) string, version string) (*telemetry.Tracer, error) {
	if c.Endpoint == "" {
		return nil, nil
	}
	o := telemetry.Options{Endpoint: c.Endpoint, ServiceName: c.ServiceName, Version: version, Redact: redact}
	if c.HeadersSecret != "" {
		u, err := url.Parse(c.Endpoint)
		if err == nil {
			o.Header, o.HeaderValue, err = keys.Release(c.HeadersSecret, u.Scheme, u.Host)
		}
		if err != nil {
			return nil, fmt.Errorf("telemetry.headers_secret: %w", err)
		}
	}
	return telemetry.New(o)
}

// Check says whether [telemetry] exports (doctor): off without an
// endpoint; otherwise, when probe is set, whether the collector accepts
// an export with no spans, with the key released as Open would. ok is
// false only for an endpoint that is set and does not work.
func Check(ctx context.Context, c config.Telemetry, keys Keys, version string, probe bool) (ok bool, detail string) {
	switch {
	case c.Endpoint == "":
		return true, "off ([telemetry] endpoint unset): no traces or metrics leave homard"
	case !probe:
		return true, c.Endpoint + " (not checked offline)"
	}
	tr, err := Open(c, keys, func(s string) string { return s }, version)
	if err == nil {
		defer Close(tr)
		err = tr.Probe(ctx)
	}
	if err != nil {
		return false, fmt.Sprintf("%s: %v; traces and metrics are dropped until the collector answers (check [telemetry] endpoint and headers_secret)", c.Endpoint, err)
	}
	return true, c.Endpoint + " accepts exports (OTLP/HTTP JSON)"
}

// closeWait bounds Close's last flush.
const closeWait = 5 * time.Second

// Close sends what tr has queued, waiting at most a few seconds.
func Close(tr *telemetry.Tracer) error {
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	return tr.Close(ctx)
}

// Turn follows one turn's events into spans. It is used on the
// turn's goroutine only (agent events and OnModelCall are called there).
// A nil *Turn (telemetry off) does nothing.
type Turn struct {
	tr    *telemetry.Tracer
	ctx   context.Context // carries the homard.turn span
	span  *telemetry.Span
	start time.Time
	trust policy.Trust
	// asks: an Asker answers pending calls inline, so a pending call's
	// span stays open across the wait.
	asks bool

	// The open homard.tool span, its call id and start; last holds the
	// durations of the decision last drawn in it, to tell a real
	// decision from the owner's answer reported with the same Outcome.
	tool      *telemetry.Span
	toolCtx   context.Context
	toolID    string
	toolStart time.Time
	last      [2]time.Duration
}

// Start starts the homard.turn span of a turn in session for trust; asks
// says an Asker answers pending calls inline. Nil (and every method a
// no-op) when tr is nil: telemetry off.
func Start(tr *telemetry.Tracer, session string, trust policy.Trust, asks bool) *Turn {
	if tr == nil {
		return nil
	}
	// Allowlisted attributes only (see the package doc).
	ctx, span := tr.Start(context.Background(), "homard.turn",
		telemetry.String("homard.session", session), telemetry.String("homard.trust", string(trust)))
	return &Turn{tr: tr, ctx: ctx, span: span, start: time.Now(), trust: trust, asks: asks}
}

// Role names what ran the turn when it was not a conversation's own: a
// split's "worker".
func (tt *Turn) Role(role string) {
	if tt == nil {
		return
	}
	tt.span.SetAttr(telemetry.String("homard.role", role))
}

// Model names the turn's model once it is known.
func (tt *Turn) Model(name string) {
	if tt == nil {
		return
	}
	tt.span.SetAttr(telemetry.String("homard.model", name))
}

// ModelCall records one model call as a child of the turn.
func (tt *Turn) ModelCall(mc agent.ModelCall) {
	if tt == nil {
		return
	}
	tt.closeTool(mc.Start) // a call left pending without an answer
	end := mc.Start.Add(mc.Took)
	// Allowlisted attributes only: no request or answer text.
	_, s := tt.tr.StartAt(tt.ctx, "homard.model_call", mc.Start,
		telemetry.String("homard.model", mc.Model), telemetry.Int("homard.step", int64(mc.Step)),
		telemetry.Bool("homard.final", mc.Final), telemetry.Bool("homard.summary", mc.Summary),
		telemetry.Int("homard.tokens.input", int64(mc.Usage.Input)), telemetry.Int("homard.tokens.output", int64(mc.Usage.Output)),
		telemetry.Int("homard.tokens.cached", int64(mc.Usage.Cached)))
	s.EndAt(end, mc.Err)
	tt.tr.Add(metricModelCalls, 1)
	tt.tr.Add(metricModelTime, mc.Took.Milliseconds())
	tt.tr.Add(metricTokens, int64(mc.Usage.Input), telemetry.String("homard.direction", "input"))
	tt.tr.Add(metricTokens, int64(mc.Usage.Output), telemetry.String("homard.direction", "output"))
}

// Event follows the agent's tool events: a homard.tool span from the
// proposal (EventToolCall) to its decision and run (EventToolResult), or
// past an inline approval to the owner's answer.
func (tt *Turn) Event(ev agent.Event) {
	if tt == nil {
		return
	}
	switch ev.Kind {
	case agent.EventToolCall:
		tt.closeTool(time.Now())
		tt.openTool(ev)
	case agent.EventToolResult:
		now := time.Now()
		if tt.tool == nil || tt.toolID != ev.Call.ID {
			// Refused before it was proposed (a spent budget): no
			// EventToolCall came first.
			tt.closeTool(now)
			tt.openTool(ev)
		}
		out := ev.Outcome
		if out == nil {
			out = &arbiter.Outcome{Decision: arbiter.Denied}
		}
		tt.decided(out, now)
		if !(tt.asks && out.Decision == arbiter.Pending && out.ApprovalID != "") {
			tt.closeTool(now)
		}
	}
}

func (tt *Turn) openTool(ev agent.Event) {
	tt.toolStart = time.Now()
	tt.toolID, tt.last = ev.Call.ID, [2]time.Duration{}
	// Allowlisted attributes only: the tool's name, never its arguments.
	tt.toolCtx, tt.tool = tt.tr.StartAt(tt.ctx, "homard.tool", tt.toolStart,
		telemetry.String("homard.tool", ev.Call.Name), telemetry.Int("homard.step", int64(ev.Step)))
}

// decided records out, reported at now, on the open tool span: its
// decision, rule and risk, and for a decision the arbiter drew (not the
// owner's answer, which carries the pending Outcome's durations) the
// homard.decide and homard.run children, laid out from the arbiter's
// durations.
func (tt *Turn) decided(out *arbiter.Outcome, now time.Time) {
	// Allowlisted attributes only: never the reason, plan or result.
	tt.tool.SetAttr(telemetry.String("homard.decision", string(out.Decision)), telemetry.String("homard.rule", out.Rule),
		telemetry.String("homard.risk", out.Risk))
	if out.Decision == arbiter.Pending && tt.asks {
		tt.tool.SetAttr(telemetry.Bool("homard.asked", true))
	}
	durs := [2]time.Duration{out.DecideDur, out.RunDur}
	if durs == ([2]time.Duration{}) || durs == tt.last {
		return
	}
	first := tt.last == [2]time.Duration{}
	tt.last = durs
	// The first decision began with the proposal; a later one (after an
	// approval) is placed back from now.
	start := now.Add(-(out.DecideDur + out.RunDur))
	if first {
		start = tt.toolStart
	}
	_, d := tt.tr.StartAt(tt.toolCtx, "homard.decide", start, telemetry.String("homard.rule", out.Rule))
	d.EndAt(start.Add(out.DecideDur), nil)
	if out.RunDur > 0 {
		_, r := tt.tr.StartAt(tt.toolCtx, "homard.run", start.Add(out.DecideDur))
		r.EndAt(start.Add(out.DecideDur+out.RunDur), nil)
	}
	tt.tool.SetAttr(telemetry.Millis("homard.decide_ms", out.DecideDur), telemetry.Millis("homard.run_ms", out.RunDur))
	tt.tr.Add(metricProposals, 1, telemetry.String("homard.decision", string(out.Decision)))
	tt.tr.Add(metricToolTime, (out.DecideDur + out.RunDur).Milliseconds())
}

// closeTool ends the open tool span at end, if any.
func (tt *Turn) closeTool(end time.Time) {
	if tt.tool == nil {
		return
	}
	tt.tool.EndAt(end, nil)
	tt.tool, tt.toolCtx, tt.toolID = nil, nil, ""
}

// Spent is what a finished turn reports on its span.
type Spent struct {
	Calls, Units, Pending int
	Usage                 llm.Usage
	// Stopped is why the loop stopped early (agent.TurnResult.Stopped).
	Stopped string
}

// End ends the turn's span with what it spent; err is the turn's error.
func (tt *Turn) End(e Spent, err error) {
	if tt == nil {
		return
	}
	tt.closeTool(time.Now())
	// Allowlisted attributes only; stopped is homard's own sentence (a
	// budget, a repeated failing call named by its tool).
	tt.span.SetAttr(telemetry.Int("homard.calls", int64(e.Calls)), telemetry.Int("homard.units", int64(e.Units)),
		telemetry.Int("homard.pending", int64(e.Pending)),
		telemetry.Int("homard.tokens.input", int64(e.Usage.Input)), telemetry.Int("homard.tokens.output", int64(e.Usage.Output)),
		telemetry.Int("homard.tokens.cached", int64(e.Usage.Cached)))
	if e.Stopped != "" {
		tt.span.SetAttr(telemetry.String("homard.stopped", e.Stopped))
	}
	tt.span.End(err)
	tt.tr.Add(metricTurns, 1, telemetry.String("homard.trust", string(tt.trust)))
	tt.tr.Add(metricTurnTime, time.Since(tt.start).Milliseconds())
}
