package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPServeOverStdio drives the built binary as an MCP server with raw
// JSON-RPC lines, as any MCP client would: initialize, list the tools
// (homard's own, no memory tools, none that answers an approval) and call
// read_file through the arbiter; the file's text comes back between
// untrusted markers.
func TestMCPServeOverStdio(t *testing.T) {
	bin := buildHomard(t)
	home := filepath.Join(t.TempDir(), "home")
	env := append(os.Environ(), storeEnv(t, home)...)
	initCmd := exec.Command(bin, "--home", home, "init")
	initCmd.Env = env
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(home, "workspace", "notes.txt"), []byte("the kettle is blue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--home", home, "mcp", "serve", "--client", "editor")
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	reply := func(id int) map[string]any {
		t.Helper()
		timeout := time.After(2 * time.Minute) // a generous bound for a busy machine; the answer comes in milliseconds
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("homard mcp serve closed stdout before answering %d", id)
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("not JSON on stdout: %q", l)
				}
				if m["id"] == float64(id) {
					return m
				}
			case <-timeout:
				t.Fatalf("no answer to request %d", id)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r := reply(1); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var names []string
	for _, tl := range reply(2)["result"].(map[string]any)["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	joined := "," + strings.Join(names, ",") + ","
	if !strings.Contains(joined, ",read_file,") || strings.Contains(joined, ",remember,") || strings.Contains(joined, ",recall,") || strings.Contains(joined, "approv") {
		t.Fatalf("tools = %v; want homard's tools without memory or approvals", names)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"notes.txt"}}}`)
	res := fmt.Sprint(reply(3)["result"])
	if !strings.Contains(res, "the kettle is blue") || !strings.Contains(res, "BEGIN_UNTRUSTED") || !strings.Contains(res, "decision: ran") {
		t.Errorf("read_file result = %s; want the file's text, wrapped as untrusted", res)
	}
}
