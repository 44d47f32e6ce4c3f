package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// renderLoad renders c, writes it and loads it back.
func renderLoad(t *testing.T, c *Config) (*Config, string) {
	t.Helper()
	data, err := Render(c)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	path := writeConfig(t, string(data))
	got, err := Load(path)
	if err != nil {
		t.Fatalf("Load(Render(c)): %v\nrendered:\n%s", err, data)
	}
	return got, string(data)
}

func TestRenderDefaultRoundTrips(t *testing.T) {
	p, err := ResolvePaths(filepath.Join(t.TempDir(), "home"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Default(p)
	got, data := renderLoad(t, want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load(Render(Default(p))) =\n%+v\nwant\n%+v\nrendered:\n%s", got, want, data)
	}
	if want.Workspace.Roots[0] != (Root{Name: "main", Path: p.WorkspaceDir, Access: AccessReadWrite}) {
		t.Errorf("Default(p) roots = %+v; want main at %s", want.Workspace.Roots, p.WorkspaceDir)
	}
}

func TestRenderCustomRoundTrips(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Owner: "telegram:42é", Lang: "zh",
		Model: Model{Provider: "anthropic", BaseURL: "http://localhost:8080/proxy", Name: `we"ird\model`, APIKeyEnv: "MY_KEY_2", ContextTokens: 128000, FirstEventTimeout: Duration(10 * time.Minute), IdleTimeout: Duration(45 * time.Second), RequestTimeout: 0, ConnectTimeout: Duration(5 * time.Second)},
		Models: Models{
			Roles: Roles{Main: "main", Planner: "big", Worker: "local", Capture: "local", Summary: "local"},
			Named: map[string]Model{
				"local": {Provider: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Name: "qwen2.5:3b", APIKeyEnv: "", ContextTokens: 8000,
					FirstEventTimeout: Duration(time.Minute), IdleTimeout: Duration(20 * time.Second), RequestTimeout: Duration(2 * time.Minute), ConnectTimeout: Duration(2 * time.Second)},
				"big": {Provider: "openai", BaseURL: "https://api.openai.com/v1", Name: "gpt-5", APIKeyEnv: "OPENAI_API_KEY", APIKeySecret: "openai-key", ContextTokens: 200000,
					FirstEventTimeout: Duration(5 * time.Minute), IdleTimeout: Duration(90 * time.Second), RequestTimeout: 0, ConnectTimeout: Duration(30 * time.Second)},
			},
		},
		Permissions: Permissions{
			Mode: "yolo", ApprovalTTL: Duration(90 * time.Second), SessionGrantTTL: Duration(90 * time.Minute),
			AlwaysGrantTTL: Duration(1500 * time.Millisecond), GuestTools: []string{}, PrivateEgress: "allow", Taint: "value", TOTP: "high",
		},
		Workspace: Workspace{
			Roots: []Root{
				{Name: "main", Path: filepath.Join(dir, "main"), Access: AccessReadWrite},
				{Name: "odd-1", Path: filepath.Join(dir, `sp ace "q" \b 世界 #x`), Access: AccessReadOnly},
			},
			MaxFileBytes: 1, MaxCheckpoints: 1, MaxCheckpointBytes: 3 << 20,
		},
		Files:   Files{Sensitive: []string{"*.token", "deploy/prod.yaml"}, AllowSensitive: []string{"fixtures/.env", "odd-1:keys"}},
		Sandbox: Sandbox{Backend: "bwrap"},
		Commands: Commands{Allow: []string{"python3", "/usr/local/bin/my-tool"}, Unknown: "ask", HostTools: []string{"tools/run-on-open.sh", ".zed/"}, Env: []string{"GOPATH"},
			Timeout: Duration(5 * time.Minute), MaxOutputBytes: 1000, Path: []string{bin}, WarmCache: ptrTo(false)},
		Egress:    Egress{Allow: []string{"http://127.0.0.1:3900"}, SearchURL: "https://search.example/rss?q={query}"},
		Memory:    Memory{Capture: "off", CaptureEvery: 7, CaptureIdle: Duration(3 * time.Minute), Review: "off", ReviewDay: "friday"},
		Artifacts: Artifacts{Keep: Duration(36 * time.Hour)},
		Gateway:   Gateway{Addr: "[::1]:9000", ApprovalWait: Duration(90 * time.Second), PingInterval: Duration(500 * time.Millisecond)},
		Agent:     Agent{MaxCalls: 3, MaxUnits: 5, ReserveUnits: 0, MaxTokens: 7000, GuestMaxTokens: 900, GuestMaxCalls: 2},
		Automation: Automation{MaxMode: "autopilot", Mode: "smart", TZ: "Europe/Paris", ApprovalWait: Duration(time.Minute), MinInterval: Duration(10 * time.Minute),
			MaxRunsPerDay: 3, DailyTokens: 5000, CatchUpWindow: Duration(2 * time.Hour), Expiry: Duration(48 * time.Hour), WarnBefore: Duration(3 * time.Hour),
			MaxCalls: 2, MaxTurns: 3, MaxTokens: 4000, MaxRuntime: Duration(90 * time.Second)},
		Monitor:   Monitor{Enabled: ptrTo(false), Window: Duration(90 * time.Minute), DeniedRepeat: 0, FetchBurst: 1, WriteSpread: 256},
		Browser:   Browser{Enabled: true, ChromePath: "/opt/chromium/chrome", IdleTimeout: Duration(3 * time.Minute), SnapshotBytes: 8192},
		Telemetry: Telemetry{Endpoint: "http://10.0.0.5:4318/otlp", ServiceName: "homard \"home\" 世界", HeadersSecret: "otel-key", LogRequests: ptrTo(false)},
		Channels: channels(
			"telegram", Channel{Enabled: true, TokenSecret: "tg-bot", Send: true, APIBase: "http://127.0.0.1:8081", Groups: []string{"-1001234567890"}},
			"feishu", Channel{Enabled: true, TokenSecret: "feishu", AppID: "cli_a1b2", Mode: ModeCallback, EncryptKeySecret: "feishu-encrypt"},
		),
		Rules: []Rule{
			{ID: "a.b:c-d_e", Tool: "write_file", Path: "notes/**/*.md", Effect: "ask"},
			{ID: "no-path", Tool: "run", Effect: "deny"},
			{ID: "web", Tool: "http_get", Host: "*.example.org", Effect: "allow"},
		},
	}
	got, data := renderLoad(t, want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load(Render(c)) =\n%+v\nwant\n%+v\nrendered:\n%s", got, want, data)
	}
}

// TestRenderCommentsEveryKey checks that each key line follows a comment and
// that every field of every table appears, so a new field cannot be added
// to Config without being rendered.
func TestRenderCommentsEveryKey(t *testing.T) {
	data, err := Render(Default(Paths{WorkspaceDir: "/ws"}))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	keyLine := regexp.MustCompile(`^([a-z_]+) = `)
	seen := make(map[string]bool)
	for i, l := range lines {
		m := keyLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		seen[m[1]] = true
		if i == 0 || !strings.HasPrefix(lines[i-1], "#") {
			t.Errorf("line %d %q has no comment above it", i+1, l)
		}
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[Config](), reflect.TypeFor[Model](), reflect.TypeFor[Permissions](), reflect.TypeFor[Workspace](), reflect.TypeFor[Files](),
		reflect.TypeFor[Sandbox](), reflect.TypeFor[Commands](), reflect.TypeFor[Egress](), reflect.TypeFor[Memory](), reflect.TypeFor[Artifacts](), reflect.TypeFor[Gateway](),
		reflect.TypeFor[Agent](), reflect.TypeFor[Automation](), reflect.TypeFor[Models](), reflect.TypeFor[Roles](), reflect.TypeFor[Monitor](), reflect.TypeFor[Telemetry](), reflect.TypeFor[Store](),
	} {
		for _, k := range tagNames(typ) {
			switch k {
			case "models":
				if !strings.Contains(string(data), "\n[models.roles]\n") {
					t.Errorf("Render does not write the table [models.roles]")
				}
				continue
			case "roles":
				continue // its keys are checked as Roles' below
			case "rules", "channels", "mcp", "recipes":
				continue // rules: an array of tables, checked below; channels and mcp: written when set (TestRenderCustomRoundTrips); recipes: TestRecipesValidation
			case "model", "permissions", "workspace", "files", "sandbox", "commands", "egress", "memory", "artifacts", "gateway", "agent", "automation", "monitor", "browser", "telemetry", "store":
				if !strings.Contains(string(data), "\n["+k+"]\n") {
					t.Errorf("Render does not write the table [%s]", k)
				}
				continue
			}
			if !seen[k] {
				t.Errorf("Render does not write %s.%s", typ.Name(), k)
			}
		}
	}
	for _, k := range tagNames(reflect.TypeFor[Rule]()) {
		if !strings.Contains(string(data), "\n# "+k+" = ") {
			t.Errorf("the example rule does not show %q", k)
		}
	}
	for _, k := range tagNames(reflect.TypeFor[Recipe]()) {
		if !strings.Contains(string(data), "\n# "+k+" = ") {
			t.Errorf("the example recipe does not show %q", k)
		}
	}
	for _, k := range tagNames(reflect.TypeFor[MCPServer]()) {
		if !strings.Contains(string(data), "\n# "+k+" = ") {
			t.Errorf("the example MCP server does not show %q", k)
		}
	}
	for _, k := range tagNames(reflect.TypeFor[Root]()) {
		if !strings.Contains(string(data), k+" = ") {
			t.Errorf("roots do not show %q", k)
		}
	}
}

// TestRenderExampleRuleIsValid uncomments the example rule and loads it.
func TestRenderExampleRuleIsValid(t *testing.T) {
	data, err := Render(Default(Paths{WorkspaceDir: "/ws"}))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i := strings.Index(doc, "# [[rules]]")
	if i < 0 {
		t.Fatalf("no commented-out example rule in\n%s", doc)
	}
	doc = doc[:i] + strings.ReplaceAll(doc[i:], "# ", "")
	c, err := Load(writeConfig(t, doc))
	if err != nil {
		t.Fatalf("Load(uncommented example): %v\n%s", err, doc)
	}
	want := []Rule{
		{ID: "read-notes", Tool: "read_file", Path: "notes/**", Effect: "allow"},
		{ID: "git-status", Tool: "run_command", Effect: "allow", Command: []string{"/usr/bin/git", "status", "**"}},
		{ID: "weather", Tool: "http_get", Effect: "allow", Host: "api.weather.example"},
	}
	if !reflect.DeepEqual(c.Rules, want) {
		t.Errorf("example rule loaded as %+v; want %+v", c.Rules, want)
	}
}

func TestRenderRefusesInvalid(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"mode", func(c *Config) { c.Permissions.Mode = "fast" }, "permissions.mode"},
		{"relative root", func(c *Config) { c.Workspace.Roots[0].Path = "ws" }, `workspace.roots[0].path = "ws": want an absolute path`},
		{"no roots", func(c *Config) { c.Workspace.Roots = nil }, "workspace.roots"},
		{"empty root path", func(c *Config) { c.Workspace.Roots[0].Path = "" }, "workspace.roots[0].path is empty"},
		{"newline in owner", func(c *Config) { c.Owner = "a\nb" }, "owner"},
		{"not UTF-8", func(c *Config) { c.Workspace.Roots[0].Path = "/ws/\xff" }, "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default(Paths{WorkspaceDir: "/ws"})
			tt.change(c)
			data, err := Render(c)
			if err == nil {
				t.Fatalf("Render(%s) succeeded:\n%s", tt.name, data)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Render(%s) error = %q; want it to contain %q", tt.name, err, tt.want)
			}
		})
	}
}

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{`plain`, `"plain"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"tab\tnl\n", `"tab\tnl\n"`},
		{"nul\x00del\x7f", `"nul\u0000del\u007F"`},
		{"世界", `"世界"`},
	}
	for _, tt := range tests {
		if got := quote(tt.in); got != tt.want {
			t.Errorf("quote(%q) = %s; want %s", tt.in, got, tt.want)
		}
	}
	// What quote writes, the TOML decoder must read back unchanged.
	for _, tt := range tests {
		doc := "owner = " + quote(tt.in) + "\n"
		var c Config
		if _, err := toml.Decode(doc, &c); err != nil || c.Owner != tt.in {
			t.Errorf("toml.Decode(%q) owner = %q, %v; want %q", doc, c.Owner, err, tt.in)
		}
	}
}

// TestStoreURL: store.url holds no password (its twin, a URL without one,
// loads), HOMARD_STORE_URL takes its place, and the name a message prints
// never holds the URL's user or password.
func TestStoreURL(t *testing.T) {
	c := Default(Paths{})
	var ps problems
	c.Store.URL = "postgres://homard:hunter2@db.example/homard"
	validateStore(&c.Store, &ps)
	c.Store.URL = "postgres://homard@db.example/homard?password=hunter2"
	validateStore(&c.Store, &ps)
	c.Store.URL = "mysql://db.example/homard"
	validateStore(&c.Store, &ps)
	if len(ps) != 3 || !strings.Contains(ps[0], "PGPASSWORD") {
		t.Errorf("problems = %q; want three, the first naming PGPASSWORD", ps)
	}
	ps = nil
	c.Store.URL = "postgres://homard@db.example/homard"
	validateStore(&c.Store, &ps)
	if len(ps) != 0 {
		t.Errorf("a URL without a password: %q", ps)
	}
	if w, n := c.StoreURL("/d/homard.db", ""); w != c.Store.URL || n != "PostgreSQL db.example/homard" {
		t.Errorf("StoreURL = %q, %q", w, n)
	}
	override := "postgres://u:secret@other:5433/x"
	if w, n := c.StoreURL("/d/homard.db", override); w != override || strings.Contains(n, "secret") || strings.Contains(n, "u:") {
		t.Errorf("StoreURL with an override = %q, %q", w, n)
	}
	c.Store.URL = ""
	if w, n := c.StoreURL("/d/homard.db", ""); w != "/d/homard.db" || n != w {
		t.Errorf("StoreURL unset = %q, %q; want the SQLite file", w, n)
	}
}
