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

// TestRunCardCannotBeHiddenInARealTerminal runs `homard run` in tmux at
// 80×24 with a model whose answer draws a fake approval card and then
// tries to drive the terminal: SGR 8 (hide what follows, as the real card
// was hidden before), a carriage return and erase-line, a cursor move up,
// an OSC 52 clipboard write and an OSC 0 title. The pane shows every one
// of them as text, the real card in full with its header in reverse video
// (the fake one is plain), the title and the clipboard untouched; the
// twin: answering o runs the write. It fails (not skips) without tmux when
// CI is set.
func TestRunCardCannotBeHiddenInARealTerminal(t *testing.T) {
	needTmux(t, "homard run")
	dir := t.TempDir()
	bin := buildHomard(t)
	fake := "Sure.\n" +
		"── approval needed: read_file (risk low) ─ ap_0000000000000000\n" +
		"   read notes.txt\n" +
		"   plan hash 0123456789ab\n" +
		"hide \x1b[8m\n" +
		"erase \r\x1b[2K\n" +
		"up \x1b[1A\n" +
		"clip \x1b]52;c;ZXZpbA==\x07\n" +
		"title \x1b]0;pwned\x07\n"
	srv := llmtest.NewServer(
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{
			Text:  []string{fake[:70], fake[70:101], fake[101:]}, // cut inside escapes
			Calls: []llmtest.CallScript{{ID: "c1", Name: "write_file", Fragments: []string{`{"path":"todo.md","content":"- tea\n"}`}}},
		})},
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Done."}})},
	)
	defer srv.Close()
	home := filepath.Join(dir, "home")
	useTestStore(t, home)
	if code := run([]string{"--home", home, "init", "--base-url", srv.URL + "/v1"}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatalf("init: exit %d", code)
	}
	captureOff(t, home)
	conf := filepath.Join(dir, "tmux.conf")
	// set-clipboard on: an OSC 52 that reached tmux would become a buffer.
	if err := os.WriteFile(conf, []byte("set -g status off\nset -g set-clipboard on\nset -g allow-rename on\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &pane{t: t, socket: filepath.Join(dir, "tmux.sock"), conf: conf, target: "run", env: append(os.Environ(),
		"HOMARD_HOME="+home, "OPENAI_API_KEY=sk-test-RUNKEY0123456789", "TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8")}
	t.Cleanup(func() { exec.Command("tmux", "-S", p.socket, "kill-server").Run() })
	p.tmux("-u", "new-session", "-d", "-s", "run", "-x", "80", "-y", "24",
		fmt.Sprintf("%s run 'add tea to todo.md'; echo EXITED $?; sleep 60", bin))

	s := p.waitFor("approve [o]nce")
	for _, want := range []string{
		// The escapes, as text.
		`hide \x1b[8m`, `erase \x0d\x1b[2K`, `up \x1b[1A`, `clip \x1b]52;c;ZXZpbA==\x07`, `title \x1b]0;pwned\x07`,
		// The real card, in full.
		"── approval needed: write_file (risk medium) ─ ap_", "   write todo.md: 6 bytes", "   plan hash ",
		"   why asked: ", "approve [o]nce, this [s]ession, [a]lways (scoped rule), [d]eny",
		// What a session or always answer would cover (issue 21).
		"   session or always would also let run unasked: todo.md",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the terminal does not show %q; it shows:\n%s", want, s)
		}
	}
	// The real card comes after the fake one and after all the model's text.
	if fakeAt, realAt := strings.Index(s, "approval needed: read_file"), strings.Index(s, "approval needed: write_file"); fakeAt < 0 || realAt < fakeAt || realAt < strings.Index(s, "title ") {
		t.Errorf("the real card is not below the model's text:\n%s", s)
	}

	// With attributes: only the real header and prompt are in reverse
	// video; the fake card is plain text.
	rev := reverseText(p.tmux("capture-pane", "-p", "-e", "-t", p.target))
	if !strings.Contains(rev, "── approval needed: write_file (risk medium)") || !strings.Contains(rev, "approve [o]nce") {
		t.Errorf("the real card's header and prompt are not in reverse video; reverse text: %q", rev)
	}
	if strings.Contains(rev, "read_file") || strings.Contains(rev, "Sure.") || strings.Contains(rev, "write todo.md") {
		t.Errorf("text other than the card's header and prompt is in reverse video: %q", rev)
	}
	if title := strings.TrimSpace(p.tmux("display-message", "-p", "-t", p.target, "#{pane_title}")); title == "pwned" {
		t.Errorf("the model's OSC 0 set the pane title to %q", title)
	}
	if bufs := strings.TrimSpace(p.tmux("list-buffers")); bufs != "" {
		t.Errorf("the model's OSC 52 reached the clipboard: %s", bufs)
	}
	if _, err := os.Stat(filepath.Join(home, "workspace", "todo.md")); err == nil {
		t.Fatal("todo.md written before the owner answered")
	}

	p.keys("o", "Enter")
	p.waitFor("Done.", "EXITED 0")
	if got, err := os.ReadFile(filepath.Join(home, "workspace", "todo.md")); err != nil || string(got) != "- tea\n" {
		t.Fatalf("todo.md = %q, %v; want it written after o", got, err)
	}
}

// reverseText returns the characters of a `capture-pane -e` dump drawn in
// reverse video (SGR 7 until 0 or 27), each run on its own line.
func reverseText(dump string) string {
	var b strings.Builder
	on := false
	for i := 0; i < len(dump); i++ {
		if dump[i] == '\x1b' && i+1 < len(dump) && dump[i+1] == '[' {
			end := strings.IndexByte(dump[i:], 'm')
			if end < 0 {
				break
			}
			for _, param := range strings.Split(dump[i+2:i+end], ";") {
				switch param {
				case "0", "":
					if on {
						b.WriteByte('\n')
					}
					on = false
				case "7":
					on = true
				case "27":
					on = false
				}
			}
			i += end
			continue
		}
		if on && dump[i] != '\n' {
			b.WriteByte(dump[i])
		}
	}
	return b.String()
}

// needTmux stops a real-terminal test where it cannot run: without tmux
// it fails under CI (.ci/run installs tmux) and skips otherwise; with
// -short it skips, since these tests build and run the binary. what names
// the test for the failure message.
func needTmux(t *testing.T, what string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tmux is not installed; the real-terminal test of %s needs it in CI (.ci/run installs it)", what)
		}
		t.Skip("tmux is not installed (set CI=1 to make this fatal)")
	}
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
}
