package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm/llmtest"
)

// contentServer is a loopback OpenAI-format endpoint that answers by what
// a request holds, so many sessions can run at once: a request with a
// tool result gets a short text, any other a read_file call.
func contentServer(tb testing.TB) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	text := llmtest.OpenAIStream(llmtest.Turn{Text: []string{"It says", " hello."}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := n.Add(1)
		chunks := text
		if !bytes.Contains(body, []byte(`"role":"tool"`)) {
			chunks = llmtest.OpenAIStream(llmtest.Turn{Calls: []llmtest.CallScript{{ID: fmt.Sprint("call_", id), Name: "read_file", Fragments: []string{`{"path":"notes.md"}`}}}})
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			io.WriteString(w, c)
		}
	}))
	tb.Cleanup(srv.Close)
	return srv, &n
}

// replicas returns n runtimes on one store — n homes sharing one
// PostgreSQL database under scripts/pg-test (replicas on n machines), or,
// on SQLite, n processes' runtimes on one home — in autopilot, talking to
// srv.
func replicas(tb testing.TB, n int, srv *httptest.Server) []*Runtime {
	tb.Helper()
	first := newTestRuntime(tb, "autopilot")
	out := []*Runtime{first}
	for len(out) < n {
		paths := first.Paths
		if first.Config.Store.URL != "" {
			var err error
			if paths, err = config.ResolvePaths(tb.TempDir(), func(string) string { return "" }); err != nil {
				tb.Fatal(err)
			}
			if _, err := Init(context.Background(), paths, config.InitOptions{StoreURL: first.Config.Store.URL, Mode: "autopilot"}); err != nil {
				tb.Fatal(err)
			}
		}
		r, err := Open(context.Background(), paths, Options{})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { r.Close() })
		out = append(out, r)
	}
	for _, r := range out {
		r.Config.Model.Provider = "openai"
		r.Config.Model.BaseURL = srv.URL + "/v1"
		r.Config.Memory.Capture = "off"
		writeWorkspaceFile(tb, r, "notes.md", "hello\n")
	}
	return out
}

// checkOneTurnEach fails t with each error of errs (closed here), unless
// the model was asked twice per session (one one-tool turn each) and r's
// store holds sessions sessions of exactly one turn.
func checkOneTurnEach(t *testing.T, r *Runtime, errs chan error, requests int64, sessions int) {
	t.Helper()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if requests != int64(2*sessions) {
		t.Errorf("%d model requests; want %d (two per one-tool turn)", requests, 2*sessions)
	}
	list, err := r.Store.SessionsOf(context.Background(), "owner", 1000)
	if err != nil {
		t.Fatal(err)
	}
	turns := 0
	for _, s := range list {
		if s.Turns != 1 {
			t.Errorf("session %s holds %d turns; want 1", s.ID, s.Turns)
		}
		turns += s.Turns
	}
	if len(list) != sessions || turns != sessions {
		t.Errorf("%d sessions with %d turns stored; want %d each", len(list), turns, sessions)
	}
}

// TestTwoReplicasManyTurns (issue 27): 200 one-tool turns at once, in 200
// sessions spread over two replicas of one store: every turn answers,
// each session holds exactly its one turn, every tool call is recorded,
// and the audit is one chain that verifies — the replicas' writes were
// serialised, never interleaved into a fork.
func TestTwoReplicasManyTurns(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test")
	srv, requests := contentServer(t)
	rs := replicas(t, 2, srv)
	const sessions = 200
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	sem := make(chan struct{}, 32) // 32 turns in flight at once
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := rs[i%2].Run(ctx, channel.TurnRequest{Text: "read notes.md", Session: fmt.Sprint("s", i)})
			if err == nil && res.Text != "It says hello." {
				err = fmt.Errorf("session s%d answered %q", i, res.Text)
			}
			if err != nil {
				errs <- fmt.Errorf("session s%d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	checkOneTurnEach(t, rs[1], errs, requests.Load(), sessions)
	ctx := context.Background()
	n, err := audit.Verify(ctx, rs[0].Store)
	if err != nil || n < sessions {
		t.Errorf("audit: %d records, %v; want one verified chain of at least %d", n, err, sessions)
	}
}

// BenchmarkReplicaTurns measures one-tool turns per second with one and
// with two replicas of one store (issue 27), 16 sessions in flight: on
// PostgreSQL (scripts/pg-test -run '^$' -bench ReplicaTurns ./internal/app)
// two homes on one database, on SQLite two runtimes on one home. Each
// iteration is one turn.
func BenchmarkReplicaTurns(b *testing.B) {
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprint("replicas=", n), func(b *testing.B) {
			b.Setenv("OPENAI_API_KEY", "sk-bench")
			srv, _ := contentServer(b)
			rs := replicas(b, n, srv)
			var next atomic.Int64
			b.SetParallelism(8) // 16 goroutines on 2 cores
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := next.Add(1)
					res, err := rs[int(i)%n].Run(context.Background(), channel.TurnRequest{Text: "read notes.md", Session: fmt.Sprint("b", i)})
					if err != nil || res.Text != "It says hello." {
						b.Errorf("turn %d: %q, %v", i, res.Text, err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "turns/s")
		})
	}
}

// TestTwoReplicasManyChatStreams (issue 27): 200 chat streams (POST
// /api/chat, as the web page sends them), in 200 sessions spread over the
// gateways of two replicas of one store, 32 open at once: every stream
// ends with its answer, and each session holds its one turn.
func TestTwoReplicasManyChatStreams(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test")
	srv, requests := contentServer(t)
	rs := replicas(t, 2, srv)
	gws := []*gw{startGateway(t, rs[0]), startGateway(t, rs[1])}
	const sessions = 200
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	sem := make(chan struct{}, 32)
	client := &http.Client{Timeout: 2 * time.Minute}
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			g := gws[i%2]
			req, err := http.NewRequest("POST", g.base+"/api/chat", strings.NewReader(fmt.Sprintf(`{"session":"s%d","message":"read notes.md"}`, i)))
			if err != nil {
				errs <- err
				return
			}
			req.Header.Set("Authorization", "Bearer "+g.token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				errs <- fmt.Errorf("session s%d: %w", i, err)
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != 200 {
				errs <- fmt.Errorf("session s%d: %d %v %s", i, resp.StatusCode, err, body)
				return
			}
			_, done, ok := strings.Cut(string(body), "event: done\ndata: ")
			if !ok || !strings.Contains(done, `"text":"It says hello."`) {
				errs <- fmt.Errorf("session s%d: the stream did not end with the answer:\n%s", i, body)
			}
		}()
	}
	wg.Wait()
	checkOneTurnEach(t, rs[1], errs, requests.Load(), sessions)
}
