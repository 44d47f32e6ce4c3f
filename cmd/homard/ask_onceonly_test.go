package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/homard/homard/internal/llm/llmtest"
)

// TestRunOnceOnlyCardRefusesSessionInPlace is the newcomer's bug: a
// command that runs code (find -exec) can only be approved once, so its
// card offers once and deny only; "s" typed anyway is refused in place
// and asked again, and the turn goes on (here "d" denies it) instead of
// ending with an error and leaving the approval pending. The twin: a
// plain write's card offers and takes "s".
func TestRunOnceOnlyCardRefusesSessionInPlace(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-CLIKEY0123456789")
	call := func(name, args string) llmtest.Reply {
		return llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Calls: []llmtest.CallScript{{ID: "c1", Name: name, Fragments: []string{args}}}})}
	}
	answer := func(s string) llmtest.Reply {
		return llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{s}})}
	}
	srv := llmtest.NewServer(
		call("run_command", `{"program":"find","args":[".","-maxdepth","0","-exec","true",";"]}`), answer("Not run."),
		call("write_file", `{"path":"a.md","content":"- tea\n"}`), answer("Wrote a.md."),
	)
	defer srv.Close()
	home := t.TempDir()
	homard := func(stdin string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"--home", home}, args...), strings.NewReader(stdin), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, stderr := homard("", "init", "--base-url", srv.URL+"/v1"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	captureOff(t, home)
	const refusal = "this card can only be approved once or denied"

	code, out, stderr := homard("s\na\nd\n", "run", "--ask", "always", "find things")
	if code != exitOK || out != "Not run.\n" {
		t.Fatalf("run (s, a, d on a once-only card) = exit %d, stdout %q, stderr %q; want 0 and the answer", code, out, stderr)
	}
	if !strings.Contains(stderr, "approval needed: run_command") {
		t.Fatalf("no run_command card on stderr %q", stderr)
	}
	if strings.Contains(stderr, "[s]ession") || strings.Contains(stderr, "[a]lways") {
		t.Errorf("a once-only card offers session or always: %q", stderr)
	}
	if !strings.Contains(stderr, "approve [o]nce or [d]eny") {
		t.Errorf("the once-only card's prompt is not once or deny: %q", stderr)
	}
	if n := strings.Count(stderr, refusal); n != 2 {
		t.Errorf("stderr %q refuses %d answers with %q; want 2 (s and a)", stderr, n, refusal)
	}
	code, out, stderr = homard("", "approval", "list", "--all")
	if code != 0 || !regexp.MustCompile(`(?m)^ap_\w+ +denied +run_command `).MatchString(out) {
		t.Errorf("approval list --all = exit %d, %q, %q; want the run_command approval denied", code, out, stderr)
	}

	// The twin: an ordinary medium card offers session, and takes it.
	code, out, stderr = homard("s\n", "run", "--ask", "always", "write a.md")
	if code != exitOK || out != "Wrote a.md.\n" {
		t.Fatalf("run (s on a write) = exit %d, stdout %q, stderr %q; want 0 and the answer", code, out, stderr)
	}
	if !strings.Contains(stderr, "this [s]ession") || strings.Contains(stderr, refusal) {
		t.Errorf("the write's card did not offer and take session: %q", stderr)
	}
	if got, err := os.ReadFile(filepath.Join(home, "workspace", "a.md")); err != nil || string(got) != "- tea\n" {
		t.Fatalf("a.md = %q, %v; want it written after approving for the session", got, err)
	}
}
