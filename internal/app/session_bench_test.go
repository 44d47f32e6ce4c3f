package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm/llmtest"
)

// sessionTurns is how many turns BenchmarkSessionGrowth runs in one
// session, and sessionEdge how many at each end it compares.
const (
	sessionTurns = 50
	sessionEdge  = 5
)

// toolTurnServer is a loopback OpenAI-format endpoint for one-tool turns:
// the first request of a turn is answered with a read_file call, the
// second (after the tool result) with a short text. It records
// the tool gap: from the end of a call's answer to the next request.
type toolTurnServer struct {
	*httptest.Server
	mu      sync.Mutex
	callEnd time.Time
	gaps    []time.Duration
	n       int
}

func newToolTurnServer(tb testing.TB) *toolTurnServer {
	s := &toolTurnServer{}
	text := llmtest.OpenAIStream(llmtest.Turn{Text: []string{"It says", " hello."}})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		// Each turn is two requests: the call, then the answer after its
		// result. Counting (not decoding the request, whose cost grows
		// with the history) keeps the fake's own cost flat.
		io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.n++
		afterTool := s.n%2 == 0
		if afterTool && !s.callEnd.IsZero() {
			s.gaps = append(s.gaps, arrived.Sub(s.callEnd))
		}
		id := "call_" + strconv.Itoa(s.n)
		s.mu.Unlock()
		chunks := text
		if !afterTool {
			chunks = llmtest.OpenAIStream(llmtest.Turn{Calls: []llmtest.CallScript{{ID: id, Name: "read_file", Fragments: []string{`{"path":"notes.md"}`}}}})
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i, c := range chunks {
			if !afterTool && i == len(chunks)-1 {
				// Before the last chunk: once it is out, the client may
				// send the next request before this handler goes on.
				s.mu.Lock()
				s.callEnd = time.Now()
				s.mu.Unlock()
			}
			io.WriteString(w, c)
			w.(http.Flusher).Flush()
		}
	}))
	tb.Cleanup(s.Close)
	return s
}

// BenchmarkSessionGrowth runs 50 one-tool turns (read_file, then a short
// answer: two model requests a turn) in one session, in autopilot with
// memory capture off, and reports the mean turn time and tool gap of the
// first 5 and the last 5 turns, and their growth in percent: what a long
// session costs per turn beyond the model's own time. Each iteration is a
// new session of 50 turns.
func BenchmarkSessionGrowth(b *testing.B) {
	srv := newToolTurnServer(b)
	r := newTestRuntime(b, "autopilot")
	b.Setenv("OPENAI_API_KEY", "sk-bench")
	r.Config.Model.Provider = "openai"
	r.Config.Model.BaseURL = srv.URL + "/v1"
	r.Config.Memory.Capture = "off"
	writeWorkspaceFile(b, r, "notes.md", "hello\n")
	ctx := context.Background()
	var first, last, gapFirst, gapLast time.Duration
	var allocFirst, allocLast uint64 // bytes allocated by the process during those turns
	it := 0
	for b.Loop() {
		session := "growth" + strconv.Itoa(it)
		it++
		srv.mu.Lock()
		srv.gaps, srv.callEnd, srv.n = srv.gaps[:0], time.Time{}, 0
		srv.mu.Unlock()
		turns := make([]time.Duration, sessionTurns)
		for i := range turns {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			start := time.Now()
			// Labelled for a CPU profile: -tagfocus=phase=first|mid|last
			// splits the turn's own work by where it is in the session.
			var res channel.TurnResult
			var err error
			phase := "mid"
			if i < sessionEdge {
				phase = "first"
			} else if i >= sessionTurns-sessionEdge {
				phase = "last"
			}
			pprof.Do(ctx, pprof.Labels("phase", phase), func(ctx context.Context) {
				res, err = r.Run(ctx, channel.TurnRequest{Text: "read notes.md", Session: session})
			})
			if err != nil || res.Text != "It says hello." {
				b.Fatalf("turn %d: %q, %v", i, res.Text, err)
			}
			turns[i] = time.Since(start)
			runtime.ReadMemStats(&ms)
			switch {
			case i < sessionEdge:
				allocFirst += ms.TotalAlloc - before
			case i >= sessionTurns-sessionEdge:
				allocLast += ms.TotalAlloc - before
			}
		}
		srv.mu.Lock()
		gaps := append([]time.Duration(nil), srv.gaps...)
		srv.mu.Unlock()
		if len(gaps) != sessionTurns {
			b.Fatalf("%d tool gaps recorded; want %d (one per turn)", len(gaps), sessionTurns)
		}
		for i := range sessionEdge {
			first += turns[i]
			last += turns[sessionTurns-1-i]
			gapFirst += gaps[i]
			gapLast += gaps[sessionTurns-1-i]
		}
	}
	n := float64(b.N * sessionEdge)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	b.ReportMetric(ms(first), "ms/turn-first5")
	b.ReportMetric(ms(last), "ms/turn-last5")
	b.ReportMetric(100*(float64(last)/float64(first)-1), "%turn-growth")
	b.ReportMetric(ms(gapFirst), "ms/gap-first5")
	b.ReportMetric(ms(gapLast), "ms/gap-last5")
	b.ReportMetric(100*(float64(gapLast)/float64(gapFirst)-1), "%gap-growth")
	// Allocation does not depend on the machine's load: what a turn
	// allocates growing with the session is work redone per old message.
	b.ReportMetric(float64(allocFirst)/1024/n, "KB/turn-first5")
	b.ReportMetric(float64(allocLast)/1024/n, "KB/turn-last5")
}
