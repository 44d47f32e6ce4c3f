package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/llm/llmtest"
)

// TestRunCommand runs `homard run` as a user types it, against a fake
// OpenAI endpoint: a streamed answer exits 0; a proposed write lists the
// approval and exits 3; --json prints one object.
func TestRunCommand(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-CLIKEY0123456789")
	write := llmtest.Turn{Calls: []llmtest.CallScript{{ID: "c1", Name: "write_file", Fragments: []string{`{"path":"todo.md",`, `"content":"- tea\n"}`}}}}
	srv := llmtest.NewServer(
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Hello ", "there."}})},
		llmtest.Reply{Chunks: llmtest.OpenAIStream(write)},
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"It waits for you."}})},
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Done."}})},
	)
	defer srv.Close()
	home := t.TempDir()
	useTestStore(t, home)
	homard := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"--home", home}, args...), strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, stderr := homard("init", "--base-url", srv.URL+"/v1"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	captureOff(t, home)

	code, out, stderr := homard("run", "say hello")
	if code != exitOK || out != "Hello there.\n" {
		t.Fatalf("run = exit %d, stdout %q, stderr %q; want 0 and the answer", code, out, stderr)
	}

	code, out, _ = homard("run", "add tea to todo.md")
	if code != exitPending || !strings.HasPrefix(out, "It waits for you.\nwaiting for approval: ap_") ||
		!strings.Contains(out, "homard approval approve ap_") {
		t.Fatalf("run = exit %d, stdout %q; want 3 and the pending approval after the answer", code, out)
	}
	if _, err := os.Stat(filepath.Join(home, "workspace", "todo.md")); err == nil {
		t.Fatal("todo.md was written before approval")
	}

	code, out, _ = homard("run", "finish", "--json")
	var got runOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitOK || got.Text != "Done." || got.Pending == nil {
		t.Fatalf("run --json = exit %d, %q (%v); want one object with text Done. and pending []", code, out, err)
	}
}

// TestRunAsksInline answers approval cards as a person at a terminal would
// (--ask always reads them from stdin): "o" runs the write in the same
// turn, "d" refuses it, an empty line leaves it pending, and an unknown
// answer is asked again.
func TestRunAsksInline(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-CLIKEY0123456789")
	write := func(name string) llmtest.Reply {
		return llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Calls: []llmtest.CallScript{{ID: "c1", Name: "write_file", Fragments: []string{`{"path":"` + name + `","content":"- tea\n"}`}}}})}
	}
	answer := func(s string) llmtest.Reply {
		return llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{s}})}
	}
	srv := llmtest.NewServer(
		write("a.md"), answer("Wrote a.md."),
		write("b.md"), answer("Not written."),
		write("c.md"), answer("Waiting."),
	)
	defer srv.Close()
	home := t.TempDir()
	useTestStore(t, home)
	homard := func(stdin string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"--home", home}, args...), strings.NewReader(stdin), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, stderr := homard("", "init", "--base-url", srv.URL+"/v1"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	captureOff(t, home)
	ws := filepath.Join(home, "workspace")

	code, out, stderr := homard("maybe\no\n", "run", "--ask", "always", "write a.md")
	if code != exitOK || out != "Wrote a.md.\n" {
		t.Fatalf("run (o) = exit %d, stdout %q, stderr %q; want 0 and the answer", code, out, stderr)
	}
	// The card shows the content it writes, as a diff against nothing.
	for _, want := range []string{"approval needed: write_file (risk", "a.md", "plan hash ", `"maybe" is not an answer here.`,
		"   ─ what it does ─\n   --- /dev/null\n   +++ a.md\n   @@ -0,0 +1 @@\n   +- tea\n"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("card on stderr %q lacks %q", stderr, want)
		}
	}
	if got, err := os.ReadFile(filepath.Join(ws, "a.md")); err != nil || string(got) != "- tea\n" {
		t.Fatalf("a.md = %q, %v; want it written after approving once", got, err)
	}

	code, out, _ = homard("d\n", "run", "--ask", "always", "write b.md")
	if code != exitOK || out != "Not written.\n" {
		t.Fatalf("run (d) = exit %d, stdout %q; want 0", code, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "b.md")); err == nil {
		t.Fatal("b.md written after a denial")
	}

	code, out, _ = homard("\n", "run", "--ask", "always", "write c.md")
	if code != exitPending || !strings.Contains(out, "waiting for approval: ap_") {
		t.Fatalf("run (Enter) = exit %d, stdout %q; want 3 and the pending id", code, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "c.md")); err == nil {
		t.Fatal("c.md written while pending")
	}
	if code, _, stderr := homard("", "run", "--ask", "sometimes", "x"); code != exitUsage || !strings.Contains(stderr, "want auto, always or never") {
		t.Fatalf("--ask sometimes = exit %d, %q; want a usage error", code, stderr)
	}
}

// captureOff turns memory capture off in home's config: these tests script
// every model reply, and capture would ask for one more after each turn.
func captureOff(t *testing.T, home string) {
	t.Helper()
	p := filepath.Join(home, "config.toml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "capture = \"on\"", "capture = \"off\"", 1)
	if s == string(b) {
		t.Fatal("config.toml has no capture = \"on\"")
	}
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRunShowsToolCalls: `homard run` prints a line per tool call on
// stderr when it is proposed and one as it is settled — tool, plan,
// decision, status and time taken — with a marker between model steps, and
// --json lists the same calls.
func TestRunShowsToolCalls(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-CLIKEY0123456789")
	call := func(id, name, args string) llmtest.Reply {
		return llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Calls: []llmtest.CallScript{{ID: id, Name: name, Fragments: []string{args}}}})}
	}
	answer := func(s string) llmtest.Reply {
		return llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{s}})}
	}
	srv := llmtest.NewServer(
		call("c1", "read_file", `{"path":"notes.txt"}`), call("c2", "write_file", `{"path":"a.md","content":"- tea\n"}`), answer("Done."),
		call("c1", "read_file", `{"path":"notes.txt"}`), call("c2", "write_file", `{"path":"b.md","content":"- tea\n"}`), answer("Waiting."),
	)
	defer srv.Close()
	home := t.TempDir()
	useTestStore(t, home)
	homard := func(stdin string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"--home", home}, args...), strings.NewReader(stdin), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, stderr := homard("", "init", "--base-url", srv.URL+"/v1"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	captureOff(t, home)
	if err := os.WriteFile(filepath.Join(home, "workspace", "notes.txt"), []byte("tea\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, stderr := homard("o\n", "run", "--ask", "always", "copy my notes")
	if code != exitOK || out != "Done.\n" {
		t.Fatalf("run = exit %d, stdout %q, stderr %q; want 0 and the answer", code, out, stderr)
	}
	rest := stderr
	for _, want := range []string{
		"homard: tool read_file starts: {\"path\":\"notes.txt\"}\n",
		"homard: tool read_file: read ", "notes.txt", " — allowed by ", " → ran (", "s)\n",
		"homard: — step 2 —\n",
		"homard: tool write_file starts: ",
		"approval needed: write_file", // the card, then the call's line
		"write a.md",
		"homard: tool write_file: ", "a.md", " — asked → approved → ran (", "s)\n",
	} {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("stderr lacks %q in order:\n%s", want, stderr)
		}
		rest = rest[i+len(want):]
	}

	code, out, _ = homard("", "run", "--ask", "never", "--json", "copy again")
	var got runOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitPending {
		t.Fatalf("run --json = exit %d, %q (%v); want 3 and one object", code, out, err)
	}
	if len(got.Tools) != 2 {
		t.Fatalf("tools = %+v; want the two calls", got.Tools)
	}
	read, write := got.Tools[0], got.Tools[1]
	if read.Name != "read_file" || read.Decision != "allowed" || read.Status != "ran" || read.Rule == "" || !strings.Contains(read.Plan, "notes.txt") || read.Step != 1 {
		t.Errorf("tools[0] = %+v; want read_file allowed by a rule, ran, in step 1", read)
	}
	if write.Name != "write_file" || write.Decision != "pending" || write.Status != "pending" || len(got.Pending) != 1 ||
		write.ApprovalID != got.Pending[0] || !strings.Contains(write.Plan, "b.md") || write.Step != 2 {
		t.Errorf("tools[1] = %+v (pending %v); want write_file pending with the approval id, in step 2", write, got.Pending)
	}
}

// TestRunCapturesInBatches: a one-shot `homard run` (no serve) is one
// model request for a turn without tools; memory capture comes in one call
// per memory.capture_every turns (4), made by the run that fills the
// batch, and covers all four. The twin: the fourth run makes the capture
// call, and its note waits for review.
func TestRunCapturesInBatches(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-CLIKEY0123456789")
	hello := llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Hello."}})}
	srv := llmtest.NewServer(hello, hello, hello, hello,
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{`{"text":"Keeps bees","kind":"fact"}`}})},
	)
	defer srv.Close()
	home := t.TempDir()
	useTestStore(t, home)
	homard := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"--home", home}, args...), strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, stderr := homard("init", "--base-url", srv.URL+"/v1"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	for i := 1; i <= 4; i++ {
		if code, out, stderr := homard("run", fmt.Sprintf("I keep bees (%d)", i)); code != exitOK || out != "Hello.\n" {
			t.Fatalf("run %d = exit %d, stdout %q, stderr %q; want 0 and the answer", i, code, out, stderr)
		}
		reqs := srv.Requests()
		if i < 4 && len(reqs) != i {
			t.Fatalf("after run %d: %d model requests; want %d, one a run (no capture call yet)", i, len(reqs), i)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("after 4 runs: %d model requests; want 5, the last the capture call", len(reqs))
	}
	capture := string(reqs[4].Body)
	for i := 1; i <= 4; i++ {
		if !strings.Contains(capture, fmt.Sprintf("I keep bees (%d)", i)) || !strings.Contains(capture, "[BEGIN_EXCHANGE]") {
			t.Errorf("the capture call does not cover turn %d: %.300s", i, capture)
		}
	}
	if code, out, _ := homard("memory", "review"); code != exitOK || !strings.Contains(out, "Keeps bees") {
		t.Fatalf("memory review = exit %d, %q; want the proposed note waiting", code, out)
	}
}
