package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/llm/llmtest"
)

// TestSetupWizardInARealTerminal drives `homard setup` in tmux at 80×24
// as a person would: picks the OpenAI-compatible provider, points it at a
// fake server, names the model, types the key (never shown: the pane and
// its history are checked while typing and at the end), keeps the mode and
// workspace, and sees the provider test pass. Then `homard run "hi"`, with
// no key in the environment, answers from the fake with the key from the
// vault. It fails (not skips) without tmux when CI is set.
func TestSetupWizardInARealTerminal(t *testing.T) {
	needTmux(t, "homard setup")
	const key = "sk-test-WIZARDKEY-0123456789abcdef"
	dir := t.TempDir()
	bin := buildHomard(t)
	srv := llmtest.NewServer(
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"OK"}})},
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Hello from the fake."}})},
	)
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	noOllama := dead.URL // nothing listens there once closed
	dead.Close()

	home := filepath.Join(dir, "home")
	useTestStore(t, home) // the child homard inherits it
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g status off\nset -g history-limit 5000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasSuffix(strings.SplitN(kv, "=", 2)[0], "_API_KEY") {
			env = append(env, kv)
		}
	}
	p := &pane{t: t, socket: filepath.Join(dir, "tmux.sock"), conf: conf, target: "setup", env: append(env,
		"HOMARD_HOME="+home, "TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8")}
	t.Cleanup(func() { exec.Command("tmux", "-S", p.socket, "kill-server").Run() })
	p.tmux("-u", "new-session", "-d", "-s", "setup", "-x", "80", "-y", "24",
		// After setup the pane waits for Enter, then runs a turn.
		fmt.Sprintf("%s setup --ollama-url %s; echo EXITED $?; read go; clear; %s run hi; echo RUN-EXITED $?; sleep 60", bin, noOllama, bin))
	keyHidden := func(when string) {
		t.Helper()
		if all := p.tmux("capture-pane", "-p", "-S", "-", "-t", p.target); strings.Contains(all, key) || strings.Contains(all, key[8:20]) {
			t.Fatalf("%s, the terminal shows the key:\n%s", when, all)
		}
	}

	p.waitFor("Which model provider?", "Ollama (local) — not running here")
	p.keys("", "Enter") // the first: OpenAI or any OpenAI-compatible server
	p.waitFor("Base URL of the API", "https://api.openai.com/v1")
	p.keys("", "C-u")
	p.keys(srv.URL+"/v1", "Enter")
	p.waitFor("Which model?", "gpt-4o-mini")
	p.keys("", "C-u")
	p.keys("gpt-test", "Enter")
	p.waitFor("API key for OpenAI", "never in config.toml")
	p.keys(key)
	p.waitFor(strings.Repeat("*", len(key)))
	keyHidden("while typing")
	p.keys("", "Enter")
	p.waitFor("How much should homard ask before acting?", "smart")
	p.keys("", "Enter")
	p.waitFor("Which folders may homard's tools use?")
	p.keys("", "Enter")
	ref := t.TempDir() // a folder to read, never change
	p.waitFor("Folders homard may read but never change?")
	p.keys(ref, "Enter")
	s := p.waitFor("EXITED 0")
	for _, want := range []string{"provider   openai", "key        typed (not shown)", "ok in ", "created " + home, "key       vault secret model-openai", "mode      smart"} {
		if !strings.Contains(s, want) {
			t.Errorf("after setup the terminal does not show %q; it shows:\n%s", want, s)
		}
	}
	keyHidden("after setup")
	if b, err := os.ReadFile(filepath.Join(home, "config.toml")); err != nil || strings.Contains(string(b), key) ||
		!strings.Contains(string(b), `api_key_secret = "model-openai"`) {
		t.Fatalf("config.toml (%v) holds the key or lacks api_key_secret:\n%s", err, b)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "config.toml")); !strings.Contains(string(b), `path = "`+ref+`", access = "ro"`) {
		t.Errorf("config.toml lacks the read-only root %s:\n%s", ref, b)
	}
	captureOff(t, home)

	p.keys("", "Enter")
	p.waitFor("Hello from the fake.", "RUN-EXITED 0")
	keyHidden("after the run")
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].Header.Get("Authorization") != "Bearer "+key {
		t.Errorf("the fake got %d requests, the turn's with Authorization set to the key: %v", len(reqs), len(reqs) == 2 && reqs[1].Header.Get("Authorization") != "")
	}
}

// TestSetupWizardFindsOllama: with a (fake) Ollama answering /api/tags,
// the wizard offers it first, lists its pulled models as the model
// question's choices, asks no key, and the turn after setup runs on the
// chosen model. Ctrl+C at the first question ends setup with nothing
// written. It fails (not skips) without tmux when CI is set.
func TestSetupWizardFindsOllama(t *testing.T) {
	needTmux(t, "homard setup")
	dir := t.TempDir()
	bin := buildHomard(t)
	chat := llmtest.NewServer(
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"OK"}})},
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Hello from llama."}})},
	)
	defer chat.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"models":[{"name":"qwen3:8b"},{"name":"llama3.2:3b"}]}`))
	})
	mux.Handle("/v1/", chat.Config.Handler)
	ollama := httptest.NewServer(mux)
	defer ollama.Close()

	home := filepath.Join(dir, "home")
	useTestStore(t, home) // the child homard inherits it
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g status off\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &pane{t: t, socket: filepath.Join(dir, "tmux.sock"), conf: conf, target: "cancel", env: append(os.Environ(),
		"HOMARD_HOME="+home, "TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8")}
	t.Cleanup(func() { exec.Command("tmux", "-S", p.socket, "kill-server").Run() })

	// Ctrl+C: nothing written.
	p.tmux("-u", "new-session", "-d", "-s", "cancel", "-x", "80", "-y", "24",
		fmt.Sprintf("%s setup --ollama-url %s; echo EXITED $?; sleep 60", bin, ollama.URL))
	p.waitFor("Which model provider?")
	p.keys("", "C-c")
	p.waitFor("setup cancelled; nothing was written", "EXITED 1")
	if _, err := os.Stat(home); err == nil {
		t.Fatal("setup cancelled with Ctrl+C but created the home")
	}

	p.target = "ollama"
	p.tmux("-u", "new-session", "-d", "-s", "ollama", "-x", "80", "-y", "24",
		fmt.Sprintf("%s setup --ollama-url %s; echo EXITED $?; read go; clear; %s run hi; echo RUN-EXITED $?; sleep 60", bin, ollama.URL, bin))
	s := p.waitFor("Which model provider?", "Ollama (local) — running, 2 model(s)")
	if !strings.Contains(s, "> Ollama (local)") {
		t.Errorf("the wizard does not preselect the Ollama it found:\n%s", s)
	}
	p.keys("", "Enter")
	p.waitFor("Base URL of the API", ollama.URL+"/v1")
	p.keys("", "Enter")
	p.waitFor("Which model? (pulled in Ollama)", "llama3.2:3b", "qwen3:8b")
	p.keys("", "Down", "Enter") // sorted: llama3.2:3b, then qwen3:8b
	s = p.waitFor("How much should homard ask before acting?")
	if strings.Contains(s, "API key") {
		t.Errorf("the wizard asked for a key for a local server:\n%s", s)
	}
	p.keys("", "Enter")
	p.waitFor("Which folders may homard's tools use?")
	p.keys("", "Enter")
	p.waitFor("Folders homard may read but never change?")
	p.keys("", "Enter") // none
	s = p.waitFor("EXITED 0")
	for _, want := range []string{"model      qwen3:8b", "ok in ", "key       no key (local server)"} {
		if !strings.Contains(s, want) {
			t.Errorf("after setup the terminal does not show %q; it shows:\n%s", want, s)
		}
	}
	captureOff(t, home)
	p.keys("", "Enter")
	p.waitFor("Hello from llama.", "RUN-EXITED 0")
	if reqs := chat.Requests(); len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), `"model":"qwen3:8b"`) {
		t.Errorf("the fake Ollama got %d chat requests; want 2, the turn's for qwen3:8b", len(reqs))
	}
}
