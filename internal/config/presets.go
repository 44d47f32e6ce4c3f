package config

import (
	"slices"
	"strings"
)

// Preset is a provider name model.provider accepts: a wire protocol with a
// default endpoint, key variable and model. "openai" and "anthropic" are
// presets of their own wire protocol.
type Preset struct {
	// Name is the value of model.provider ("deepseek").
	Name string
	// Title is the name people know the service by ("DeepSeek").
	Title string
	// Wire is the protocol homard speaks to it: ProviderOpenAI or
	// ProviderAnthropic.
	Wire string
	// BaseURL is the default model.base_url.
	BaseURL string
	// Model is the default model.name. Empty means there is no sensible
	// default (a local server runs whatever the owner pulled): the file
	// or `homard setup` must name one.
	Model string
	// KeyEnv is the default model.api_key_env. Empty means the server
	// needs no key (a local one).
	KeyEnv string
	// Local is true for a server on the owner's own machine (Ollama,
	// vLLM, llama.cpp): no key, and plain http on loopback is fine.
	Local bool
	// ContextTokens is model.context_tokens when the file leaves it out:
	// three quarters of the default model's documented context window
	// (the rest is room for the answer and for the estimate's error),
	// at most 96000 so that one request of a long session stays cheap.
	// Zero means DefaultContextTokens. docs/PROVIDERS.md gives the window
	// and its source for each.
	ContextTokens int
	// AutoToolChoiceOnly is true for a service that refuses any
	// tool_choice but "auto" (Zhipu): a request that must not call tools
	// then sends none, and homard refuses the calls such an answer holds
	// (as it does for every tool-less answer).
	AutoToolChoiceOnly bool
	// ModelNote is said beside the model question of `homard setup`
	// when the name needs explaining (Ark's endpoint ids). Empty means
	// nothing to add.
	ModelNote string
}

// presets are every accepted model.provider, in the order error messages
// and `homard setup` list them. Default model names rotate at the
// providers; `homard setup --model` or model.name picks another.
var presets = []Preset{
	{Name: ProviderOpenAI, Title: "OpenAI (or any OpenAI-compatible server)", Wire: ProviderOpenAI,
		BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini", KeyEnv: "OPENAI_API_KEY"},
	{Name: ProviderAnthropic, Title: "Anthropic", Wire: ProviderAnthropic,
		BaseURL: "https://api.anthropic.com", Model: "claude-sonnet-4-5", KeyEnv: "ANTHROPIC_API_KEY"},
	{Name: "deepseek", Title: "DeepSeek", Wire: ProviderOpenAI,
		BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-chat", KeyEnv: "DEEPSEEK_API_KEY"},
	{Name: "openrouter", Title: "OpenRouter", Wire: ProviderOpenAI,
		BaseURL: "https://openrouter.ai/api/v1", Model: "openai/gpt-4o-mini", KeyEnv: "OPENROUTER_API_KEY"},
	{Name: "moonshot", Title: "Moonshot (Kimi)", Wire: ProviderOpenAI,
		BaseURL: "https://api.moonshot.ai/v1", Model: "kimi-k2.6", KeyEnv: "MOONSHOT_API_KEY"},
	{Name: "qwen", Title: "Qwen (DashScope compatible mode)", Wire: ProviderOpenAI,
		BaseURL: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", Model: "qwen-plus", KeyEnv: "DASHSCOPE_API_KEY"},
	// The Chinese services (docs/PROVIDERS.md: sources, quirks). Their
	// mainland endpoints: a key from the mainland console works only
	// there; the international twins are named in the doc.
	{Name: "zhipu", Title: "Zhipu GLM (BigModel)", Wire: ProviderOpenAI,
		BaseURL: "https://open.bigmodel.cn/api/paas/v4", Model: "glm-4.5", KeyEnv: "ZHIPU_API_KEY",
		ContextTokens: 96000, AutoToolChoiceOnly: true},
	{Name: "minimax", Title: "MiniMax", Wire: ProviderOpenAI,
		BaseURL: "https://api.minimaxi.com/v1", Model: "MiniMax-M2", KeyEnv: "MINIMAX_API_KEY",
		ContextTokens: 96000},
	{Name: "siliconflow", Title: "SiliconFlow", Wire: ProviderOpenAI,
		BaseURL: "https://api.siliconflow.cn/v1", Model: "deepseek-ai/DeepSeek-V3", KeyEnv: "SILICONFLOW_API_KEY",
		ContextTokens: 48000},
	{Name: "volcengine", Title: "Volcengine Ark (Doubao)", Wire: ProviderOpenAI,
		BaseURL: "https://ark.cn-beijing.volces.com/api/v3", Model: "doubao-seed-1-6-250615", KeyEnv: "ARK_API_KEY",
		ContextTokens: 96000,
		ModelNote:     "On Ark the name is often an inference endpoint id (ep-…) from the Ark console."},
	{Name: "hunyuan", Title: "Tencent Hunyuan", Wire: ProviderOpenAI,
		BaseURL: "https://api.hunyuan.cloud.tencent.com/v1", Model: "hunyuan-turbos-latest", KeyEnv: "HUNYUAN_API_KEY",
		ContextTokens: 24000},
	{Name: "qianfan", Title: "Baidu Qianfan (ERNIE)", Wire: ProviderOpenAI,
		BaseURL: "https://qianfan.baidubce.com/v2", Model: "ernie-4.5-turbo-128k", KeyEnv: "QIANFAN_API_KEY",
		ContextTokens: 96000},
	{Name: "ollama", Title: "Ollama (local)", Wire: ProviderOpenAI,
		BaseURL: "http://127.0.0.1:11434/v1", Local: true},
	{Name: "vllm", Title: "vLLM (local)", Wire: ProviderOpenAI,
		BaseURL: "http://127.0.0.1:8000/v1", Local: true},
	{Name: "llamacpp", Title: "llama.cpp server (local)", Wire: ProviderOpenAI,
		BaseURL: "http://127.0.0.1:8080/v1", Local: true},
}

// Presets returns every accepted model.provider, OpenAI first.
func Presets() []Preset { return slices.Clone(presets) }

// LookupPreset returns the preset called name.
func LookupPreset(name string) (Preset, bool) {
	i := slices.IndexFunc(presets, func(p Preset) bool { return p.Name == name })
	if i < 0 {
		return Preset{}, false
	}
	return presets[i], true
}

// ProviderNames lists the accepted model.provider values, comma-separated,
// for error messages.
func ProviderNames() string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// Wire returns the protocol m is spoken with: ProviderOpenAI or
// ProviderAnthropic. An unknown provider (Load never returns one) gives "".
func (m Model) Wire() string {
	p, _ := LookupPreset(m.Provider)
	return p.Wire
}

// Local reports whether m's provider is a server on the owner's machine
// that needs no key.
func (m Model) Local() bool {
	p, _ := LookupPreset(m.Provider)
	return p.Local
}

// AutoToolChoiceOnly reports whether m's provider refuses any tool_choice
// but "auto" (Preset.AutoToolChoiceOnly).
func (m Model) AutoToolChoiceOnly() bool {
	p, _ := LookupPreset(m.Provider)
	return p.AutoToolChoiceOnly
}

// Context is the model.context_tokens p gives a file that leaves it out.
func (p Preset) Context() int {
	if p.ContextTokens == 0 {
		return DefaultContextTokens
	}
	return p.ContextTokens
}

// presetContext sets m's context size to its provider's default. Load
// calls it when the file leaves context_tokens out: the size depends on
// the provider the file chose, so it cannot be filled before decoding
// like the other limits.
func presetContext(m *Model) {
	if p, ok := LookupPreset(m.Provider); ok {
		m.ContextTokens = p.Context()
	}
}

// preset turns p into the Model defaults Load fills in.
func (p Preset) model() Model {
	return Model{Provider: p.Name, BaseURL: p.BaseURL, Name: p.Model, APIKeyEnv: p.KeyEnv}
}
