package app

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
)

// BenchmarkTimeToFirstByte measures Runtime.Run from its call to the first
// streamed text fragment reaching OnText — session lookup, history load,
// building the model client and the agent, encoding and sending the
// request — against the real OpenAI client on a loopback server. Each
// iteration also times the bare client (Stream to its first text event,
// with the same system prompt and tools) and reports the difference as
// overhead-ns: what homard adds before the first byte. Each iteration uses
// a new session, so the history stays empty and the numbers do not drift.
func BenchmarkTimeToFirstByte(b *testing.B) {
	r := benchRuntime(b)
	model, err := r.Model()
	if err != nil {
		b.Fatal(err)
	}
	var specs []llm.ToolSpec
	for _, s := range r.Registry.Specs() {
		specs = append(specs, llm.ToolSpec{Name: s.Name, Description: s.Description, Schema: s.Schema})
	}
	req := llm.Request{Model: r.Config.Model.Name, System: systemPrompt, Tools: specs,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello"}}}
	ctx := context.Background()

	runTTFB := func(i int) time.Duration { return runFirstByte(b, r, ctx, "b"+strconv.Itoa(i)) }
	rawTTFB := func() time.Duration {
		d, err := llmtest.FirstText(ctx, model, req)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}

	rawTTFB() // open the loopback connection outside the measurement
	var turn, raw time.Duration
	i := 0
	for b.Loop() {
		if i%2 == 0 { // alternate the order: neither always gets the warm connection
			raw += rawTTFB()
			turn += runTTFB(i)
		} else {
			turn += runTTFB(i)
			raw += rawTTFB()
		}
		i++
	}
	n := float64(b.N)
	b.ReportMetric(float64(turn.Nanoseconds())/n, "ns/first-byte")
	b.ReportMetric(float64(raw.Nanoseconds())/n, "raw-ns/first-byte")
	b.ReportMetric(float64((turn-raw).Nanoseconds())/n, "overhead-ns")
}

// benchRuntime is a smart-mode Runtime whose model is a loopback
// OpenAI-format endpoint answering every request with the same short text
// stream (memory capture off: it would add a model call per turn).
func benchRuntime(b *testing.B) *Runtime {
	srv := llmtest.NewRepeatingServer(llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Hello", " there."}}))
	b.Cleanup(srv.Close)
	r := newTestRuntime(b, "smart")
	b.Setenv("OPENAI_API_KEY", "sk-bench")
	r.Config.Model.Provider = "openai"
	r.Config.Model.BaseURL = srv.URL + "/v1"
	r.Config.Memory.Capture = "off"
	return r
}

// runFirstByte runs one turn in session and returns the time from the
// Run call to the first text fragment reaching OnText.
func runFirstByte(b *testing.B, r *Runtime, ctx context.Context, session string) time.Duration {
	var first time.Duration
	start := time.Now()
	_, err := r.Run(ctx, channel.TurnRequest{Text: "hello", Session: session, OnText: func(string) {
		if first == 0 {
			first = time.Since(start)
		}
	}})
	if err != nil || first == 0 {
		b.Fatalf("Run: %v (first byte after %v)", err, first)
	}
	return first
}
