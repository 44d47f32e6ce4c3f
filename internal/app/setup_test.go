package app

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/setup"
	"github.com/homard/homard/internal/store/storetest"
)

const setupKeyText = "sk-test-SETUPKEY-0123456789abcdef"

// setupPaths is a home that does not exist yet.
func setupPaths(t *testing.T) config.Paths {
	t.Helper()
	p, err := config.ResolvePaths(filepath.Join(t.TempDir(), "home"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// noEnv is an environment with no variable set, so no test depends on the
// machine's OPENAI_API_KEY.
func noEnv(string) string { return "" }

// filesHolding lists the files under dir whose bytes contain text.
func filesHolding(t *testing.T, dir, text string) []string {
	t.Helper()
	var hits []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), text) {
			hits = append(hits, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// TestSetupNonInteractiveThenATurn: setup against a fake OpenAI-compatible
// server creates the home, keeps the key only in the (encrypted) vault,
// and the next turn answers with that key.
func TestSetupNonInteractiveThenATurn(t *testing.T) {
	paths := setupPaths(t)
	srv := llmtest.NewServer(
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"OK"}})},
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Hello from the fake."}})},
	)
	defer srv.Close()
	res, err := setup.Run(context.Background(), paths, setup.Options{
		Provider: "openai", BaseURL: srv.URL + "/v1", Model: "gpt-test", APIKey: setupKeyText,
		Mode: "safe", Getenv: noEnv,
	})
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	if !res.Created || res.Test == nil || res.Test.Reply != "OK" || res.KeyFrom != "vault secret model-openai" {
		t.Errorf("Setup result = created %v, test %+v, key from %q; want created, tested (reply OK), key in vault secret model-openai", res.Created, res.Test, res.KeyFrom)
	}
	conf, err := os.ReadFile(paths.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`provider = "openai"`, `name = "gpt-test"`, `api_key_secret = "model-openai"`, `mode = "safe"`, "# Or keep the key in homard's encrypted vault"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("config.toml lacks %q:\n%s", want, conf)
		}
	}
	if fi, err := os.Stat(paths.ConfigFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config.toml mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	// The key is in no file of the home, the vault included (encrypted).
	if hits := filesHolding(t, filepath.Dir(paths.ConfigFile), setupKeyText); len(hits) > 0 {
		t.Errorf("the key's text is in %v; want it only encrypted in the vault", hits)
	}

	r, err := Open(context.Background(), paths, Options{})
	if err != nil {
		t.Fatalf("Open after setup: %v", err)
	}
	defer r.Close()
	r.Config.Memory.Capture = "off"
	out, err := r.Run(context.Background(), channel.TurnRequest{Text: "hi"})
	if err != nil || out.Text != "Hello from the fake." {
		t.Fatalf("Run after setup = %q, %v; want the fake's answer", out.Text, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the fake got %d requests; want the provider test and the turn", len(reqs))
	}
	for i, rq := range reqs {
		if got := rq.Header.Get("Authorization"); got != "Bearer "+setupKeyText {
			t.Errorf("request %d carried Authorization %q; want the key from the vault", i, got)
		}
	}
}

// TestSetupFailedTestWritesNothing: a provider test that fails says
// exactly why, and leaves no home, no vault and no changed config behind.
func TestSetupFailedTestWritesNothing(t *testing.T) {
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close() // nothing listens there any more
	tests := []struct {
		name  string
		reply llmtest.Reply
		o     setup.Options
		want  []string
	}{
		{"key rejected", llmtest.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: sk-te***"}}`},
			setup.Options{Provider: "openai", Model: "gpt-test", APIKey: setupKeyText},
			[]string{"provider test failed: key rejected by 127.0.0.1:", "(HTTP 401: Incorrect API key provided", "nothing was written"}},
		{"model not found", llmtest.Reply{Status: 404, Body: `{"error":{"message":"The model 'gpt-nope' does not exist"}}`},
			setup.Options{Provider: "openai", Model: "gpt-nope", APIKey: setupKeyText},
			[]string{`model not found: 127.0.0.1:`, `does not serve "gpt-nope" (HTTP 404: The model 'gpt-nope' does not exist)`}},
		{"ollama not running", llmtest.Reply{},
			setup.Options{Provider: "ollama", Model: "qwen3:8b", BaseURL: refusedURL + "/v1"},
			[]string{"cannot connect to " + strings.TrimPrefix(refusedURL, "http://") + ": is ollama running?"}},
		{"no key at all", llmtest.Reply{},
			setup.Options{Provider: "deepseek"},
			[]string{"DEEPSEEK_API_KEY not set: type the key when homard setup asks, pass it with --api-key-stdin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(tt.reply, tt.reply) // new home, then existing
			defer srv.Close()
			o := tt.o
			if o.BaseURL == "" && o.Provider == "openai" {
				o.BaseURL = srv.URL + "/v1"
			}
			o.Getenv = noEnv
			for _, existing := range []bool{false, true} {
				paths := setupPaths(t)
				var before []byte
				if existing {
					if _, err := Init(context.Background(), paths, config.InitOptions{StoreURL: storetest.URL(t)}); err != nil {
						t.Fatal(err)
					}
					before, _ = os.ReadFile(paths.ConfigFile)
				}
				_, err := setup.Run(context.Background(), paths, o)
				if !errors.Is(err, setup.ErrTest) {
					t.Fatalf("setup.Run(%s, existing home %v) = %v; want setup.ErrTest", tt.name, existing, err)
				}
				for _, w := range tt.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("setup.Run(%s) error = %q; want it to contain %q", tt.name, err, w)
					}
				}
				if strings.Contains(err.Error(), setupKeyText) {
					t.Errorf("setup.Run(%s) error shows the key: %q", tt.name, err)
				}
				if !existing {
					if _, err := os.Stat(filepath.Dir(paths.ConfigFile)); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("setup.Run(%s) failed but created the home (stat: %v)", tt.name, err)
					}
					continue
				}
				after, _ := os.ReadFile(paths.ConfigFile)
				if string(after) != string(before) {
					t.Errorf("setup.Run(%s) failed but changed config.toml", tt.name)
				}
				if _, err := os.Stat(paths.VaultFile()); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("setup.Run(%s) failed but wrote the vault (stat: %v)", tt.name, err)
				}
			}
		})
	}
}

// fakeOllama serves /api/tags with models and /v1/chat/completions from
// the scripted replies.
func fakeOllama(t *testing.T, models []string, replies ...llmtest.Reply) (*httptest.Server, *llmtest.Server) {
	t.Helper()
	chat := llmtest.NewServer(replies...)
	t.Cleanup(chat.Close)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, _ *http.Request) {
		var b strings.Builder
		b.WriteString(`{"models":[`)
		for i, m := range models {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`{"name":"` + m + `","model":"` + m + `","size":1}`)
		}
		b.WriteString(`]}`)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(b.String()))
	})
	mux.Handle("/v1/", chat.Config.Handler)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, chat
}

// TestSetupOllama: Ollama is detected and its models listed; without
// --model setup names them; with one it connects without a key.
func TestSetupOllama(t *testing.T) {
	srv, chat := fakeOllama(t, []string{"qwen3:8b", "llama3.2:3b"},
		llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"OK"}})})
	models, err := setup.DetectOllama(context.Background(), srv.URL)
	if err != nil || strings.Join(models, ",") != "llama3.2:3b,qwen3:8b" {
		t.Fatalf("DetectOllama = %v, %v; want both models, sorted", models, err)
	}
	paths := setupPaths(t)
	_, err = setup.Run(context.Background(), paths, setup.Options{Provider: "ollama", OllamaURL: srv.URL, Getenv: noEnv})
	if err == nil || !strings.Contains(err.Error(), "pass --model NAME; ollama at "+strings.TrimPrefix(srv.URL, "http://")+" has llama3.2:3b, qwen3:8b") {
		t.Fatalf("setup.Run(ollama, no model) = %v; want it to list the models", err)
	}
	res, err := setup.Run(context.Background(), paths, setup.Options{Provider: "ollama", Model: "qwen3:8b", OllamaURL: srv.URL, Getenv: noEnv})
	if err != nil {
		t.Fatalf("setup.Run(ollama, qwen3:8b): %v", err)
	}
	m := res.Config.Model
	if m.BaseURL != srv.URL+"/v1" || m.Name != "qwen3:8b" || m.APIKeyEnv != "" || m.APIKeySecret != "" || res.KeyFrom != "no key (local server)" {
		t.Errorf("setup.Run(ollama) model = %+v, key from %q; want the detected URL, no key", m, res.KeyFrom)
	}
	if reqs := chat.Requests(); len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "" {
		t.Errorf("the fake Ollama got %d chat requests (want 1, without Authorization)", len(reqs))
	}

	if _, err := setup.DetectOllama(context.Background(), "http://127.0.0.1:1"); err == nil {
		t.Error("setup.DetectOllama(nothing listening) succeeded; want an error")
	}
}
