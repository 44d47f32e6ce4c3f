package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func testPaths(t *testing.T) Paths {
	t.Helper()
	p, err := ResolvePaths(filepath.Join(t.TempDir(), "home"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func checkMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Errorf("stat %s: %v", path, err)
		return
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("mode of %s = %04o; want %04o", path, got, want)
	}
}

func TestInitWritesConfigAndFolders(t *testing.T) {
	p := testPaths(t)
	c, err := Init(p, InitOptions{})
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	if want := Default(p); !reflect.DeepEqual(c, want) {
		t.Errorf("Init(no options) = %+v; want Default(p) %+v", c, want)
	}
	loaded, err := Load(p.ConfigFile)
	if err != nil {
		t.Fatalf("Load(Init's file): %v", err)
	}
	if !reflect.DeepEqual(loaded, c) {
		t.Errorf("Load(Init's file) = %+v; want what Init returned %+v", loaded, c)
	}
	checkMode(t, p.ConfigFile, 0o600)
	checkMode(t, p.DataDir, 0o700)
	checkMode(t, p.CheckpointDir, 0o700)
	checkMode(t, p.WorkspaceDir, 0o755)
	if _, err := os.Stat(p.DBFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Init created the database %s (stat error %v); the app layer owns it", p.DBFile, err)
	}
	entries, err := os.ReadDir(filepath.Dir(p.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("Init left a temporary file %s behind", e.Name())
		}
	}
}

func TestInitOptions(t *testing.T) {
	tests := []struct {
		name string
		opts InitOptions
		want Model
		mode string
	}{
		{"openai defaults", InitOptions{Provider: "openai"},
			Model{"openai", "https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY", "", DefaultContextTokens, Duration(180 * time.Second), Duration(90 * time.Second), Duration(10 * time.Minute), Duration(30 * time.Second)}, "smart"},
		{"anthropic defaults", InitOptions{Provider: "anthropic"},
			Model{"anthropic", "https://api.anthropic.com", "claude-sonnet-4-5", "ANTHROPIC_API_KEY", "", DefaultContextTokens, Duration(180 * time.Second), Duration(90 * time.Second), Duration(10 * time.Minute), Duration(30 * time.Second)}, "smart"},
		{"overrides", InitOptions{Provider: "openai", BaseURL: "http://127.0.0.1:11434/v1", Model: "llama3", APIKeyEnv: "OLLAMA_KEY", Mode: "safe"},
			Model{"openai", "http://127.0.0.1:11434/v1", "llama3", "OLLAMA_KEY", "", DefaultContextTokens, Duration(180 * time.Second), Duration(90 * time.Second), Duration(10 * time.Minute), Duration(30 * time.Second)}, "safe"},
		{"anthropic with mode", InitOptions{Provider: "anthropic", Mode: "autopilot"},
			Model{"anthropic", "https://api.anthropic.com", "claude-sonnet-4-5", "ANTHROPIC_API_KEY", "", DefaultContextTokens, Duration(180 * time.Second), Duration(90 * time.Second), Duration(10 * time.Minute), Duration(30 * time.Second)}, "autopilot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPaths(t)
			c, err := Init(p, tt.opts)
			if err != nil {
				t.Fatalf("Init(%+v): %v", tt.opts, err)
			}
			loaded, err := Load(p.ConfigFile)
			if err != nil {
				t.Fatalf("Load after Init(%+v): %v", tt.opts, err)
			}
			for _, got := range []*Config{c, loaded} {
				if got.Model != tt.want || got.Permissions.Mode != tt.mode {
					t.Errorf("Init(%+v) model %+v mode %q; want %+v mode %q", tt.opts, got.Model, got.Permissions.Mode, tt.want, tt.mode)
				}
			}
		})
	}
}

func TestInitRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts InitOptions
		want string
	}{
		{"provider", InitOptions{Provider: "gemini"}, `provider "gemini": want one of openai, anthropic, deepseek, openrouter, moonshot, qwen, zhipu, minimax, siliconflow, volcengine, hunyuan, qianfan, ollama, vllm, llamacpp`},
		{"mode", InitOptions{Mode: "fast"}, `mode "fast": want one of safe, smart, autopilot, yolo`},
		{"base url", InitOptions{BaseURL: "localhost:8080"}, "model.base_url"},
		{"key instead of variable", InitOptions{APIKeyEnv: "sk-secret-value"}, "model.api_key_env"},
	}
	if _, err := Init(Paths{}, InitOptions{}); err == nil || !strings.Contains(err.Error(), "not absolute") {
		t.Errorf("Init(zero Paths) error = %v; want a not-absolute refusal", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPaths(t)
			_, err := Init(p, tt.opts)
			if err == nil {
				t.Fatalf("Init(%+v) succeeded; want an error", tt.opts)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Init(%+v) error = %q; want it to contain %q", tt.opts, err, tt.want)
			}
			if strings.Contains(err.Error(), "sk-secret-value") {
				t.Errorf("Init(%+v) error %q leaks the key", tt.opts, err)
			}
			if _, err := os.Stat(p.Home); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Init(%+v) failed but created %s (stat error %v)", tt.opts, p.Home, err)
			}
		})
	}
}

func TestInitOverwrite(t *testing.T) {
	p := testPaths(t)
	if _, err := Init(p, InitOptions{}); err != nil {
		t.Fatalf("first Init: %v", err)
	}
	const edited = "# edited by the owner\n"
	if err := os.WriteFile(p.ConfigFile, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}

	_, err := Init(p, InitOptions{Provider: "anthropic"})
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "--force") || !strings.Contains(err.Error(), p.ConfigFile) {
		t.Errorf("Init over an existing file error = %v; want one wrapping fs.ErrExist naming the file and --force", err)
	}
	if got, _ := os.ReadFile(p.ConfigFile); string(got) != edited {
		t.Errorf("Init without Force changed the file to:\n%s", got)
	}

	if _, err := Init(p, InitOptions{Provider: "anthropic", Force: true}); err != nil {
		t.Fatalf("Init with Force: %v", err)
	}
	c, err := Load(p.ConfigFile)
	if err != nil {
		t.Fatalf("Load after forced Init: %v", err)
	}
	if c.Model.Provider != "anthropic" {
		t.Errorf("after forced Init provider = %q; want anthropic", c.Model.Provider)
	}
	checkMode(t, p.ConfigFile, 0o600)
}

// TestWriteFileNoClobber covers the race Init's first check cannot: a file
// appearing between the check and the write is never replaced without force.
func TestWriteFileNoClobber(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := writeFile(path, []byte("new"), false)
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("writeFile(existing, force=false) = %v; want an fs.ErrExist error mentioning --force", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("writeFile(existing, force=false) changed the file to %q", got)
	}
	if err := writeFile(path, []byte("new"), true); err != nil {
		t.Fatalf("writeFile(existing, force=true): %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "new" {
		t.Errorf("writeFile(existing, force=true) left %q; want %q", got, "new")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("writeFile left %d entries in the folder; want only the config file", len(entries))
	}
}
