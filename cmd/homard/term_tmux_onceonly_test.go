package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/llm/llmtest"
)

// TestOnceOnlyCardInARealTerminal is issue 22's newcomer bug as typed: a
// command that runs code outside a graded sandbox (here the host backend)
// can only be approved once, so in `homard run`
// and in `homard chat` its card offers once and deny only; "s" is refused
// in place (never "approved for this session"), the card waits, and "d"
// answers it: the turn goes on and run exits 0. The twin, a write's card
// offering session, is TestRunCardCannotBeHiddenInARealTerminal and
// TestChatInARealTerminal.
func TestOnceOnlyCardInARealTerminal(t *testing.T) {
	needTmux(t, "homard run and chat")
	dir := t.TempDir()
	bin := buildHomard(t)
	find := func(id string) llmtest.Reply {
		return llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Calls: []llmtest.CallScript{{ID: id, Name: "run_command",
			Fragments: []string{`{"program":"find","args":[".","-maxdepth","0",`, `"-exec","true",";"]}`}}}})}
	}
	text := func(s string) llmtest.Reply {
		return llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{s}})}
	}
	srv := llmtest.NewServer(find("c1"), text("Not run here."), find("c2"), text("Not run in chat."))
	defer srv.Close()
	home := filepath.Join(dir, "home")
	useTestStore(t, home)
	if code := run([]string{"--home", home, "init", "--base-url", srv.URL + "/v1"}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatalf("init: exit %d", code)
	}
	captureOff(t, home)
	setBackend(t, home, "host") // ungraded: once only
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g status off\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &pane{t: t, socket: filepath.Join(dir, "tmux.sock"), conf: conf, env: append(os.Environ(),
		"HOMARD_HOME="+home, "OPENAI_API_KEY=sk-test-RUNKEY0123456789", "TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8")}
	t.Cleanup(func() { exec.Command("tmux", "-S", p.socket, "kill-server").Run() })
	start := func(name, cmd string) {
		p.target = name
		p.tmux("-u", "new-session", "-d", "-s", name, "-x", "100", "-y", "40", fmt.Sprintf("%s %s; echo EXITED $?; sleep 60", bin, cmd))
	}

	start("run", "run 'find things'")
	s := p.waitFor("approval needed: run_command", "approve [o]nce or [d]eny")
	if strings.Contains(s, "[s]ession") || strings.Contains(s, "would also let run unasked") {
		t.Errorf("run's once-only card offers a session:\n%s", s)
	}
	p.keys("s", "Enter")
	s = p.waitFor("this card can only be approved once or denied")
	if strings.Contains(s, "EXITED") || strings.Contains(s, "approved for this session") {
		t.Fatalf("the refused answer ended the turn or claimed a session:\n%s", s)
	}
	p.keys("d", "Enter")
	p.waitFor("Not run here.", "EXITED 0")

	start("chat", "chat")
	p.waitFor("Enter send")
	p.keys("find things", "Enter")
	s = p.waitFor("approval needed: run_command", "[o]nce · [d]eny · Esc leave pending")
	if strings.Contains(s, "[s]ession") {
		t.Errorf("chat's once-only card offers a session:\n%s", s)
	}
	p.keys("s")
	s = p.waitFor("This card can only be approved once (o) or denied (d).")
	if strings.Contains(s, "approved for this session") {
		t.Fatalf("chat claimed a session approval it did not record:\n%s", s)
	}
	p.keys("d")
	p.waitFor("denied", "Not run in chat.", "Enter send")
}
