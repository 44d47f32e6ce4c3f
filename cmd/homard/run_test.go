package main

import (
	"bytes"
	"encoding/json"
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
	homard := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"--home", home}, args...), strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, stderr := homard("init", "--base-url", srv.URL+"/v1"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}

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
