package main

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/homard/homard/internal/llm/llmtest"
)

// fakeModel is an OpenAI-compatible endpoint whose behaviour the test
// changes between runs: "answer" streams "one", "never" accepts and never
// answers, "stall" stops mid-stream, "too-long" refuses every request as
// longer than the model's window. Each request's body is kept and its
// arrival signalled on got.
type fakeModel struct {
	mode atomic.Value // string
	got  chan string  // request bodies, as they arrive
}

func newFakeModel(t *testing.T) (*fakeModel, *httptest.Server) {
	f := &fakeModel{got: make(chan string, 16)}
	f.mode.Store("answer")
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.got <- string(body)
	chunks := llmtest.OpenAIStream(llmtest.Turn{Text: []string{"o", "ne"}})
	switch f.mode.Load().(string) {
	case "never":
		<-r.Context().Done()
		return
	case "too-long":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"This model's maximum context length is 100 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)
		return
	case "stall":
		chunks = chunks[:2]
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range chunks {
		io.WriteString(w, c)
		w.(http.Flusher).Flush()
	}
	if f.mode.Load().(string) == "stall" {
		<-r.Context().Done()
	}
}

// hangHome builds the binary and a home whose model is srv, with the given
// model deadlines written into config.toml.
func hangHome(t *testing.T, srv *httptest.Server, timeouts map[string]string) (string, func(args ...string) *exec.Cmd) {
	t.Helper()
	bin := buildHomard(t)
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(),
		"XDG_DATA_HOME=" + t.TempDir(), "OPENAI_API_KEY=sk-test-HANGCLI0123456789"}
	env = append(env, storeEnv(t, home)...)
	homard := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"--home", home}, args...)...)
		cmd.Env = env
		return cmd
	}
	if out, err := homard("init", "--base-url", srv.URL+"/v1").CombinedOutput(); err != nil {
		t.Fatalf("homard init: %v\n%s", err, out)
	}
	captureOff(t, home)
	p := filepath.Join(home, "config.toml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for key, v := range timeouts {
		re := regexp.MustCompile(`(?m)^` + key + ` = .*$`)
		if !re.Match(b) {
			t.Fatalf("config.toml has no %s line", key)
		}
		// The first line only: [model]'s (other sections have keys of
		// the same name, such as [browser] idle_timeout).
		loc := re.FindIndex(b)
		b = append(append(append([]byte{}, b[:loc[0]]...), key+` = "`+v+`"`...), b[loc[1]:]...)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return home, homard
}

// exitCode runs cmd to its end within a generous test deadline (reaching
// it means homard hung) and returns its exit code and stderr.
func exitCode(t *testing.T, cmd *exec.Cmd, whileRunning func()) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if whileRunning != nil {
		whileRunning()
	}
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), stderr.String()
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("homard %v hung; stderr so far:\n%s", cmd.Args[1:], stderr.String())
	}
	return 0, ""
}

// TestRunCtrlC: Ctrl+C while the model has not answered ends `homard run`
// with "cancelled" on stderr and exit 130, and stores nothing of the turn:
// the next turn in the session is sent only the turn before it, and the
// audit chain verifies.
func TestRunCtrlC(t *testing.T) {
	f, srv := newFakeModel(t)
	_, homard := hangHome(t, srv, nil)
	if out, err := homard("run", "first task").CombinedOutput(); err != nil {
		t.Fatalf("homard run (answered): %v\n%s", err, out)
	}
	<-f.got

	f.mode.Store("never")
	cmd := homard("run", "second task")
	code, stderr := exitCode(t, cmd, func() {
		<-f.got // the request is in flight; the model will never answer
		cmd.Process.Signal(syscall.SIGINT)
	})
	if code != exitInterrupted || !strings.Contains(stderr, "homard: cancelled") {
		t.Fatalf("homard run after Ctrl+C = exit %d, stderr %q; want 130 and \"homard: cancelled\"", code, stderr)
	}
	if strings.Contains(stderr, "context canceled") {
		t.Errorf("stderr %q shows Go's context error; want only \"cancelled\"", stderr)
	}

	f.mode.Store("answer")
	if out, err := homard("run", "third task").CombinedOutput(); err != nil {
		t.Fatalf("homard run after the interrupted one: %v\n%s", err, out)
	}
	third := <-f.got
	if !strings.Contains(third, "first task") || strings.Contains(third, "second task") {
		t.Fatalf("the next turn was sent %s; want the first turn and nothing of the interrupted one", third)
	}
	if out, err := homard("audit", "--verify").CombinedOutput(); err != nil {
		t.Fatalf("homard audit --verify: %v\n%s", err, out)
	}
}

// TestRunNeverHangs is the check for `homard run` as a user runs
// it: a model that accepts and never answers, one that stalls mid-stream,
// and one that answers "context length exceeded" each end the run with
// exit 1 and a message naming what to change, within the configured (tiny)
// time. The twin, a model that answers, exits 0.
func TestRunNeverHangs(t *testing.T) {
	f, srv := newFakeModel(t)
	_, homard := hangHome(t, srv, map[string]string{"first_event_timeout": "500ms", "idle_timeout": "500ms"})
	tests := []struct {
		mode string
		code int
		want string
	}{
		{"never", exitFailure, "model.first_event_timeout"},
		{"stall", exitFailure, "model.idle_timeout"},
		{"too-long", exitFailure, "start a new session"},
		{"answer", exitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			f.mode.Store(tt.mode)
			code, stderr := exitCode(t, homard("run", "--session", tt.mode, "hello"), nil)
			for len(f.got) > 0 {
				<-f.got
			}
			t.Logf("stderr: %s", stderr)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("homard run (%s model) = exit %d, stderr %q; want %d and %q", tt.mode, code, stderr, tt.code, tt.want)
			}
		})
	}
}

// TestProviderTestGivesUp: `homard provider test --timeout` against a model
// that never answers ends with a message saying how to wait longer.
func TestProviderTestGivesUp(t *testing.T) {
	f, srv := newFakeModel(t)
	f.mode.Store("never")
	_, homard := hangHome(t, srv, nil)
	code, stderr := exitCode(t, homard("provider", "test", "--timeout", "500ms"), nil)
	if code != exitFailure || !strings.Contains(stderr, "--timeout 1s") {
		t.Fatalf("provider test = exit %d, stderr %q; want 1 and a hint to raise --timeout", code, stderr)
	}
}
