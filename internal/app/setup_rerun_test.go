package app

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/setup"
	"github.com/homard/homard/internal/store/storetest"
)

// TestSetupRerunKeepsComments: running setup on an existing home edits the
// keys in place and keeps the owner's comments, other keys and rules; the
// vault secret of the same provider is kept when no new key is typed.
func TestSetupRerunKeepsComments(t *testing.T) {
	paths := setupPaths(t)
	ok := llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"OK"}})}
	srv := llmtest.NewServer(ok, ok, ok)
	defer srv.Close()
	if _, err := setup.Run(context.Background(), paths, setup.Options{
		Provider: "deepseek", BaseURL: srv.URL + "/v1", APIKey: setupKeyText, Getenv: noEnv,
	}); err != nil {
		t.Fatalf("first Setup: %v", err)
	}
	// The owner edits the file by hand.
	conf, _ := os.ReadFile(paths.ConfigFile)
	edited := strings.Replace(string(conf), "[model]\n", "[model]\n# my own note about the model\n", 1) +
		"\n# my rule\n[[rules]]\nid = \"notes\" # keep this\ntool = \"read_file\"\npath = \"notes/**\"\neffect = \"allow\"\n"
	edited = strings.Replace(edited, `capture = "on"`, `capture = "off" # I said so`, 1)
	if err := os.WriteFile(paths.ConfigFile, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	extra := t.TempDir()
	res, err := setup.Run(context.Background(), paths, setup.Options{
		Provider: "deepseek", BaseURL: srv.URL + "/v1", Model: "deepseek-reasoner", Mode: "autopilot",
		Workspaces: []string{paths.WorkspaceDir, extra}, Getenv: noEnv,
	})
	if err != nil {
		t.Fatalf("second Setup: %v", err)
	}
	if res.Created || res.KeyFrom != "vault secret model-deepseek" {
		t.Errorf("second Setup: created %v, key from %q; want the existing home and the kept vault secret", res.Created, res.KeyFrom)
	}
	after, _ := os.ReadFile(paths.ConfigFile)
	for _, want := range []string{
		"# my own note about the model", "# my rule", `id = "notes" # keep this`, `capture = "off" # I said so`,
		`name = "deepseek-reasoner"`, `mode = "autopilot"`, `api_key_secret = "model-deepseek"`,
		`{ name = "main", path = ` + config.QuoteString(paths.WorkspaceDir) + `, access = "rw" }`,
		`{ name = ` + config.QuoteString(strings.ToLower(filepath.Base(extra))) + `, path = ` + config.QuoteString(extra) + `, access = "rw" }`,
	} {
		if !strings.Contains(string(after), want) {
			t.Errorf("after the second setup config.toml lacks %q:\n%s", want, after)
		}
	}
	if len(res.Config.Rules) != 1 || res.Config.Memory.Capture != "off" || len(res.Config.Workspace.Roots) != 2 {
		t.Errorf("second Setup config: rules %v, capture %q, roots %v; want the rule and capture kept, two roots", res.Config.Rules, res.Config.Memory.Capture, res.Config.Workspace.Roots)
	}
	if got := srv.Requests()[1].Header.Get("Authorization"); got != "Bearer "+setupKeyText {
		t.Errorf("the second provider test sent Authorization %q; want the key kept in the vault", got)
	}
}

// TestSetupReadOnlyRoots: --read-only folders become roots with access
// "ro"; a later setup that changes only the writable folders, or nothing
// about folders, keeps them and their access; an empty list removes them.
func TestSetupReadOnlyRoots(t *testing.T) {
	paths := setupPaths(t)
	ok := llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"OK"}})}
	srv := llmtest.NewServer(ok, ok, ok, ok)
	defer srv.Close()
	ref := t.TempDir()
	extra := t.TempDir()
	access := func(res setup.Result) map[string]string {
		got := map[string]string{}
		for _, r := range res.Config.Workspace.Roots {
			a := config.AccessReadWrite
			if r.ReadOnly() {
				a = config.AccessReadOnly
			}
			got[r.Path] = a
		}
		return got
	}
	steps := []struct {
		name string
		o    setup.Options
		want map[string]string
	}{
		{"a read-only folder beside the default workspace", setup.Options{ReadOnly: []string{ref}},
			map[string]string{paths.WorkspaceDir: "rw", ref: "ro"}},
		{"only the mode changes: folders kept", setup.Options{Mode: "safe"},
			map[string]string{paths.WorkspaceDir: "rw", ref: "ro"}},
		{"another writable folder: the read-only one stays read-only", setup.Options{Workspaces: []string{paths.WorkspaceDir, extra}},
			map[string]string{paths.WorkspaceDir: "rw", extra: "rw", ref: "ro"}},
		{"an empty read-only list removes it", setup.Options{ReadOnly: []string{}},
			map[string]string{paths.WorkspaceDir: "rw", extra: "rw"}},
	}
	for _, st := range steps {
		o := st.o
		o.Provider, o.BaseURL, o.APIKey, o.Getenv = "deepseek", srv.URL+"/v1", setupKeyText, noEnv
		res, err := setup.Run(context.Background(), paths, o)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := access(res); !reflect.DeepEqual(got, st.want) {
			t.Errorf("%s: roots %v; want %v", st.name, got, st.want)
		}
		if _, err := config.Load(paths.ConfigFile); err != nil {
			t.Errorf("%s: config.toml does not load: %v", st.name, err)
		}
	}
}

// TestDoctorModel: doctor says "not set" for an empty key variable (a
// failure, not ok), reads the vault, checks the endpoint, and makes no
// request with --offline.
func TestDoctorModel(t *testing.T) {
	list := `{"data":[{"id":"gpt-test"},{"id":"other"}]}`
	tests := []struct {
		name      string
		provider  string
		env       map[string]string
		status    int
		body      string
		offline   bool
		wantKey   string // status:detail of the "model key" line
		wantModel string // status:detail of the endpoint line
	}{
		{"key not set", "openai", nil, 200, list, true,
			"fail:OPENAI_API_KEY not set: export OPENAI_API_KEY=…", "info:endpoint not checked (--offline)"},
		{"key set, endpoint ok", "openai", map[string]string{"OPENAI_API_KEY": setupKeyText}, 200, list, false,
			"ok:$OPENAI_API_KEY is set", "ok:127.0.0.1:"},
		{"key rejected", "openai", map[string]string{"OPENAI_API_KEY": setupKeyText}, 401, `{"error":{"message":"bad key"}}`, false,
			"ok:$OPENAI_API_KEY is set", "fail:key rejected by 127.0.0.1:"},
		{"unknown model", "openai", map[string]string{"OPENAI_API_KEY": setupKeyText}, 200, `{"data":[{"id":"other"}]}`, false,
			"ok:", `info:model "gpt-test" is not in its list`},
		{"key not set for a loopback server", "openai", nil, 200, list, false,
			"info:OPENAI_API_KEY not set: fine if the server at 127.0.0.1:", "ok:"},
		{"local preset needs no key", "vllm", nil, 200, list, false,
			"ok:no key needed (local server)", "ok:"},
		{"deepseek key not set", "deepseek", nil, 200, list, true,
			"fail:DEEPSEEK_API_KEY not set", "info:endpoint not checked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, hits := modelsServer(t, tt.status, tt.body)
			paths := setupPaths(t)
			base := srv.URL + "/v1"
			if tt.offline {
				// A hosted endpoint: a missing key there is a failure
				// (on loopback it may be a server without keys).
				base = ""
			}
			if _, err := Init(context.Background(), paths, config.InitOptions{StoreURL: storetest.URL(t), Provider: tt.provider, BaseURL: base, Model: "gpt-test"}); err != nil {
				t.Fatal(err)
			}
			getenv := func(k string) string { return tt.env[k] }
			checks := Doctor(context.Background(), paths, DoctorOptions{Offline: tt.offline, Getenv: getenv})
			var key Check
			for _, c := range checks {
				if c.Name == "model key" {
					key = c
				}
			}
			if got := checkStatus(key); !strings.HasPrefix(got, tt.wantKey) && !strings.Contains(got, tt.wantKey) {
				t.Errorf("doctor model key line = %q; want %q", got, tt.wantKey)
			}
			var endpoint Check
			for _, c := range checks {
				if c.Name == "model" {
					endpoint = c // the last "model" line is the endpoint's
				}
			}
			status, detail, _ := strings.Cut(tt.wantModel, ":")
			if got := checkStatus(endpoint); !strings.HasPrefix(got, status+":") || !strings.Contains(got, detail) {
				t.Errorf("doctor endpoint line = %q; want %q", got, tt.wantModel)
			}
			if tt.offline && hits.Load() != 0 {
				t.Errorf("doctor --offline made %d requests to the model endpoint; want none", hits.Load())
			}
			for _, c := range checks {
				if strings.Contains(c.Detail, setupKeyText) {
					t.Errorf("doctor line %q shows the key", c.Detail)
				}
			}
		})
	}
}

// TestDoctorModelVaultKey: after setup stored the key, doctor finds it in
// the vault.
func TestDoctorModelVaultKey(t *testing.T) {
	srv, _ := modelsServer(t, 200, `{"data":[{"id":"gpt-test"}]}`)
	paths := setupPaths(t)
	if _, err := setup.Run(context.Background(), paths, setup.Options{
		Provider: "openai", BaseURL: srv.URL + "/v1", Model: "gpt-test", APIKey: setupKeyText, SkipTest: true, Getenv: noEnv,
	}); err != nil {
		t.Fatal(err)
	}
	checks := Doctor(context.Background(), paths, DoctorOptions{Getenv: noEnv})
	key, _ := doctorLine(checks, "model key")
	if !key.OK || !strings.Contains(key.Detail, "vault secret model-openai") {
		t.Errorf("doctor model key line = %+v; want ok from vault secret model-openai", key)
	}
}

// checkStatus renders a check as "ok:detail", "fail:detail" or "info:detail".
func checkStatus(c Check) string {
	switch {
	case c.Info:
		return "info:" + c.Detail
	case c.OK:
		return "ok:" + c.Detail
	}
	return "fail:" + c.Detail
}

// TestModesExplainEveryPolicyMode: the wizard's mode question lists every
// mode policy knows, each with its line, most supervised first.
func TestModesExplainEveryPolicyMode(t *testing.T) {
	var names []string
	for _, m := range setup.Modes() {
		if m.Line == "" {
			t.Errorf("mode %q has no one-line explanation in modeLines", m.Name)
		}
		if len(m.Name)+1+len(m.Line) > 70 {
			t.Errorf("mode %q's line is %d characters; keep it on one 80-column line", m.Name, len(m.Line))
		}
		names = append(names, m.Name)
	}
	if got := strings.Join(names, ","); got != "safe,smart,autopilot,yolo" {
		t.Errorf("setup.Modes() = %s; want safe,smart,autopilot,yolo", got)
	}
}

// TestSetupRerunKeepsWhatItIsNotTold: a second setup with only a new mode
// (no provider, no key) keeps the provider, its base URL, model and the
// key in the vault, and tests with that key; one naming the same provider
// but no base URL keeps the base URL too.
func TestSetupRerunKeepsWhatItIsNotTold(t *testing.T) {
	paths := setupPaths(t)
	ok := llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"OK"}})}
	srv := llmtest.NewServer(ok, ok, ok)
	defer srv.Close()
	if _, err := setup.Run(context.Background(), paths, setup.Options{Provider: "deepseek", BaseURL: srv.URL + "/v1", Model: "ds-test", APIKey: setupKeyText, Getenv: noEnv}); err != nil {
		t.Fatalf("first Setup: %v", err)
	}
	for _, o := range []setup.Options{{Mode: "autopilot"}, {Provider: "deepseek", Mode: "autopilot"}} {
		o.Getenv = noEnv
		res, err := setup.Run(context.Background(), paths, o)
		if err != nil {
			t.Fatalf("setup.Run(%+v) again: %v", o, err)
		}
		m := res.Config.Model
		if m.Provider != "deepseek" || m.BaseURL != srv.URL+"/v1" || m.Name != "ds-test" || m.APIKeySecret != "model-deepseek" ||
			res.Config.Permissions.Mode != "autopilot" || res.KeyFrom != "vault secret model-deepseek" {
			t.Errorf("setup.Run(%+v) again = model %+v, mode %s, key from %q; want the first setup's model and key, mode autopilot", o, m, res.Config.Permissions.Mode, res.KeyFrom)
		}
	}
	for i, rq := range srv.Requests() {
		if got := rq.Header.Get("Authorization"); got != "Bearer "+setupKeyText {
			t.Errorf("test request %d carried Authorization %q; want the key kept in the vault", i, got)
		}
	}
	if _, err := setup.Run(context.Background(), setupPaths(t), setup.Options{Mode: "safe", Getenv: noEnv}); !errors.Is(err, setup.ErrBadOption) || !strings.Contains(err.Error(), "needs --provider") {
		t.Errorf("Setup without a provider in a new home = %v; want setup.ErrBadOption asking for --provider", err)
	}
}

// TestSetupShortKeyWritesNothing: a key the vault would refuse (under
// secrets.MinKnownLen bytes) fails setup before anything is written, with
// or without the provider test, in a new home and in an existing one.
func TestSetupShortKeyWritesNothing(t *testing.T) {
	ok := llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"OK"}})}
	srv := llmtest.NewServer(ok, ok, ok, ok)
	defer srv.Close()
	for _, existing := range []bool{false, true} {
		for _, skip := range []bool{false, true} {
			paths := setupPaths(t)
			var before []byte
			if existing {
				if _, err := Init(context.Background(), paths, config.InitOptions{StoreURL: storetest.URL(t)}); err != nil {
					t.Fatal(err)
				}
				before, _ = os.ReadFile(paths.ConfigFile)
			}
			_, err := setup.Run(context.Background(), paths, setup.Options{Provider: "openai", BaseURL: srv.URL + "/v1", Model: "gpt-test", APIKey: "abc", SkipTest: skip, Getenv: noEnv})
			if err == nil || !strings.Contains(err.Error(), "shorter than 6 bytes") || !strings.Contains(err.Error(), "nothing was written") {
				t.Fatalf("setup.Run(short key, existing %v, skip test %v) = %v; want the key refused and nothing written", existing, skip, err)
			}
			if !existing {
				if _, err := os.Stat(filepath.Dir(paths.ConfigFile)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("setup.Run(short key, skip test %v) failed but created the home (stat: %v)", skip, err)
				}
				continue
			}
			if after, _ := os.ReadFile(paths.ConfigFile); string(after) != string(before) {
				t.Errorf("setup.Run(short key, skip test %v) failed but changed config.toml", skip)
			}
			if _, err := os.Stat(paths.VaultFile()); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("setup.Run(short key, skip test %v) failed but wrote the vault (stat: %v)", skip, err)
			}
		}
	}
}

// modelsServer answers GET /v1/models with status and body and counts
// the requests.
func modelsServer(t *testing.T, status int, body string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}
