package config

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// withModels is baseConfig with tables appended after [model]'s keys.
func withModels(t *testing.T, tables string) string {
	t.Helper()
	return edit(t, `api_key_env = "OPENAI_API_KEY"`+"\n", `api_key_env = "OPENAI_API_KEY"`+"\n"+tables+"\n")
}

// A file without [models] has every role played by [model]; one that names
// a further model for capture and summary gets that model, completed with
// its preset's and the model defaults like [model].
func TestLoadModelRoles(t *testing.T) {
	c, err := Load(writeConfig(t, baseConfig))
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range RoleNames() {
		if name, m := c.ModelFor(role); name != MainModel || m != c.Model {
			t.Errorf("no [models]: ModelFor(%s) = %s, %+v; want main, [model]", role, name, m)
		}
	}
	if s := c.RolesLine(); s != "" {
		t.Errorf("no [models]: RolesLine() = %q; want empty", s)
	}

	c, err = Load(writeConfig(t, withModels(t, `
[models.local]
provider = "ollama"
name = "qwen2.5:3b"
context_tokens = 8000

[models.roles]
capture = "local"
summary = "local"
planner = "main"
`)))
	if err != nil {
		t.Fatal(err)
	}
	local := Model{Provider: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Name: "qwen2.5:3b", ContextTokens: 8000,
		FirstEventTimeout: Duration(180 * time.Second), IdleTimeout: Duration(90 * time.Second), RequestTimeout: Duration(10 * time.Minute), ConnectTimeout: Duration(30 * time.Second)}
	want := map[string]struct {
		name  string
		model Model
	}{
		RoleMain: {"main", c.Model}, RolePlanner: {"main", c.Model}, RoleWorker: {"main", c.Model},
		RoleCapture: {"local", local}, RoleSummary: {"local", local},
	}
	for role, w := range want {
		if name, m := c.ModelFor(role); name != w.name || m != w.model {
			t.Errorf("ModelFor(%s) = %s, %+v; want %s, %+v", role, name, m, w.name, w.model)
		}
	}
	if got, want := c.RolesLine(), "capture → local (ollama qwen2.5:3b), summary → local"; got != want {
		t.Errorf("RolesLine() = %q; want %q", got, want)
	}
	if c.Model.Name != "gpt-4o-mini" {
		t.Errorf("[model] name = %q; a named model must not change it", c.Model.Name)
	}
}

func TestLoadModelRolesErrors(t *testing.T) {
	tests := []struct {
		name, tables string
		want         []string
	}{
		{"unknown role", "[models.roles]\ncoder = \"main\"",
			[]string{"unknown key models.roles.coder: allowed in [models.roles]: main, planner, worker, capture, summary"}},
		{"unknown key in a named model", "[models.local]\nprovider = \"ollama\"\nname = \"q\"\nmodel = \"q\"",
			[]string{"unknown key models.local.model: allowed in [models.local]: provider, base_url, name"}},
		{"role names a missing model", "[models.roles]\ncapture = \"local\"\nsummary = \"cheap\"",
			[]string{`models.roles.capture = "local": no [models.local] table defines that model`,
				`models.roles.summary = "cheap": no [models.cheap] table defines that model`}},
		{"empty role", "[models.roles]\nworker = \"\"", []string{"models.roles.worker is empty"}},
		{"role names the role table", "[models.roles]\nplanner = \"roles\"", []string{`models.roles.planner = "roles": that is the name of the role table`}},
		{"main is reserved", "[models.main]\nprovider = \"ollama\"\nname = \"q\"",
			[]string{`[models.main]: "main" is reserved for [model]`}},
		{"bad name", "[models.Big]\nprovider = \"ollama\"\nname = \"q\"",
			[]string{"[models.Big]: want a model name made of a-z, 0-9, _ and -"}},
		{"invalid named model", "[models.local]\nprovider = \"gemini\"\n[models.cloud]\nprovider = \"openai\"\nbase_url = \"ftp://h\"\ncontext_tokens = 100",
			[]string{`models.local.provider = "gemini": want one of openai`, `models.cloud.base_url = "ftp://h"`, "models.cloud.context_tokens = 100: want at least 4000"}},
		{"no default model name", "[models.local]\nprovider = \"ollama\"", []string{"models.local.name is missing"}},
		{"not a table", "[models]\nlocal = \"ollama\"", []string{"models.local is not a table"}},
		{"wrong type", "[models.local]\nprovider = \"ollama\"\nname = \"q\"\ncontext_tokens = \"big\"", []string{"config.toml:11: models.local.context_tokens: incompatible types"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(writeConfig(t, withModels(t, tt.tables)))
			if err == nil {
				t.Fatalf("Load with\n%s\naccepted; want %q", tt.tables, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load with\n%s\nerror %q; want it to contain %q", tt.tables, err, w)
				}
			}
		})
	}
}

// Render writes [models.roles] and each named model so that Load reads
// them back unchanged, every key under a comment.
func TestRenderModelRolesRoundTrip(t *testing.T) {
	want := Default(Paths{WorkspaceDir: t.TempDir()})
	cheap := Model{Provider: "llamacpp", Name: "phi", APIKeySecret: "local-key"}
	applyModelLimits(&cheap)
	applyModelDefaults(&cheap)
	want.Models.Named["cheap"] = cheap
	want.Models.Roles.Capture, want.Models.Roles.Summary = "cheap", "cheap"
	got, data := renderLoad(t, want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load(Render(c)) models = %+v; want %+v\nrendered:\n%s", got.Models, want.Models, data)
	}
	lines := strings.Split(data, "\n")
	keyLine := regexp.MustCompile(`^[a-z_]+ = `)
	for i, l := range lines {
		if keyLine.MatchString(l) && !strings.HasPrefix(lines[i-1], "#") {
			t.Errorf("line %d %q has no comment above it", i+1, l)
		}
	}
	if !strings.Contains(data, "\n[models.cheap]\nprovider = \"llamacpp\"") && !strings.Contains(data, "\n[models.cheap]\n#") {
		t.Errorf("Render does not write [models.cheap]:\n%s", data)
	}
}
