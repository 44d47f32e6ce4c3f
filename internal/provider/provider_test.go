package provider

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/secrets"
)

// The cache hands out one client while the settings and the key stay the
// same (turns reuse its connections), and a new one when either changes:
// a rotated key or another endpoint is never served by the old client.
func TestCacheKeepsOneClientPerSettingsAndKey(t *testing.T) {
	var c Cache
	defer c.Close()
	m := config.Model{Provider: config.ProviderOpenAI, BaseURL: "http://127.0.0.1:1/v1", Name: "m"}
	a, err := c.Get(m, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.Get(m, "k1"); b != a {
		t.Error("the same settings and key built a second client")
	}
	if b, _ := c.Get(m, "k2"); b == a {
		t.Error("a changed key was served by the old client")
	}
	m2 := m
	m2.BaseURL = "http://127.0.0.1:2/v1"
	if b, _ := c.Get(m2, "k2"); b == a {
		t.Error("another endpoint was served by the old client")
	}
}

// Each named model keeps its own client: a role's model is not rebuilt
// from turn to turn, and one model's client never serves another even
// with equal settings; the same name reuses its client.
func TestClientsKeepOneClientPerModelName(t *testing.T) {
	var c Clients
	defer c.Close()
	m := config.Model{Provider: config.ProviderOpenAI, BaseURL: "http://127.0.0.1:1/v1", Name: "m"}
	main, err := c.Get(config.MainModel, m, "k")
	if err != nil {
		t.Fatal(err)
	}
	local, err := c.Get("local", m, "k")
	if err != nil {
		t.Fatal(err)
	}
	if local == main {
		t.Error("two named models share one client")
	}
	if again, _ := c.Get("local", m, "k"); again != local {
		t.Error("the same model name built a second client")
	}
	if again, _ := c.Get(config.MainModel, m, "k"); again != main {
		t.Error("getting another model's client replaced main's")
	}
}

// keys is a vault that releases each secret to one host only.
type keys map[string]string // name → "host value"

func (k keys) ReleaseValue(name, scheme, host string) (string, error) {
	h, v, _ := strings.Cut(k[name], " ")
	if h != host {
		return "", fmt.Errorf("%w: %s is bound to %q", secrets.ErrNotBound, name, h)
	}
	return v, nil
}

// For gives each role its model, with that model's own key: the capture
// model's vault secret is released for its own host, and a key that cannot
// be had names the [models.NAME] table and is still ErrNoKey.
func TestClientsForRole(t *testing.T) {
	cfg := &config.Config{
		Model: config.Model{Provider: config.ProviderOpenAI, BaseURL: "https://api.example/v1", Name: "big", APIKeyEnv: "MAIN_KEY"},
		Models: config.Models{
			Roles: config.Roles{Main: "main", Capture: "local", Summary: "far"},
			Named: map[string]config.Model{
				"local": {Provider: config.ProviderOpenAI, BaseURL: "http://127.0.0.1:11434/v1", Name: "small", APIKeySecret: "local-key"},
				"far":   {Provider: config.ProviderOpenAI, BaseURL: "https://other.example/v1", Name: "x", APIKeySecret: "local-key"},
			},
		},
	}
	getenv := func(k string) string { return map[string]string{"MAIN_KEY": "main-secret"}[k] }
	vault := keys{"local-key": "127.0.0.1:11434 local-secret"}
	var c Clients
	defer c.Close()
	mainClient, m, err := c.For(cfg, config.RoleMain, getenv, vault)
	if err != nil || m.Name != "big" {
		t.Fatalf("For(main) = %+v, %v; want [model]", m, err)
	}
	capture, m, err := c.For(cfg, config.RoleCapture, getenv, vault)
	if err != nil || m.Name != "small" {
		t.Fatalf("For(capture) = %+v, %v; want [models.local]", m, err)
	}
	if capture == mainClient {
		t.Error("capture got the main model's client")
	}
	if c.byName["local"].key != "local-secret" || c.byName["main"].key != "main-secret" {
		t.Errorf("keys kept: local %q, main %q; want each model's own", c.byName["local"].key, c.byName["main"].key)
	}
	_, _, err = c.For(cfg, config.RoleSummary, getenv, vault)
	if !errors.Is(err, ErrNoKey) || !strings.Contains(err.Error(), "[models.far]") {
		t.Errorf("For(summary) with a secret bound to another host: %v; want ErrNoKey naming [models.far]", err)
	}
}

// TestZhipuClientSendsNoToolChoice: the zhipu preset's client leaves
// tool_choice out of an answer that must not call tools (Zhipu refuses
// any but "auto"), keeping the tools; the openai preset's, the twin,
// still sends "none".
func TestZhipuClientSendsNoToolChoice(t *testing.T) {
	for _, tt := range []struct {
		provider string
		want     bool // tool_choice sent
	}{{"zhipu", false}, {config.ProviderOpenAI, true}} {
		srv := llmtest.NewServer(llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"ok"}})})
		m, err := New(config.Model{Provider: tt.provider, BaseURL: srv.URL, Name: "glm-4.5"}, "key-0123456789")
		if err != nil {
			t.Fatal(err)
		}
		s, err := m.Stream(t.Context(), llm.Request{Model: "glm-4.5", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}},
			Tools: []llm.ToolSpec{{Name: "read_file"}}, NoToolCalls: true})
		if err == nil {
			_, err = llm.Collect(s)
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.provider, err)
		}
		body := string(srv.Requests()[0].Body)
		if strings.Contains(body, `"tool_choice":"none"`) != tt.want || !strings.Contains(body, `"read_file"`) {
			t.Errorf("%s: request %s; want tools, tool_choice sent: %v", tt.provider, body, tt.want)
		}
		srv.Close()
	}
}
