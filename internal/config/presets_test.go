package config

import (
	"strings"
	"testing"
)

// TestEveryPresetLoads writes a file naming only the provider (and a model
// for the local ones, which have no default) and checks that Load fills
// the preset's endpoint, model, key variable and context size and maps it
// to its wire protocol.
func TestEveryPresetLoads(t *testing.T) {
	tests := []struct {
		provider, wire, baseURL, name, keyEnv string
		local                                 bool
		context                               int
	}{
		{"openai", "openai", "https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY", false, 24000},
		{"anthropic", "anthropic", "https://api.anthropic.com", "claude-sonnet-4-5", "ANTHROPIC_API_KEY", false, 24000},
		{"deepseek", "openai", "https://api.deepseek.com/v1", "deepseek-chat", "DEEPSEEK_API_KEY", false, 24000},
		{"openrouter", "openai", "https://openrouter.ai/api/v1", "openai/gpt-4o-mini", "OPENROUTER_API_KEY", false, 24000},
		{"moonshot", "openai", "https://api.moonshot.ai/v1", "kimi-k2.6", "MOONSHOT_API_KEY", false, 24000},
		{"qwen", "openai", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "qwen-plus", "DASHSCOPE_API_KEY", false, 24000},
		{"zhipu", "openai", "https://open.bigmodel.cn/api/paas/v4", "glm-4.5", "ZHIPU_API_KEY", false, 96000},
		{"minimax", "openai", "https://api.minimaxi.com/v1", "MiniMax-M2", "MINIMAX_API_KEY", false, 96000},
		{"siliconflow", "openai", "https://api.siliconflow.cn/v1", "deepseek-ai/DeepSeek-V3", "SILICONFLOW_API_KEY", false, 48000},
		{"volcengine", "openai", "https://ark.cn-beijing.volces.com/api/v3", "doubao-seed-1-6-250615", "ARK_API_KEY", false, 96000},
		{"hunyuan", "openai", "https://api.hunyuan.cloud.tencent.com/v1", "hunyuan-turbos-latest", "HUNYUAN_API_KEY", false, 24000},
		{"qianfan", "openai", "https://qianfan.baidubce.com/v2", "ernie-4.5-turbo-128k", "QIANFAN_API_KEY", false, 96000},
		{"ollama", "openai", "http://127.0.0.1:11434/v1", "", "", true, 24000},
		{"vllm", "openai", "http://127.0.0.1:8000/v1", "", "", true, 24000},
		{"llamacpp", "openai", "http://127.0.0.1:8080/v1", "", "", true, 24000},
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
			if m.ContextTokens != tt.context {
				t.Errorf("provider %q loads context_tokens %d; want %d (the preset's)", tt.provider, m.ContextTokens, tt.context)
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
		{"unknown provider", "provider = \"gemini\"\n", "want one of openai, anthropic, deepseek, openrouter, moonshot, qwen, zhipu, minimax, siliconflow, volcengine, hunyuan, qianfan, ollama, vllm, llamacpp"},
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

// TestPresetContextTokens: a file that leaves context_tokens out gets its
// provider's size, in [model] and in [models.NAME]; a file that sets it,
// even to the generic default, keeps its own; Init writes the preset's.
func TestPresetContextTokens(t *testing.T) {
	roots := "[workspace]\nroots = [{ name = \"main\", path = \"/ws\" }]\n"
	tests := []struct {
		name, file  string
		main, named int // named: models.other's; 0 when there is none
	}{
		{"omitted", "[model]\nprovider = \"zhipu\"\n", 96000, 0},
		{"set to the generic default", "[model]\nprovider = \"zhipu\"\ncontext_tokens = 24000\n", 24000, 0},
		{"set", "[model]\nprovider = \"siliconflow\"\ncontext_tokens = 30000\n", 30000, 0},
		{"a preset without its own", "[model]\nprovider = \"deepseek\"\n", DefaultContextTokens, 0},
		{"named model omitted", "[model]\nprovider = \"openai\"\n[models.other]\nprovider = \"volcengine\"\nname = \"ep-20250101-abc\"\n", 24000, 96000},
		{"named model set", "[model]\nprovider = \"openai\"\n[models.other]\nprovider = \"qianfan\"\ncontext_tokens = 8000\n", 24000, 8000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(writeConfig(t, tt.file+roots))
			if err != nil {
				t.Fatalf("Load(%q): %v", tt.file, err)
			}
			if got := c.Model.ContextTokens; got != tt.main {
				t.Errorf("Load(%q): model.context_tokens = %d; want %d", tt.file, got, tt.main)
			}
			if got := c.Models.Named["other"].ContextTokens; got != tt.named {
				t.Errorf("Load(%q): models.other.context_tokens = %d; want %d", tt.file, got, tt.named)
			}
		})
	}

	p := testPaths(t)
	c, err := Init(p, InitOptions{Provider: "minimax"})
	if err != nil {
		t.Fatalf("Init(provider minimax): %v", err)
	}
	back, err := Load(p.ConfigFile)
	if err != nil {
		t.Fatalf("Load after Init(provider minimax): %v", err)
	}
	if c.Model.ContextTokens != 96000 || back.Model.ContextTokens != 96000 {
		t.Errorf("Init(provider minimax) context_tokens = %d, loaded back %d; want 96000", c.Model.ContextTokens, back.Model.ContextTokens)
	}
}
