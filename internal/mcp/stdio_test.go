package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func connectHelper(t *testing.T, cfg ServerConfig) *Server {
	t.Helper()
	s, err := Connect(context.Background(), cfg, ExecLauncher{})
	if err != nil {
		t.Fatalf("Connect(%s): %v", cfg.Name, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	l, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.Pin(l.Fingerprint)
	return s
}

func TestStartTimesOut(t *testing.T) {
	cfg := helperConfig(t, "slow", "silent")
	cfg.StartTimeout = 300 * time.Millisecond
	_, err := Connect(context.Background(), cfg, ExecLauncher{})
	if err == nil || !strings.Contains(err.Error(), "mcp server slow did not answer initialize within 300ms") {
		t.Fatalf("Connect to a silent server: err = %v; want the initialize timeout", err)
	}
}

// TestStdioEnvIsExactlyAsGiven: the server sees its configured variables
// and none of homard's.
func TestStdioEnvIsExactlyAsGiven(t *testing.T) {
	t.Setenv("HOMARD_TEST_SECRET", "hunter2")
	cfg := helperConfig(t, "env", "serve")
	cfg.Env["GREETING"] = "hi"
	s := connectHelper(t, cfg)
	res, err := s.Call(context.Background(), "env", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "GREETING=hi\nHOMARD_MCP_HELPER=serve" {
		t.Errorf("server environment = %q; want only GREETING and HOMARD_MCP_HELPER", res.Text)
	}
}

// TestCrashedServerRestarts: a server that exits is restarted on a later
// call, not before its backoff, and the restarted one answers.
func TestCrashedServerRestarts(t *testing.T) {
	s := connectHelper(t, helperConfig(t, "crashy", "serve"))
	var clock struct {
		sync.Mutex
		t time.Time
	}
	clock.t = time.Unix(1e9, 0)
	s.mu.Lock()
	s.now = func() time.Time { clock.Lock(); defer clock.Unlock(); return clock.t }
	s.mu.Unlock()
	ctx := context.Background()

	first, err := s.Call(ctx, "pid", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Call(ctx, "crash", nil); err == nil {
		t.Fatal("Call(crash) succeeded; want an error")
	}
	if _, err := s.Call(ctx, "pid", nil); !errors.Is(err, ErrRestarting) {
		t.Fatalf("Call right after the crash: err = %v; want ErrRestarting", err)
	}
	clock.Lock()
	clock.t = clock.t.Add(minBackoff)
	clock.Unlock()
	second, err := s.Call(ctx, "pid", nil)
	if err != nil {
		t.Fatalf("Call after the backoff: %v", err)
	}
	if second.Text == first.Text || s.Restarts() != 1 {
		t.Errorf("pid %s then %s, %d restarts; want a new process and 1 restart", first.Text, second.Text, s.Restarts())
	}
}

// TestLineCap: a 5 MiB line ends the session with an error; its twin, a
// 3 MiB line, is read and its text capped at MaxText.
func TestLineCap(t *testing.T) {
	s := connectHelper(t, helperConfig(t, "big", "serve"))
	ctx := context.Background()
	res, err := s.Call(ctx, "big", json.RawMessage(`{"n":3145728}`))
	if err != nil {
		t.Fatalf("Call(big, 3 MiB): %v", err)
	}
	if len(res.Text) != MaxText || !res.Truncated || res.Omitted != 3<<20-MaxText {
		t.Errorf("3 MiB result: %d bytes, Truncated %v, Omitted %d; want %d, true, %d", len(res.Text), res.Truncated, res.Omitted, MaxText, 3<<20-MaxText)
	}
	_, err = s.Call(ctx, "big", json.RawMessage(`{"n":5242880}`))
	if err == nil || !strings.Contains(err.Error(), "stopped during big") {
		t.Fatalf("Call(big, 5 MiB): err = %v; want the session to end", err)
	}
	if _, err := s.Call(ctx, "pid", nil); !errors.Is(err, ErrRestarting) {
		t.Errorf("Call after the over-long line: err = %v; want ErrRestarting (the session was dropped)", err)
	}
}

// TestCloseKillsProcessTree: a grandchild the server started dies with it.
func TestCloseKillsProcessTree(t *testing.T) {
	s := connectHelper(t, helperConfig(t, "tree", "serve"))
	res, err := s.Call(context.Background(), "spawn", nil)
	if err != nil || strings.HasPrefix(res.Text, "error") {
		t.Fatalf("Call(spawn) = %q, %v", res.Text, err)
	}
	pid := res.Text
	if !alive(pid) {
		t.Fatalf("grandchild %s is not running before Close", pid)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// SIGKILL is delivered asynchronously: wait for the kernel to act.
	for deadline := time.Now().Add(10 * time.Second); alive(pid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("grandchild %s still runs after Close", pid)
	}
}

// alive reports whether pid runs (a zombie waiting for its reaper does not).
func alive(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// TestHTTPBearer: a streamable-HTTP server behind a token is reached with
// it; the twin without the right token is refused.
func TestHTTPBearer(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	addText(srv, "echo", "", "over http")
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	ctx := context.Background()
	if s, err := Connect(ctx, ServerConfig{Name: "web", URL: ts.URL, Token: "wrong"}, nil); err == nil {
		_ = s.Close()
		t.Fatal("Connect with a wrong token succeeded")
	} else if !strings.Contains(err.Error(), "refused the token_secret's token (401)") {
		t.Errorf("Connect with a wrong token: %v; want it to say the token was refused", err)
	}
	// No token at all, to a server that asks for an OAuth login: the
	// error says how to log in rather than a bare "Unauthorized".
	if s, err := Connect(ctx, ServerConfig{Name: "web", URL: ts.URL}, nil); err == nil {
		_ = s.Close()
		t.Fatal("Connect without a token succeeded")
	} else if !strings.Contains(err.Error(), `auth = "oauth"`) || !strings.Contains(err.Error(), "homard mcp login") {
		t.Errorf("Connect without a token: %v; want it to point at auth = \"oauth\" and homard mcp login", err)
	}
	s, err := Connect(ctx, ServerConfig{Name: "web", URL: ts.URL, Token: "s3cret"}, nil)
	if err != nil {
		t.Fatalf("Connect with the token: %v", err)
	}
	defer s.Close()
	l, err := s.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Pin(l.Fingerprint)
	res, err := s.Call(ctx, "echo", nil)
	if err != nil || res.Text != "over http" {
		t.Errorf("Call over HTTP = %q, %v; want \"over http\"", res.Text, err)
	}
}
