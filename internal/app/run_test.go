package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/sandbox"
)

// runServer starts a fake OpenAI endpoint answering with turns in order
// and points r at it.
func runServer(t *testing.T, r *Runtime, replies ...llmtest.Reply) *llmtest.Server {
	t.Helper()
	t.Setenv("OPENAI_API_KEY", "sk-test-RUNKEY0123456789")
	srv := llmtest.NewServer(replies...)
	t.Cleanup(srv.Close)
	r.Config.Model.Provider = "openai"
	r.Config.Model.BaseURL = srv.URL + "/v1"
	// Capture would make one more model call after each turn; the
	// memory tests turn it on with replies for it.
	r.Config.Memory.Capture = "off"
	return srv
}

func openAI(turn llmtest.Turn) llmtest.Reply {
	return llmtest.Reply{Chunks: llmtest.OpenAIStream(turn)}
}

func toolCall(id, name, args string) llmtest.Turn {
	// The arguments arrive split mid-JSON, as real providers send them.
	half := len(args) / 2
	return llmtest.Turn{Calls: []llmtest.CallScript{{ID: id, Name: name, Fragments: []string{args[:half], args[half:]}}}}
}

type wireMessage struct {
	Role       string `json:"role"`
	Content    any    `json:"content"`
	ToolCallID string `json:"tool_call_id"`
}

func requestMessages(t *testing.T, rec llmtest.Recorded) []wireMessage {
	t.Helper()
	var body struct {
		Messages []wireMessage `json:"messages"`
	}
	if err := json.Unmarshal(rec.Body, &body); err != nil {
		t.Fatalf("request body: %v\n%s", err, rec.Body)
	}
	// The system prompt travels as the first message on this wire; the
	// tests look at the conversation after it.
	if len(body.Messages) > 0 && body.Messages[0].Role == "system" {
		return body.Messages[1:]
	}
	return body.Messages
}

func TestRunReadsAnswersAndRemembers(t *testing.T) {
	r := newTestRuntime(t, "smart")
	writeWorkspaceFile(t, r, "notes.txt", "the kettle is blue\n")
	srv := runServer(t, r,
		openAI(toolCall("call_1", "read_file", `{"path":"notes.txt"}`)),
		openAI(llmtest.Turn{Text: []string{"The kettle ", "is blue."}, Usage: &llm.Usage{Input: 30, Output: 5, Cached: 10}}),
		openAI(llmtest.Turn{Text: []string{"You asked about the kettle."}}),
	)
	ctx := context.Background()
	var streamed strings.Builder
	res, err := r.Run(ctx, channel.TurnRequest{Text: "What colour is the kettle?", OnText: func(s string) { streamed.WriteString(s) }})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Text != "The kettle is blue." || streamed.String() != res.Text || len(res.Pending) != 0 || res.Stopped != "" {
		t.Fatalf("Run = %+v (streamed %q); want the answer, nothing pending", res, streamed.String())
	}
	if res.Usage.Input != 30 || res.Usage.Cached != 10 {
		t.Errorf("Usage = %+v; want input 30 cached 10", res.Usage)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests; want 2", len(reqs))
	}
	msgs := requestMessages(t, reqs[1])
	last := msgs[len(msgs)-1]
	content, _ := last.Content.(string)
	if last.Role != "tool" || last.ToolCallID != "call_1" || !strings.Contains(content, "[BEGIN_UNTRUSTED nonce=") ||
		!strings.Contains(content, "the kettle is blue") {
		t.Fatalf("second request's last message = %+v; want the file content wrapped as untrusted", last)
	}

	stored, err := r.Store.Messages(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	roles := make([]string, len(stored))
	for i, m := range stored {
		roles[i] = m.Role
	}
	if got := strings.Join(roles, ","); got != "user,assistant,tool,assistant" {
		t.Fatalf("stored roles = %s; want user,assistant,tool,assistant", got)
	}

	res, err = r.Run(ctx, channel.TurnRequest{Text: "What did I ask?"})
	if err != nil || res.Text != "You asked about the kettle." {
		t.Fatalf("second Run = %+v, %v", res, err)
	}
	third := requestMessages(t, srv.Requests()[2])
	if len(third) != 5 || third[0].Role != "user" || third[2].ToolCallID != "call_1" || third[4].Role != "user" {
		t.Fatalf("third request messages = %+v; want the first turn's 4 messages then the new task", third)
	}
	if third[0].Content != "What colour is the kettle?" {
		t.Errorf("third request's first message = %v; want the first task", third[0].Content)
	}
}

func TestRunPendingWriteWritesNothing(t *testing.T) {
	r := newTestRuntime(t, "smart")
	runServer(t, r,
		openAI(toolCall("call_w", "write_file", `{"path":"todo.md","content":"- tea\n"}`)),
		openAI(llmtest.Turn{Text: []string{"I asked to write todo.md; it waits for your approval."}}),
	)
	res, err := r.Run(context.Background(), channel.TurnRequest{Text: "Add tea to my todo list", Session: "work"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res.Pending) != 1 || !strings.HasPrefix(res.Pending[0], "ap_") {
		t.Fatalf("Pending = %v; want one approval id", res.Pending)
	}
	if _, err := os.Stat(filepath.Join(r.Config.Workspace.Roots[0].Path, "todo.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("todo.md exists (stat error %v); a pending write must not run", err)
	}
	stored, err := r.Store.Messages(context.Background(), "work")
	if err != nil || len(stored) != 4 || !strings.Contains(stored[2].Content, res.Pending[0]) {
		t.Fatalf("stored = %+v, %v; want the turn with the pending tool message", stored, err)
	}
}

func TestRunCancelledStoresNothing(t *testing.T) {
	r := newTestRuntime(t, "smart")
	writeWorkspaceFile(t, r, "notes.txt", "one\n")
	runServer(t, r,
		openAI(toolCall("call_1", "read_file", `{"path":"notes.txt"}`)),
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"partial"}})[:2], Hang: true},
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := r.Run(ctx, channel.TurnRequest{Text: "read my notes", OnText: func(string) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v; want context.Canceled", err)
	}
	stored, err := r.Store.Messages(context.Background(), "cli")
	if err != nil || len(stored) != 0 {
		t.Fatalf("stored %d messages, %v; a cancelled turn must store nothing", len(stored), err)
	}
}

func TestRunRedactsWhatItStores(t *testing.T) {
	r := newTestRuntime(t, "smart")
	const key = "sk-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	runServer(t, r, openAI(llmtest.Turn{Text: []string{"your key is " + key}}))
	if _, err := r.Run(context.Background(), channel.TurnRequest{Text: "my key is " + key}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	stored, err := r.Store.Messages(context.Background(), "cli")
	if err != nil || len(stored) != 2 {
		t.Fatalf("stored = %+v, %v", stored, err)
	}
	for _, m := range stored {
		if strings.Contains(m.Content, key) {
			t.Errorf("stored %s message holds the key: %q", m.Role, m.Content)
		}
	}
}

func TestRunRefusesAnotherOwnersSession(t *testing.T) {
	r := newTestRuntime(t, "smart")
	srv := runServer(t, r)
	if _, err := r.Call(context.Background(), CallRequest{Tool: "current_time", Args: `{}`, As: "guest", Session: "theirs"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), channel.TurnRequest{Text: "hi", Session: "theirs"}); err == nil {
		t.Fatal("Run in a guest's session succeeded; want an error")
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d model requests; want none", n)
	}
}

// TestRunResumesAfterApproval: a write waits; the owner approves it; in the
// next turn the model proposes exactly the same call and it runs once.
func TestRunResumesAfterApproval(t *testing.T) {
	r := newTestRuntime(t, "smart")
	write := `{"path":"todo.md","content":"- tea\n"}`
	runServer(t, r,
		openAI(toolCall("call_1", "write_file", write)),
		openAI(llmtest.Turn{Text: []string{"Waiting for your approval."}}),
		openAI(toolCall("call_2", "write_file", write)),
		openAI(llmtest.Turn{Text: []string{"Done."}}),
	)
	ctx := context.Background()
	res, err := r.Run(ctx, channel.TurnRequest{Text: "Add tea to my todo list", Session: "work"})
	if err != nil || len(res.Pending) != 1 {
		t.Fatalf("first Run = %+v, %v; want one pending approval", res, err)
	}
	if _, err := r.Owner.Approve(ctx, res.Pending[0], "once"); err != nil {
		t.Fatal(err)
	}
	res, err = r.Run(ctx, channel.TurnRequest{Text: "Approved, go ahead.", Session: "work"})
	if err != nil || len(res.Pending) != 0 || res.Text != "Done." {
		t.Fatalf("second Run = %+v, %v; want the approved write to run", res, err)
	}
	b, err := os.ReadFile(filepath.Join(r.Config.Workspace.Roots[0].Path, "todo.md"))
	if err != nil || string(b) != "- tea\n" {
		t.Fatalf("todo.md = %q, %v; want the approved content", b, err)
	}
}

// TestRunCancelStopsTheRunningTool: Ctrl+C while a command runs kills it
// (the sandboxed process gets the context's end), the turn returns
// context.Canceled, nothing of the turn is stored, and the audit trail
// records the call and how it ended.
func TestRunCancelStopsTheRunningTool(t *testing.T) {
	r := newTestRuntime(t, "yolo")
	if _, err := sandbox.Select(r.Config.Sandbox.Backend); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox backend works here, and CI must test one: %v", err)
		}
		t.Skipf("no sandbox backend works here: %v", err)
	}
	runServer(t, r,
		openAI(toolCall("call_1", "run_command", `{"program":"sleep","args":["120"]}`)),
		openAI(llmtest.Turn{Text: []string{"never reached"}}),
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	var once sync.Once
	seen := make(chan []int, 1)
	// Processes that were already there are not this test's (another test
	// binary on the machine may run the same command).
	before := sleepPIDs()
	go func() {
		<-started
		// Cancel once the command is seen running (or give up after 20 s).
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if pids := newPIDs(sleepPIDs(), before); len(pids) > 0 {
				seen <- pids
				cancel()
				return
			}
		}
		seen <- nil
		cancel()
	}()
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, channel.TurnRequest{Text: "wait a while", OnTool: func(ev channel.ToolEvent) {
			if ev.Status == channel.Proposed {
				once.Do(func() { close(started) })
			}
		}})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v; want context.Canceled", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Run still going 60 s after cancel: the 120 s command was not stopped")
	}
	mine := <-seen
	if len(mine) == 0 {
		t.Fatal("the command was never seen running")
	}
	// This test's process is gone (killed; a zombie waiting to be reaped
	// by whoever inherited it counts as gone), not left running. The
	// sandbox kills it through bwrap's PID namespace or the process group,
	// which a loaded machine may take a moment to finish.
	for deadline := time.Now().Add(30 * time.Second); len(alive(mine)) > 0; {
		if time.Now().After(deadline) {
			for _, pid := range alive(mine) {
				status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
				t.Logf("pid %d:\n%s", pid, status)
			}
			t.Fatalf("sleep 120 (pids %v) is still running 30 s after the turn was cancelled", alive(mine))
		}
		time.Sleep(50 * time.Millisecond)
	}
	stored, err := r.Store.Messages(context.Background(), "cli")
	if err != nil || len(stored) != 0 {
		t.Fatalf("stored %d messages, %v; a cancelled turn must store nothing", len(stored), err)
	}
	recs, err := r.Owner.AuditTail(context.Background(), 5)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, rec := range recs {
		if rec.Tool == "run_command" {
			found = true
			t.Logf("audit: %s %s %s", rec.Tool, rec.Decision, rec.Reason)
		}
	}
	if !found {
		t.Fatalf("audit %+v; want the cancelled run_command recorded", recs)
	}
}

// sleepPIDs returns the pids of the "sleep 120" processes on this host
// that have not exited (a zombie's cmdline reads empty).
func sleepPIDs() []int {
	var out []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		argv := strings.Split(string(b), "\x00")
		if len(argv) >= 2 && filepath.Base(argv[0]) == "sleep" && argv[1] == "120" {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// newPIDs returns the pids in now that are not in before.
func newPIDs(now, before []int) []int {
	var out []int
	for _, pid := range now {
		if !slices.Contains(before, pid) {
			out = append(out, pid)
		}
	}
	return out
}

// alive returns the pids that still run the command: not gone, not a
// zombie, and not reused by another program.
func alive(pids []int) []int {
	var out []int
	for _, pid := range pids {
		if slices.Contains(sleepPIDs(), pid) {
			out = append(out, pid)
		}
	}
	return out
}
