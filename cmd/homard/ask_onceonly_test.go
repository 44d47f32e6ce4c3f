package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/sandbox"
)

// TestRunOnceOnlyCardRefusesSessionInPlace is the newcomer's bug: a
// command that runs code (find -exec) outside a graded sandbox (here the
// host backend) can only be approved once, so its card offers once and
// deny only; "s" typed anyway is refused in place and asked again, and
// the turn goes on (here "d" denies it) instead of ending with an error
// and leaving the approval pending. The twins: a plain write's card offers
// and takes "s"; TestRunCodeCardOffersSessionNotAlways, the same command
// run graded.
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
	setBackend(t, home, "host") // ungraded: once only
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

// TestRunCodeCardOffersSessionNotAlways: the same command that runs code,
// run graded (the sandbox's overlay, no network, its changes checked),
// may be approved for the session but not always: the card says what a
// session answer covers and what is still held, offers once, session and
// deny; "a" typed anyway is refused in place, and "s" is taken.
func TestRunCodeCardOffersSessionNotAlways(t *testing.T) {
	if _, err := sandbox.Select("auto"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox backend works here, and CI must test one: %v", err)
		}
		t.Skipf("no sandbox backend works here: %v", err)
	}
	t.Setenv("OPENAI_API_KEY", "sk-test-CLIKEY0123456789")
	srv := llmtest.NewServer(
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Calls: []llmtest.CallScript{{ID: "c1", Name: "run_command",
			Fragments: []string{`{"program":"find","args":[".","-maxdepth","0","-exec","true",";"]}`}}}})},
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Ran."}})},
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
	code, out, stderr := homard("a\ns\n", "run", "--ask", "always", "find things")
	if code != exitOK || out != "Ran.\n" {
		t.Fatalf("run (a, s on a graded code card) = exit %d, stdout %q, stderr %q; want 0 and the answer", code, out, stderr)
	}
	if !strings.Contains(stderr, "approve [o]nce, this [s]ession, [d]eny") || strings.Contains(stderr, "[a]lways") {
		t.Errorf("the graded code card's prompt is not once, session or deny: %q", stderr)
	}
	if !strings.Contains(stderr, "a session approval covers: find . -maxdepth 0 -exec true ;") || !strings.Contains(stderr, "held for you") {
		t.Errorf("the card does not say what a session answer covers and what is still held: %q", stderr)
	}
	if n := strings.Count(stderr, noAlwaysRefusal); n != 1 {
		t.Errorf("stderr %q refuses %d answers with %q; want 1 (a)", stderr, n, noAlwaysRefusal)
	}
	code, out, stderr = homard("", "approval", "grants")
	if code != 0 || !strings.Contains(out, "session") || !strings.Contains(out, "find") {
		t.Errorf("approval grants = exit %d, %q, %q; want the session grant of find", code, out, stderr)
	}
}

// setBackend sets sandbox.backend in home's config.toml.
func setBackend(t *testing.T, home, name string) {
	t.Helper()
	p := filepath.Join(home, "config.toml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^backend = "[a-z]+"$`)
	if !re.Match(b) {
		t.Fatal("config.toml has no sandbox backend line")
	}
	if err := os.WriteFile(p, re.ReplaceAll(b, []byte(`backend = "`+name+`"`)), 0o600); err != nil {
		t.Fatal(err)
	}
}
