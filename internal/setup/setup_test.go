package setup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
)

// TestSetupKeyOverPlainHTTP: a typed key is sent over http only to
// loopback; to another host over http setup refuses and says what to do.
// The twin: the same over https or to 127.0.0.1 is accepted.
func TestSetupKeyOverPlainHTTP(t *testing.T) {
	tests := []struct {
		url       string
		allowHTTP bool
		want      string // "" means accepted
	}{
		{"http://192.168.1.20:8000/v1", false, "the key would travel in clear text to 192.168.1.20:8000: use an https URL"},
		{"https://192.168.1.20:8000/v1", false, ""},
		{"http://127.0.0.1:8000/v1", true, ""},
		{"http://localhost:8000/v1", true, ""},
		{"http://[::1]:8000/v1", true, ""},
	}
	p, _ := config.LookupPreset("vllm")
	for _, tt := range tests {
		s, err := modelSecret(lang.Printer{}, config.Model{Provider: "vllm", BaseURL: tt.url}, p)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("modelSecret(%s) = %v; want accepted", tt.url, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("modelSecret(%s) = %v; want an error containing %q", tt.url, err, tt.want)
		case err == nil && (s.Name != "model-vllm" || s.AllowHTTP != tt.allowHTTP):
			t.Errorf("modelSecret(%s) = %+v; want model-vllm, allow http %v", tt.url, s, tt.allowHTTP)
		}
	}
}

// TestSetupContextTokens: setup with a provider other than the config's
// writes that preset's context size (a new home too); setup again with the
// same provider keeps what the owner set; switching provider replaces it.
func TestSetupContextTokens(t *testing.T) {
	paths, err := config.ResolvePaths(filepath.Join(t.TempDir(), "home"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	run := func(provider string, want int) {
		t.Helper()
		res, err := Run(context.Background(), paths, Options{Provider: provider, SkipTest: true, Getenv: noEnv})
		if err != nil {
			t.Fatalf("Run(provider %q): %v", provider, err)
		}
		if got := res.Config.Model.ContextTokens; got != want {
			t.Errorf("Run(provider %q): model.context_tokens = %d; want %d", provider, got, want)
		}
	}
	run("zhipu", 96000) // a new home
	data, err := os.ReadFile(paths.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "context_tokens = 96000") {
		t.Errorf("config.toml after setup --provider zhipu lacks context_tokens = 96000:\n%s", data)
	}
	edited := strings.Replace(string(data), "context_tokens = 96000", "context_tokens = 50000", 1)
	if err := os.WriteFile(paths.ConfigFile, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	run("zhipu", 50000)    // the same provider: the owner's size stays
	run("deepseek", 24000) // another provider: its size
	run("hunyuan", 24000)
	run("siliconflow", 48000)
}
