package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/llm/llmtest"
)

func TestChatNeedsATerminal(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"--home", t.TempDir(), "chat"}, strings.NewReader("hi\n"), &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "chat needs a terminal") || !strings.Contains(errb.String(), "homard run") {
		t.Fatalf("chat without a terminal = exit %d, %q; want 2 and a pointer to homard run", code, errb.String())
	}
}

// pane is a real terminal: a tmux session of 80×24 running homard chat.
type pane struct {
	t      *testing.T
	socket string
	conf   string // no status line, and no user config: the pane is the whole 80×24
	env    []string
	target string // the tmux session showing homard chat now
}

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", p.socket, "-f", p.conf}, args...)...)
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is what the terminal shows now.
func (p *pane) screen() string { return p.tmux("capture-pane", "-p", "-t", p.target) }

// waitFor waits until the screen shows every one of want.
func (p *pane) waitFor(want ...string) string {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := p.screen()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			if os.Getenv("SHOW") != "" {
				p.t.Logf("screen:\n%s", s)
			}
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the terminal never showed %q; it shows:\n%s", want, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// keys types text literally, then sends the named keys (Enter, Escape…).
func (p *pane) keys(text string, named ...string) {
	if text != "" {
		p.tmux("send-keys", "-t", p.target, "-l", text)
	}
	if len(named) > 0 {
		p.tmux(append([]string{"send-keys", "-t", p.target}, named...)...)
	}
}

// TestChatInARealTerminal runs the built binary in tmux at 80×24, as a
// person would: a streamed answer, a write approved with o and one denied
// with d, CJK in and out, a model's escape sequences shown inert, /new,
// and a restart with --session that shows the earlier history. It fails
// (not skips) without tmux when CI is set.
func TestChatInARealTerminal(t *testing.T) {
	needTmux(t, "homard chat")
	dir := t.TempDir()
	bin := buildHomard(t)
	text := func(s ...string) llmtest.Reply {
		return llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: s})}
	}
	write := func(id, name string) llmtest.Reply {
		return llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Calls: []llmtest.CallScript{{ID: id, Name: "write_file", Fragments: []string{`{"path":"` + name + `",`, `"content":"- tea\n"}`}}}})}
	}
	cjk := strings.Repeat("这是一个很长的中文回答。", 12)
	srv := llmtest.NewServer(
		text("Hello ", "**there**."),
		write("c1", "todo.md"), text("Wrote todo.md."),
		write("c2", "no.md"), text("Not written."),
		text(cjk),
		text("copy \x1b]52;c;ZXZpbA==\x07 clear \x1b[2J done"),
		text("fresh answer"),
		text("resumed answer"),
	)
	defer srv.Close()
	home := filepath.Join(dir, "home")
	useTestStore(t, home)
	if code := run([]string{"--home", home, "init", "--base-url", srv.URL + "/v1"}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatalf("init: exit %d", code)
	}
	captureOff(t, home)
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g status off\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &pane{t: t, socket: filepath.Join(dir, "tmux.sock"), conf: conf, env: append(os.Environ(),
		"HOMARD_HOME="+home, "OPENAI_API_KEY=sk-test-CHATKEY0123456789", "TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8")}
	// Each start is a new tmux session on the same server (the old one
	// stays, so the server does not exit between them).
	start := func(name, args string) {
		p.target = name
		p.tmux("-u", "new-session", "-d", "-s", name, "-x", "80", "-y", "24",
			fmt.Sprintf("%s chat %s; echo EXITED $?; sleep 60", bin, args))
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", p.socket, "kill-server").Run() })
	start("first", "")
	if size := strings.TrimSpace(p.tmux("display-message", "-p", "-t", p.target, "#{pane_width}x#{pane_height}")); size != "80x24" {
		t.Fatalf("pane is %s; want 80x24", size)
	}
	p.waitFor("homard chat · chat", "Enter send")

	p.keys("hi", "Enter")
	s := p.waitFor("you› hi", "Hello there.", "Enter send")
	if strings.Contains(s, "**") {
		t.Errorf("raw Markdown on screen:\n%s", s)
	}

	ws := filepath.Join(home, "workspace")
	p.keys("add tea to todo.md", "Enter")
	p.waitFor("approval needed: write_file", "plan hash ", "[o]nce")
	if _, err := os.Stat(filepath.Join(ws, "todo.md")); err == nil {
		t.Fatal("todo.md written before the owner answered")
	}
	p.keys("o")
	p.waitFor("approved once", "Wrote todo.md.", "Enter send")
	if got, err := os.ReadFile(filepath.Join(ws, "todo.md")); err != nil || string(got) != "- tea\n" {
		t.Fatalf("todo.md = %q, %v; want it written after o", got, err)
	}

	p.keys("write no.md", "Enter")
	p.waitFor("no.md", "[o]nce")
	p.keys("d")
	p.waitFor("→ denied", "Not written.", "Enter send")
	if _, err := os.Stat(filepath.Join(ws, "no.md")); err == nil {
		t.Fatal("no.md written after d")
	}

	p.keys("请用中文回答", "Enter")
	s = p.waitFor("you› 请用中文回答", "这是一个很长的中文回答。这是", "Enter send")
	// The answer's lines, joined, are the whole answer: nothing was cut or
	// pushed off by a miscounted width.
	_, after, _ := strings.Cut(s, "you› 请用中文回答\n")
	block, _, _ := strings.Cut(after, "\n\n")
	block, _, _ = strings.Cut(block, "\n›")
	if got := strings.ReplaceAll(block, "\n", ""); got != cjk {
		t.Errorf("the CJK answer on screen is %q; want %q whole, wrapped at 80 columns", got, cjk)
	}
	lines := strings.Split(block, "\n")
	for _, l := range lines[:len(lines)-1] {
		if w := len([]rune(l)) * 2; w > 80 || w < 76 {
			t.Errorf("CJK line %q is %d cells; want it filled to 76–80 of 80", l, w)
		}
	}
	if !strings.Contains(s, "Enter send") || !strings.Contains(s, "homard chat · chat") {
		t.Errorf("header or footer scrolled off at 80×24:\n%s", s)
	}

	p.keys("show", "M-Enter")
	p.keys("me", "Enter")
	s = p.waitFor("you› show\n     me", `copy \x1b]52;c;ZXZpbA==\x07 clear \x1b[2J done`, "Enter send")
	if !strings.Contains(s, "homard chat · chat") {
		t.Errorf("the screen was cleared by the model's escape:\n%s", s)
	}

	p.keys("/new", "Enter")
	s = p.waitFor("New session chat-")
	fresh := s[strings.Index(s, "New session ")+len("New session "):]
	fresh = strings.TrimSuffix(strings.Fields(fresh)[0], ".")
	p.keys("again", "Enter")
	p.waitFor("fresh answer", "Enter send")
	p.keys("/exit", "Enter")
	s = p.waitFor("EXITED 0")
	if !strings.Contains(s, "resume with: homard chat --session "+fresh) {
		t.Errorf("on leaving, chat did not say how to resume %s:\n%s", fresh, s)
	}

	start("second", "--session "+fresh)
	s = p.waitFor("homard chat · "+fresh, "you› again", "fresh answer", "Resumed session "+fresh)
	if strings.Contains(s, "Hello there.") {
		t.Errorf("the resumed session shows another session's history:\n%s", s)
	}
	p.keys("more", "Enter")
	p.waitFor("resumed answer", "Enter send")
	p.keys("", "C-c")
	p.waitFor("EXITED 0")
}
