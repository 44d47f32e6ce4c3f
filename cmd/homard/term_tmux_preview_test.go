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

// TestCardShowsTheWriteInARealTerminal runs `homard run` and `homard chat`
// in tmux, each with a model that writes a file whose content holds
// escape sequences (clear the screen, turn text red, set the title). Both
// cards show the content as a diff against the file on disk — the old
// line removed, the new ones added, green on the inline card — and the
// escapes as inert text: the screen is not cleared, no content is red,
// the title is untouched. The twin: answering o writes exactly that
// content. It fails (not skips) without tmux when CI is set.
func TestCardShowsTheWriteInARealTerminal(t *testing.T) {
	needTmux(t, "approval cards")
	dir := t.TempDir()
	bin := buildHomard(t)
	const content = "line one\n\x1b[2J\x1b[31mred\x1b]0;pwned\x07\n"
	const args = `{"path":"todo.md","content":"line one\n\u001b[2J\u001b[31mred\u001b]0;pwned\u0007\n"}`
	write := llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{
		Text:  []string{"Writing."},
		Calls: []llmtest.CallScript{{ID: "c1", Name: "write_file", Fragments: []string{args}}},
	})}
	srv := llmtest.NewServer(
		write, llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Done."}})},
		write, llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Done again."}})},
	)
	defer srv.Close()
	home := filepath.Join(dir, "home")
	useTestStore(t, home)
	if code := run([]string{"--home", home, "init", "--base-url", srv.URL + "/v1"}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatalf("init: exit %d", code)
	}
	captureOff(t, home)
	todo := filepath.Join(home, "workspace", "todo.md")
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g status off\nset -g allow-rename on\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &pane{t: t, socket: filepath.Join(dir, "tmux.sock"), conf: conf, env: append(os.Environ(),
		"HOMARD_HOME="+home, "OPENAI_API_KEY=sk-test-PREVIEWKEY0123456", "TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8")}
	t.Cleanup(func() { exec.Command("tmux", "-S", p.socket, "kill-server").Run() })
	inert := `+\x1b[2J\x1b[31mred\x1b]0;pwned\x07`

	for _, tc := range []struct {
		name, cmd, old string
		want           []string
		green          bool // the inline card colours added lines green
	}{
		{"run", "run 'add a line'", "", []string{"── approval needed: write_file", "─ what it does ─", "--- /dev/null", "+++ todo.md",
			"@@ -0,0 +1,2 @@", "+line one", inert, "approve [o]nce"}, true},
		{"chat", "chat", "line zero\n", []string{"approval needed: write_file", "─ what it does ─", "--- todo.md", "+++ todo.md",
			"-line zero", "+line one", inert, "[o]nce"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.t = t
			os.Remove(todo)
			if tc.old != "" {
				if err := os.WriteFile(todo, []byte(tc.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p.target = tc.name
			p.tmux("-u", "new-session", "-d", "-s", tc.name, "-x", "80", "-y", "30",
				fmt.Sprintf("%s %s; echo EXITED $?; sleep 60", bin, tc.cmd))
			if tc.name == "chat" {
				p.waitFor("Enter send")
				p.keys("add a line", "Enter")
			}
			s := p.waitFor(tc.want...)
			if !strings.Contains(s, "Writing.") {
				t.Errorf("the model's text before the card is gone (was the screen cleared?):\n%s", s)
			}
			dump := p.tmux("capture-pane", "-p", "-e", "-t", p.target)
			if tc.green && !strings.Contains(dump, "\x1b[32m+line one") {
				t.Errorf("the added line is not green on the inline card:\n%q", dump)
			}
			if strings.Contains(dump, "\x1b[31mred") {
				t.Errorf("the content's SGR 31 reached the terminal:\n%q", dump)
			}
			if title := p.tmux("display-message", "-p", "-t", p.target, "#{pane_title}"); strings.Contains(title, "pwned") {
				t.Errorf("the content set the pane title to %q", strings.TrimSpace(title))
			}
			if _, err := os.Stat(todo); tc.old == "" && err == nil {
				t.Fatal("todo.md written before the owner answered")
			}
			p.keys("o")
			if tc.name == "run" {
				p.keys("", "Enter")
				p.waitFor("Done.", "EXITED 0")
			} else {
				p.waitFor("Done", "Enter send") // "Done." or "Done again.": the replies are in order
				p.keys("", "C-c")
				p.waitFor("EXITED 0")
			}
			if got, err := os.ReadFile(todo); err != nil || string(got) != content {
				t.Fatalf("todo.md = %q, %v; want the approved content %q", got, err, content)
			}
		})
	}
}
