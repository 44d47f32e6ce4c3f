package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain doubles as the stdio servers of the tests: with
// HOMARD_MCP_HELPER set, this binary is a server (or a process that
// never answers) instead of a test run.
func TestMain(m *testing.M) {
	if mode := os.Getenv("HOMARD_MCP_HELPER"); mode != "" {
		helperMain(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func helperMain(mode string) {
	switch mode {
	case "silent": // reads requests, never answers
		_, _ = io.Copy(io.Discard, os.Stdin)
	case "sleep":
		time.Sleep(time.Hour)
	case "serve":
		_ = helperServer().Run(context.Background(), &sdk.StdioTransport{})
	}
}

// helperServer has the tools the stdio tests call.
func helperServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "helper", Version: "1"}, nil)
	add := func(name string, h func(args map[string]any) string) {
		srv.AddTool(&sdk.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				var args map[string]any
				_ = json.Unmarshal(req.Params.Arguments, &args)
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: h(args)}}}, nil
			})
	}
	add("pid", func(map[string]any) string { return fmt.Sprint(os.Getpid()) })
	add("env", func(map[string]any) string { return strings.Join(os.Environ(), "\n") })
	add("crash", func(map[string]any) string { os.Exit(3); return "" })
	add("big", func(args map[string]any) string {
		n, _ := args["n"].(float64)
		return strings.Repeat("x", int(n))
	})
	add("spawn", func(map[string]any) string {
		exe, _ := os.Executable()
		cmd := exec.Command(exe)
		cmd.Env = []string{"HOMARD_MCP_HELPER=sleep"}
		if err := cmd.Start(); err != nil {
			return "error: " + err.Error()
		}
		return fmt.Sprint(cmd.Process.Pid)
	})
	return srv
}

// helperConfig is a stdio server that is this test binary in mode.
func helperConfig(t *testing.T, name, mode string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{Name: name, Command: []string{exe}, Env: map[string]string{"HOMARD_MCP_HELPER": mode}}
}

// pipeLauncher connects to an in-process go-sdk server over a pipe, through
// the same stdio code path as a process, and records what the client sent.
type pipeLauncher struct {
	server func() *sdk.Server
	mu     sync.Mutex
	sent   bytes.Buffer
}

func (l *pipeLauncher) Start(ctx context.Context, _, _ []string) (io.ReadWriteCloser, func() error, error) {
	c1, c2 := net.Pipe()
	ss, err := l.server().Connect(ctx, &sdk.IOTransport{Reader: c2, Writer: c2}, nil)
	if err != nil {
		return nil, nil, err
	}
	stop := func() error {
		_ = c1.Close()
		_ = ss.Close()
		return nil
	}
	return &recorder{Conn: c1, l: l}, stop, nil
}

func (l *pipeLauncher) messages() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.sent.String()), "\n")
}

type recorder struct {
	net.Conn
	l *pipeLauncher
}

func (r *recorder) Write(b []byte) (int, error) {
	r.l.mu.Lock()
	r.l.sent.Write(b)
	r.l.mu.Unlock()
	return r.Conn.Write(b)
}

// connectInProcess connects to srv (a fresh one per start) as server name.
func connectInProcess(t *testing.T, name string, srv func() *sdk.Server, readOnly ...string) (*Server, *pipeLauncher) {
	t.Helper()
	l := &pipeLauncher{server: srv}
	cfg := ServerConfig{Name: name, Command: []string{"in-process"}, ReadOnly: readOnly}
	s, err := Connect(context.Background(), cfg, l)
	if err != nil {
		t.Fatalf("Connect(%s): %v", name, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, l
}

// addText adds a tool that answers text.
func addText(srv *sdk.Server, name, description, text string) {
	srv.AddTool(&sdk.Tool{Name: name, Description: description, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
		})
}
