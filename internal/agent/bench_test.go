package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/llm/openai"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

// loopModel is a zero-time model for benchmarks: while the conversation
// has fewer than total tool results it proposes perRound more read_file
// calls, then it answers. Its events are built once; it is safe for
// concurrent use because it never changes after construction.
type loopModel struct {
	total, perRound int
	round, answer   []llm.Event
}

func newLoopModel(total, perRound int) *loopModel {
	m := &loopModel{total: total, perRound: perRound, answer: llmtest.Answer("done")}
	for i := range perRound {
		m.round = append(m.round, llmtest.Call(fmt.Sprintf("c%d", i), "read_file", `{"path":"notes.txt"}`))
	}
	m.round = append(m.round, llmtest.Done(llm.StopToolUse))
	return m
}

func (m *loopModel) Stream(_ context.Context, req llm.Request) (llm.Stream, error) {
	results := 0
	for _, msg := range req.Messages {
		if msg.Role == llm.RoleTool {
			results++
		}
	}
	if results < m.total && !req.NoToolCalls {
		return &sliceStream{events: m.round}, nil
	}
	return &sliceStream{events: m.answer}, nil
}

type sliceStream struct{ events []llm.Event }

func (s *sliceStream) Next() (llm.Event, error) {
	if len(s.events) == 0 {
		return llm.Event{}, io.EOF
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

func (s *sliceStream) Close() error { return nil }

// fixedDecider answers every proposal with the same Outcome, so the
// arbiter's time is left out of the measurement.
type fixedDecider struct{ out arbiter.Outcome }

func (d fixedDecider) Decide(context.Context, arbiter.Proposal) (arbiter.Outcome, error) {
	return d.out, nil
}

var benchSpecs = []tool.Spec{
	{Name: "read_file", Description: "Read a text file of the workspace.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true},
	{Name: "write_file", Description: "Write a text file of the workspace.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}`),
		Action: policy.ActionWrite, Risk: policy.RiskMedium},
}

func benchAgent(m llm.Model) *agent.Agent {
	return agent.New(agent.Options{
		Model: m, ModelName: "bench", Tools: benchSpecs, System: "You are homard.",
		Decider: fixedDecider{arbiter.Outcome{Decision: arbiter.Ran, Rule: "mode.smart.read",
			Result: &tool.Result{Text: "one\ntwo\nthree\n", Untrusted: true}}},
		Caller: arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s"},
		Budget: agent.Budget{MaxCalls: 1000, MaxUnits: 1000, Reserve: -1},
	})
}

// BenchmarkLoopOverheadPerToolCall measures what the turn loop itself
// costs per tool call: request assembly, stream handling, budget, the
// proposal, rendering and untrusted wrapping. The model takes no time and
// the Decider is a stub, so neither the arbiter nor a provider is in it.
// batch: 16 calls in one model answer; rounds: 16 answers of one call each
// (the history grows, as in a real turn).
func BenchmarkLoopOverheadPerToolCall(b *testing.B) {
	const calls = 16
	for _, c := range []struct {
		name     string
		perRound int
	}{{"batch", calls}, {"rounds", 1}} {
		b.Run(fmt.Sprintf("%s=%d", c.name, calls), func(b *testing.B) {
			a := benchAgent(newLoopModel(calls, c.perRound))
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := a.Turn(ctx, nil, "read notes.txt many times", nil)
				if err != nil || res.Calls != calls || res.Text != "done" {
					b.Fatalf("Turn = %d calls, %q, %v", res.Calls, res.Text, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
		})
	}
}

// ttfb runs one turn and returns the time from the call to the first text
// fragment reaching onEvent.
func ttfb(b *testing.B, a *agent.Agent, ctx context.Context) time.Duration {
	var first time.Duration
	start := time.Now()
	_, err := a.Turn(ctx, nil, "hello", func(ev agent.Event) {
		if ev.Kind == agent.EventText && first == 0 {
			first = time.Since(start)
		}
	})
	if err != nil || first == 0 {
		b.Fatalf("Turn: %v (first byte after %v)", err, first)
	}
	return first
}

// rawTTFB is the client's own time from Stream to its first text event.
func rawTTFB(b *testing.B, m llm.Model, ctx context.Context, req llm.Request) time.Duration {
	d, err := llmtest.FirstText(ctx, m, req)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// answerServer is a loopback endpoint that answers every request with the
// same OpenAI-format text stream.
func answerServer(b *testing.B) *httptest.Server {
	srv := llmtest.NewRepeatingServer(llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Hello", " there."}}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkTimeToFirstByte measures the time from starting a turn to the
// first streamed text fragment reaching the turn's callback.
//
// scripted: the in-process model answers at once, so all of it is
// homard's. openai: the real OpenAI client on a loopback llmtest-format
// server; each iteration also times the bare client (Stream to its first
// text event, same request shape) and reports the difference as
// overhead-ns, the time the agent adds before the first byte.
func BenchmarkTimeToFirstByte(b *testing.B) {
	ctx := context.Background()
	b.Run("scripted", func(b *testing.B) {
		a := benchAgent(newLoopModel(0, 0))
		var sum time.Duration
		for b.Loop() {
			sum += ttfb(b, a, ctx)
		}
		b.ReportMetric(float64(sum.Nanoseconds())/float64(b.N), "ns/first-byte")
	})
	b.Run("openai", func(b *testing.B) {
		srv := answerServer(b)
		m := openai.New(openai.Options{BaseURL: srv.URL + "/v1", APIKey: "sk-bench"})
		a := benchAgent(m)
		specs := make([]llm.ToolSpec, 0, len(benchSpecs))
		for _, s := range benchSpecs {
			specs = append(specs, llm.ToolSpec{Name: s.Name, Description: s.Description, Schema: s.Schema})
		}
		req := llm.Request{Model: "bench", System: "You are homard.", Tools: specs,
			Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello"}}}
		rawTTFB(b, m, ctx, req) // open the loopback connection outside the measurement
		var turn, raw time.Duration
		i := 0
		for b.Loop() {
			// Alternate which goes first, so that neither always finds
			// the connection just returned to the pool.
			if i%2 == 0 {
				raw += rawTTFB(b, m, ctx, req)
				turn += ttfb(b, a, ctx)
			} else {
				turn += ttfb(b, a, ctx)
				raw += rawTTFB(b, m, ctx, req)
			}
			i++
		}
		n := float64(b.N)
		b.ReportMetric(float64(turn.Nanoseconds())/n, "ns/first-byte")
		b.ReportMetric(float64(raw.Nanoseconds())/n, "raw-ns/first-byte")
		b.ReportMetric(float64((turn-raw).Nanoseconds())/n, "overhead-ns")
	})
}
