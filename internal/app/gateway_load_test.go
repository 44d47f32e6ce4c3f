package app

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/llm/llmtest"
)

// requestGoroutines counts the process's goroutines but those of serve's
// scheduler on PostgreSQL: river's, whose client starts them in the
// background on its own time (its leader's maintenance once it is
// elected), the scheduler's own (its stack reaches into river while it
// migrates river's tables, and out of it after) and its pool's
// (database/sql's opener, one per pool). A request can leak none of
// them; on SQLite nothing is left out.
func requestGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "github.com/riverqueue/") && !strings.Contains(g, "automation.(*riverScheduler)") &&
			!strings.Contains(g, "database/sql.(*DB).connectionOpener") {
			count++
		}
	}
	return count
}

// TestGatewayManyConcurrentStreams: 200 chat streams at once, each its
// own session, against a scripted model on loopback: every one ends with
// its own answer and no error, and once they are done the server holds no
// more goroutines than before (a settle loop, no time limit asserted).
func TestGatewayManyConcurrentStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	const n = 200
	r := newTestRuntime(t, "smart")
	replies := make([]llmtest.Reply, n)
	for i := range replies {
		replies[i] = openAI(llmtest.Turn{Text: []string{"Hello ", "there."}})
	}
	model := runServer(t, r, replies...)
	g := startGateway(t, r)
	// One warm request, so the model client's and the server's
	// connection goroutines exist before counting.
	g.getJSON("/api/sessions", &[]any{})
	before := requestGoroutines()

	tr := &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: 0}
	client := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := g.req("POST", "/api/chat", fmt.Sprintf(`{"session":"load-%d","message":"hi"}`, i), g.token)
			resp, err := client.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				b, _ := io.ReadAll(resp.Body)
				errs <- fmt.Errorf("stream %d: %d %s", i, resp.StatusCode, b)
				return
			}
			var text strings.Builder
			sc := bufio.NewScanner(resp.Body)
			event := ""
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.HasPrefix(line, "event: "):
					event = line[7:]
				case strings.HasPrefix(line, "data: ") && event == "delta":
					text.WriteString(line)
				case strings.HasPrefix(line, "data: ") && event == "error":
					errs <- fmt.Errorf("stream %d: error event %s", i, line)
					return
				case strings.HasPrefix(line, "data: ") && event == "done":
					if !strings.Contains(line, `"text":"Hello there."`) || !strings.Contains(line, fmt.Sprintf(`"session":"load-%d"`, i)) {
						errs <- fmt.Errorf("stream %d: done %s", i, line)
					}
					return
				}
			}
			errs <- fmt.Errorf("stream %d ended without done (%v)", i, sc.Err())
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var sessions []struct{ Turns int }
	g.getJSON("/api/sessions", &sessions)
	if len(sessions) != n {
		t.Errorf("%d sessions stored; want %d", len(sessions), n)
	}
	for _, s := range sessions {
		if s.Turns != 1 {
			t.Errorf("a session has %d turns; want 1", s.Turns)
			break
		}
	}
	// Close the idle keep-alive connections both HTTP clients pool (ours
	// to the gateway, the model client's to the fake model): they are
	// bounded pools, not per-stream state.
	tr.CloseIdleConnections()
	model.CloseClientConnections()
	// Settle: closed connections' goroutines and finished turns' return. The loop ends at the first count at or
	// below the baseline; only a leak makes it run out.
	var after int
	for range 200 {
		after = requestGoroutines()
		if after <= before {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after > before {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d before the streams, %d after; want no leak\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

// TestGatewayEventStreamsEndWithTheirClients: 100 /api/events streams
// opened and closed by their clients leave no goroutine behind, and one
// still open gets the updates of a turn.
func TestGatewayEventStreamsEndWithTheirClients(t *testing.T) {
	r := newTestRuntime(t, "smart")
	model := runServer(t, r, openAI(llmtest.Turn{Text: []string{"ok"}}))
	g := startGateway(t, r)
	g.getJSON("/api/sessions", &[]any{})
	before := requestGoroutines()
	tr := &http.Transport{}
	client := &http.Client{Transport: tr}
	var resps []*http.Response
	for range 100 {
		resp, err := client.Do(g.req("GET", "/api/events", "", g.token))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /api/events: %v %v", resp, err)
		}
		resps = append(resps, resp)
	}
	watcher := g.stream(g.req("GET", "/api/events", "", g.token))
	for _, resp := range resps {
		resp.Body.Close()
	}
	tr.CloseIdleConnections()
	g.stream(g.req("POST", "/api/chat", `{"session":"seen","message":"hi"}`, g.token)).until("done")
	if ev, _ := watcher.until("turn_done"); !strings.Contains(ev.data, `"session":"seen"`) {
		t.Errorf("turn_done %s; want session seen", ev.data)
	}
	watcher.close()
	model.CloseClientConnections()
	var after int
	for range 200 {
		after = requestGoroutines()
		if after <= before {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after > before {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d before, %d after the streams closed; want no leak\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}
