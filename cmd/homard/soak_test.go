//go:build soak

package main

// The soak (issue 25, point 6): `scripts/soak` (not in CI) runs a real
// `homard serve` against a loopback fake model for SOAK_DURATION (default
// 1h) with SOAK_SESSIONS (default 64) sessions each sending one turn
// after another through POST /api/chat — every turn one read_file and an
// answer, memory capture on — and samples serve's RSS every 10 s. It
// reports turns, errors and RSS (start, highest, last); the README keeps
// the last result.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/homard/homard/internal/llm/llmtest"
)

func soakEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// soakModel answers a request that ends with a tool result (or offers no
// tools: a capture) with text, and any other with one read_file call.
func soakModel() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
			Tools []json.RawMessage `json:"tools"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		turn := llmtest.Turn{Text: []string{"The note says hello."}}
		if n := len(req.Messages); len(req.Tools) > 0 && n > 0 && req.Messages[n-1].Role == "user" {
			turn = llmtest.Turn{Calls: []llmtest.CallScript{{ID: "c1", Name: "read_file", Fragments: []string{`{"path":"notes/a.md"}`}}}}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range llmtest.OpenAIStream(turn) {
			io.WriteString(w, c)
		}
	}))
}

func rss(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func TestSoak(t *testing.T) {
	duration := time.Duration(soakEnv("SOAK_MINUTES", 60)) * time.Minute
	sessions := soakEnv("SOAK_SESSIONS", 64)
	// Each session waits this long after a turn before its next one: a
	// person's pace, not a benchmark's.
	pause := time.Duration(soakEnv("SOAK_PAUSE_MS", 5000)) * time.Millisecond
	model := soakModel()
	defer model.Close()
	_, homard := hangHome(t, model, nil)
	home := homardHome(t, homard)
	if err := os.MkdirAll(filepath.Join(home, "workspace", "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "workspace", "notes", "a.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := homard("token", "create", "--name", "soak").Output()
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(out))
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	serve := homard("serve", "--addr", addr, "--log-format", "json")
	// The runtime's GC trace says what is live after each collection:
	// RSS alone cannot tell a heap that grows from one the runtime has
	// not yet handed back to the kernel.
	if serve.Env == nil {
		serve.Env = os.Environ()
	}
	serve.Env = append(serve.Env, "GODEBUG=gctrace=1")
	stderr, err := serve.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var live liveHeap
	go live.read(stderr)
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { serve.Process.Signal(os.Interrupt); serve.Wait() }()
	base := "http://" + addr
	for i := 0; ; i++ {
		if resp, err := http.Get(base + "/api/info"); err == nil {
			resp.Body.Close()
			break
		}
		if i > 100 {
			t.Fatal("serve did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}
	start := rss(serve.Process.Pid)
	var turns, errs atomic.Int64
	var maxRSS atomic.Int64
	maxRSS.Store(start)
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 2 * time.Minute}
	for s := range sessions {
		wg.Go(func() {
			for ctx.Err() == nil {
				body := fmt.Sprintf(`{"session":"soak-%d","message":"what does my note say?"}`, s)
				req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/chat", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						errs.Add(1)
					}
					continue
				}
				done := false
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					switch sc.Text() {
					case "event: done":
						done = true
					case "event: error":
						errs.Add(1)
					}
				}
				resp.Body.Close()
				select {
				case <-ctx.Done():
				case <-time.After(pause):
				}
				if done {
					turns.Add(1)
				} else if ctx.Err() == nil && resp.StatusCode != http.StatusOK {
					errs.Add(1)
				}
			}
		})
	}
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	var last int64
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
			last = rss(serve.Process.Pid)
			if last > maxRSS.Load() {
				maxRSS.Store(last)
			}
			t.Logf("%s: %d turns, %d errors, RSS %.1f MiB, live heap %d MB", time.Now().Format(time.TimeOnly), turns.Load(), errs.Load(), float64(last)/(1<<20), live.last.Load())
		}
	}
	wg.Wait()
	summary := fmt.Sprintf("soak: %v, %d sessions, a turn each every %v: %d turns, %d errors; serve RSS %.1f MiB at start, %.1f MiB highest, %.1f MiB last; live heap after GC %d MB in the first minute at most, %d MB highest, %d MB last (%d GCs)",
		duration, sessions, pause, turns.Load(), errs.Load(), float64(start)/(1<<20), float64(maxRSS.Load())/(1<<20), float64(last)/(1<<20),
		live.early.Load(), live.max.Load(), live.last.Load(), live.n.Load())
	t.Log(summary)
	if p := os.Getenv("SOAK_OUT"); p != "" {
		os.WriteFile(p, []byte(summary+"\n"), 0o644)
	}
	if errs.Load() > 0 || turns.Load() == 0 {
		t.Errorf("%s; want turns and no errors", summary)
	}
}

// liveHeap reads GODEBUG=gctrace=1 lines ("… 4->5->2 MB, …": the heap
// at the start and end of a collection, then what it left live).
type liveHeap struct {
	n, early, max, last atomic.Int64
}

var gcLine = regexp.MustCompile(`(\d+)->(\d+)->(\d+) MB`)

func (h *liveHeap) read(r io.Reader) {
	start := time.Now()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := gcLine.FindStringSubmatch(sc.Text())
		if m == nil || !strings.HasPrefix(sc.Text(), "gc ") {
			continue
		}
		mb, _ := strconv.ParseInt(m[3], 10, 64)
		h.n.Add(1)
		h.last.Store(mb)
		if mb > h.max.Load() {
			h.max.Store(mb)
		}
		if time.Since(start) < time.Minute && mb > h.early.Load() {
			h.early.Store(mb)
		}
	}
}

// homardHome is the --home the homard function passes.
func homardHome(t *testing.T, homard func(args ...string) *exec.Cmd) string {
	t.Helper()
	c := homard("version")
	for i, a := range c.Args {
		if a == "--home" && i+1 < len(c.Args) {
			return c.Args[i+1]
		}
	}
	t.Fatal("no --home")
	return ""
}
