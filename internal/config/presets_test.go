package config

import (
	"strings"
	"testing"
)

// TestEveryPresetLoads writes a file naming only the provider (and a model
// for the local ones, which have no default) and checks that Load fills
// the preset's endpoint, model and key variable and maps it to its wire
// protocol.
func TestEveryPresetLoads(t *testing.T) {
	tests := []struct {
		provider, wire, baseURL, name, keyEnv string
		local                                 bool
	}{
		{"openai", "openai", "https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY", false},
		{"anthropic", "anthropic", "https://api.anthropic.com", "claude-sonnet-4-5", "ANTHROPIC_API_KEY", false},
		{"deepseek", "openai", "https://api.deepseek.com/v1", "deepseek-chat", "DEEPSEEK_API_KEY", false},
		{"openrouter", "openai", "https://openrouter.ai/api/v1", "openai/gpt-4o-mini", "OPENROUTER_API_KEY", false},
		{"moonshot", "openai", "https://api.moonshot.ai/v1", "kimi-k2.6", "MOONSHOT_API_KEY", false},
		{"qwen", "openai", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "qwen-plus", "DASHSCOPE_API_KEY", false},
		{"ollama", "openai", "http://127.0.0.1:11434/v1", "", "", true},
		{"vllm", "openai", "http://127.0.0.1:8000/v1", "", "", true},
		{"llamacpp", "openai", "http://127.0.0.1:8080/v1", "", "", true},
	}
	if len(tests) != len(Presets()) {
		t.Fatalf("the table covers %d presets; Presets() has %d: add the new one here", len(tests), len(Presets()))
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			file := "[model]\nprovider = " + quote(tt.provider) + "\n"
			wantName := tt.name
			if tt.local {
				wantName = "qwen3:8b"
				file += "name = \"qwen3:8b\"\n"
			}
			file += "[workspace]\nroots = [{ name = \"main\", path = \"/ws\" }]\n"
			c, err := Load(writeConfig(t, file))
			if err != nil {
				t.Fatalf("Load(provider = %q): %v", tt.provider, err)
			}
			m := c.Model
			if m.BaseURL != tt.baseURL || m.Name != wantName || m.APIKeyEnv != tt.keyEnv {
				t.Errorf("provider %q loads base_url %q, name %q, api_key_env %q; want %q, %q, %q",
					tt.provider, m.BaseURL, m.Name, m.APIKeyEnv, tt.baseURL, wantName, tt.keyEnv)
			}
			if m.Wire() != tt.wire || m.Local() != tt.local {
				t.Errorf("provider %q: Wire() = %q, Local() = %v; want %q, %v", tt.provider, m.Wire(), m.Local(), tt.wire, tt.local)
			}
			// Render and Load again: the preset survives a round trip.
			data, err := Render(c)
			if err != nil {
				t.Fatalf("Render(provider %q): %v", tt.provider, err)
			}
			back, err := Load(writeConfig(t, string(data)))
			if err != nil {
				t.Fatalf("Load(Render(provider %q)): %v", tt.provider, err)
			}
			if back.Model != c.Model {
				t.Errorf("round trip of provider %q: %+v; want %+v", tt.provider, back.Model, c.Model)
			}
		})
	}
}

// TestPresetModelAndKeyRules: a local preset needs a model name and no key
// variable; a hosted one refuses a key pasted into api_key_env, and an
// unknown provider lists every accepted name.
func TestPresetModelAndKeyRules(t *testing.T) {
	roots := "[workspace]\nroots = [{ name = \"main\", path = \"/ws\" }]\n"
	tests := []struct {
		name, model string
		want        string // "" means Load succeeds
	}{
		{"local without a model", "provider = \"ollama\"\n", "model.name is missing: Ollama (local) has no default model"},
		{"local with an explicit empty key variable", "provider = \"vllm\"\nname = \"m\"\napi_key_env = \"\"\n", ""},
		{"local with a key variable", "provider = \"vllm\"\nname = \"m\"\napi_key_env = \"VLLM_KEY\"\n", ""},
		{"hosted, key pasted as the variable", "provider = \"deepseek\"\napi_key_env = \"sk-abc\"\n", `such as "DEEPSEEK_API_KEY"`},
		{"unknown provider", "provider = \"gemini\"\n", "want one of openai, anthropic, deepseek, openrouter, moonshot, qwen, ollama, vllm, llamacpp"},
		{"wire name in the wrong case", "provider = \"Ollama\"\n", `model.provider = "Ollama"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(writeConfig(t, "[model]\n"+tt.model+roots))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Load(%q) = %v; want success", tt.model, err)
			case tt.want != "" && err == nil:
				t.Errorf("Load(%q) succeeded; want an error containing %q", tt.model, tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("Load(%q) = %v; want it to contain %q", tt.model, err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "sk-abc") {
				t.Errorf("Load error %q echoes the pasted key", err)
			}
		})
	}
}

// TestInitAcceptsPresets: `homard init --provider ollama --model m` writes a
// config naming the preset with no key variable.
func TestInitAcceptsPresets(t *testing.T) {
	p := testPaths(t)
	c, err := Init(p, InitOptions{Provider: "ollama", Model: "llama3.2"})
	if err != nil {
		t.Fatalf("Init(provider ollama): %v", err)
	}
	if c.Model.Provider != "ollama" || c.Model.BaseURL != "http://127.0.0.1:11434/v1" || c.Model.APIKeyEnv != "" {
		t.Errorf("Init(provider ollama) model = %+v; want ollama at 127.0.0.1:11434 with no key variable", c.Model)
	}
	if _, err := Load(p.ConfigFile); err != nil {
		t.Errorf("Load after Init(provider ollama): %v", err)
	}
}
