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

// baseConfig is a valid file that sets every key. Cases edit one line.
const baseConfig = `owner = "owner"

[model]
provider = "openai"
base_url = "https://api.openai.com/v1"
name = "gpt-4o-mini"
api_key_env = "OPENAI_API_KEY"

[permissions]
mode = "smart"
approval_ttl = "30m"
session_grant_ttl = "12h"
always_grant_ttl = "720h"
guest_tools = ["current_time"]

[workspace]
roots = [{ name = "main", path = "/ws/main" }]
max_file_bytes = 1024
max_checkpoints = 10
max_checkpoint_bytes = 4096

[memory]
capture = "on"

[[rules]]
id = "r1"
tool = "read_file"
path = "notes/**"
effect = "allow"
`

// defaultGateway is [gateway] when the file leaves it out.
var defaultGateway = Gateway{Addr: DefaultGatewayAddr, ApprovalWait: Duration(30 * time.Minute), PingInterval: Duration(15 * time.Second)}

// edit returns baseConfig with old replaced by new, failing the test if old
// is absent, so that no case silently tests the unedited file.
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(baseConfig, old) {
		t.Fatalf("baseConfig does not contain %q", old)
	}
	return strings.Replace(baseConfig, old, new, 1)
}

// writeConfig writes content to a fresh config.toml with mode 0600.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The documented defaults of the run-limit sections, spelled out.
var (
	defaultSandbox  = Sandbox{Backend: "auto"}
	defaultCommands = Commands{Allow: []string{}, Unknown: "sandbox", HostTools: []string{}, Env: []string{}, Timeout: Duration(60 * time.Second), MaxOutputBytes: 64 << 10, Path: []string{}, WarmCache: ptrTo(true)}
	defaultModels   = Models{Roles: Roles{Main: "main", Planner: "main", Worker: "main", Capture: "main", Summary: "main"}, Named: map[string]Model{}}
	defaultMemory   = Memory{Capture: "on", CaptureEvery: 4, CaptureIdle: Duration(10 * time.Minute), Review: "on", ReviewDay: "sunday"}
	defaultAgent    = Agent{MaxCalls: 24, MaxUnits: 48, ReserveUnits: 8, GuestMaxTokens: 20000, GuestMaxCalls: 4, ExtensionToolBudget: 1500}
	defaultEgress   = Egress{Allow: []string{}, SearchURL: "https://www.bing.com/search?format=rss&q={query}"}
	defaultFiles    = Files{Sensitive: []string{}, AllowSensitive: []string{}}
	// defaultAutomation is written out, not taken from the constants, so
	// a changed default is a visible change here.
	defaultAutomation = Automation{MaxMode: "smart", Mode: "safe", ApprovalWait: Duration(30 * time.Minute), MinInterval: Duration(5 * time.Minute),
		MaxRunsPerDay: 48, DailyTokens: 1000000, CatchUpWindow: Duration(6 * time.Hour), Expiry: Duration(240 * time.Hour), WarnBefore: Duration(24 * time.Hour),
		MaxCalls: 16, MaxTurns: 12, MaxTokens: 60000, MaxRuntime: Duration(10 * time.Minute)}
	defaultMonitor   = Monitor{Enabled: ptrTo(true), Window: Duration(10 * time.Minute), DeniedRepeat: 3, FetchBurst: 3, WriteSpread: 5}
	defaultBrowser   = Browser{IdleTimeout: Duration(10 * time.Minute), SnapshotBytes: 4096}
	defaultTelemetry = Telemetry{ServiceName: "homard", LogRequests: ptrTo(true)}
)

func TestLoadBase(t *testing.T) {
	path := writeConfig(t, baseConfig)
	got, err := Load(path)
	if err != nil {
		t.Fatalf("Load(baseConfig): %v", err)
	}
	want := &Config{
		Owner: "owner", Lang: "auto",
		Model: Model{Provider: "openai", BaseURL: "https://api.openai.com/v1", Name: "gpt-4o-mini", APIKeyEnv: "OPENAI_API_KEY", ContextTokens: DefaultContextTokens, FirstEventTimeout: Duration(180 * time.Second), IdleTimeout: Duration(90 * time.Second), RequestTimeout: Duration(10 * time.Minute), ConnectTimeout: Duration(30 * time.Second)},
		Permissions: Permissions{
			Mode: "smart", ApprovalTTL: Duration(30 * time.Minute), SessionGrantTTL: Duration(12 * time.Hour),
			AlwaysGrantTTL: Duration(720 * time.Hour), GuestTools: []string{"current_time"}, PrivateEgress: "ask", Taint: "session", TOTP: "off",
		},
		Workspace: Workspace{
			Roots:        []Root{{Name: "main", Path: filepath.FromSlash("/ws/main"), Access: AccessReadWrite}},
			MaxFileBytes: 1024, MaxCheckpoints: 10, MaxCheckpointBytes: 4096,
		},
		Models: defaultModels,
		Files:  defaultFiles, Sandbox: defaultSandbox, Commands: defaultCommands, Egress: defaultEgress, Memory: defaultMemory, Artifacts: Artifacts{Keep: Duration(720 * time.Hour)}, Gateway: defaultGateway, Agent: defaultAgent, Automation: defaultAutomation, Monitor: defaultMonitor, Browser: defaultBrowser, Telemetry: defaultTelemetry,
		Channels: channels(),
		Rules:    []Rule{{ID: "r1", Tool: "read_file", Path: "notes/**", Effect: "allow"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load(baseConfig) =\n%+v\nwant\n%+v", got, want)
	}
}

func TestLoadFillsDefaults(t *testing.T) {
	path := writeConfig(t, `
[model]
provider = "anthropic"
[workspace]
roots = [{ name = "main", path = "/ws" }]
`)
	got, err := Load(path)
	if err != nil {
		t.Fatalf("Load(minimal): %v", err)
	}
	want := &Config{
		Owner: "owner", Lang: "auto",
		Model: Model{Provider: "anthropic", BaseURL: "https://api.anthropic.com", Name: "claude-sonnet-4-5", APIKeyEnv: "ANTHROPIC_API_KEY", ContextTokens: DefaultContextTokens, FirstEventTimeout: Duration(180 * time.Second), IdleTimeout: Duration(90 * time.Second), RequestTimeout: Duration(10 * time.Minute), ConnectTimeout: Duration(30 * time.Second)},
		Permissions: Permissions{
			Mode: "smart", ApprovalTTL: Duration(30 * time.Minute), SessionGrantTTL: Duration(12 * time.Hour),
			AlwaysGrantTTL: Duration(720 * time.Hour), GuestTools: []string{"current_time"}, PrivateEgress: "ask", Taint: "session", TOTP: "off",
		},
		Workspace: Workspace{
			Roots:        []Root{{Name: "main", Path: filepath.FromSlash("/ws"), Access: AccessReadWrite}},
			MaxFileBytes: 8 << 20, MaxCheckpoints: 100, MaxCheckpointBytes: 64 << 20,
		},
		Models: defaultModels,
		Files:  defaultFiles, Sandbox: defaultSandbox, Commands: defaultCommands, Egress: defaultEgress, Memory: defaultMemory, Artifacts: Artifacts{Keep: Duration(720 * time.Hour)}, Gateway: defaultGateway, Agent: defaultAgent, Automation: defaultAutomation, Monitor: defaultMonitor, Browser: defaultBrowser, Telemetry: defaultTelemetry,
		Channels: channels(),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load(minimal) =\n%+v\nwant\n%+v", got, want)
	}
}

func TestLoadEmptyGuestToolsMeansNone(t *testing.T) {
	path := writeConfig(t, edit(t, `guest_tools = ["current_time"]`, `guest_tools = []`))
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(c.Permissions.GuestTools) != 0 {
		t.Errorf("guest_tools = [] loaded as %q; want none", c.Permissions.GuestTools)
	}
}

func TestLoadUnknownKeys(t *testing.T) {
	const (
		top    = "config_version, owner, lang, model, models, permissions, workspace, files, sandbox, commands, egress, memory, artifacts, gateway, agent, automation, monitor, browser, telemetry, store, channels, mcp, rules"
		model  = "provider, base_url, name, api_key_env, api_key_secret, context_tokens"
		perms  = "mode, approval_ttl, session_grant_ttl, always_grant_ttl, guest_tools, private_egress"
		wspace = "roots, max_file_bytes, max_checkpoints, max_checkpoint_bytes"
		rule   = "id, tool, path, effect"
	)
	tests := []struct {
		name, old, new string
		// at is ":line:col" of the unknown key in the file; key the key
		// as named; suggest the "did you mean" ("" for none).
		at, key, suggest, allowed string
	}{
		{"top level", `owner = "owner"`, "owner = \"owner\"\nownr = \"x\"", ":2:1", "ownr", "owner", "at the top level: " + top},
		{"quoted dotted key", `owner = "owner"`, "owner = \"owner\"\n\"permissions.mode\" = \"yolo\"", ":2:1", `"permissions.mode"`, "", top},
		{"unknown table", `[model]`, "[telegram]\ntoken = \"x\"\n[model]", ":3:1", "telegram", "", top},
		{"misspelt table", `[permissions]`, "[permission]", ":9:1", "permission", "[permissions]", "at the top level: " + top},
		{"model", `name = "gpt-4o-mini"`, "name = \"gpt-4o-mini\"\nmodel_name = \"x\"", ":7:1", "model.model_name", "", "in [model]: " + model},
		{"model subtable", `[permissions]`, "[model.extra]\nx = 1\n[permissions]", ":9:1", "model.extra", "", model},
		{"permissions", `mode = "smart"`, "modee = \"smart\"", ":10:1", "permissions.modee", "mode", "in [permissions]: " + perms},
		{"swapped letters", `mode = "smart"`, "  mdoe = \"smart\"", ":10:3", "permissions.mdoe", "mode", "in [permissions]: " + perms},
		{"dotted key", `capture = "on"`, "capture = \"on\"\nagent.max_call = 3", ":24:1", "memory.agent", "", "in [memory]: capture"},
		{"workspace", `max_checkpoints = 10`, "max_checkpoint = 10", ":19:1", "workspace.max_checkpoint", "max_checkpoints", "in [workspace]: " + wspace},
		{"root", `path = "/ws/main" }`, `path = "/ws/main", writable = true }`, ":17:1", "workspace.roots.writable", "", "in [workspace.roots]: name, path"},
		{"rule", `effect = "allow"`, "effekt = \"allow\"", ":29:1", "rules.effekt", "effect", "in [rules]: " + rule},
		{"control character", `mode = "smart"`, `"mo\u001bde" = "smart"`, ":10:1", `permissions."mo\u001bde"`, "mode", perms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, edit(t, tt.old, tt.new))
			_, err := Load(path)
			if err == nil {
				t.Fatalf("Load with %q accepted; want unknown key %s rejected", tt.new, tt.key)
			}
			msg := err.Error()
			wants := []string{path + tt.at + ": ", "unknown key " + tt.key + ":", tt.allowed}
			if tt.suggest != "" {
				wants = append(wants, ": did you mean "+tt.suggest+"? allowed")
			} else if strings.Contains(msg, "did you mean") {
				t.Errorf("Load with %q: error %q suggests a key; want none", tt.new, msg)
			}
			for _, want := range wants {
				if !strings.Contains(msg, want) {
					t.Errorf("Load with %q: error %q does not contain %q", tt.new, msg, want)
				}
			}
			if n := strings.Count(msg, "unknown key"); n != 1 {
				t.Errorf("Load with %q: %d unknown keys reported in %q; want 1", tt.new, n, msg)
			}
			if strings.ContainsFunc(msg, func(r rune) bool { return r < 0x20 && r != '\n' }) {
				t.Errorf("Load with %q: error %q holds a control character", tt.new, msg)
			}
		})
	}
}

func TestClosest(t *testing.T) {
	allowed := []string{"mode", "approval_ttl", "session_grant_ttl", "max_checkpoints", "max_checkpoint_bytes"}
	tests := []struct {
		bad, want string
	}{
		{"mdoe", "mode"},
		{"Mode", "mode"},
		{"mod", "mode"},
		{"modes", "mode"},
		{"md", ""},  // 2 edits: too far for a short name
		{"xyz", ""}, // nothing alike
		{"aproval_tl", "approval_ttl"},
		{"max_checkpoint", "max_checkpoints"},
		{"max_checkpoints_bytes", "max_checkpoint_bytes"},
		{strings.Repeat("x", 1<<16), ""},
	}
	for _, tt := range tests {
		got, ok := closest(tt.bad, allowed)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("closest(%.20q) = %q, %v; want %q", tt.bad, got, ok, tt.want)
		}
	}
}

func TestLoadBadValues(t *testing.T) {
	tests := []struct {
		name, old, new string
		want           []string // substrings of the error, after the file name
		secret         string   // must not appear in the error
	}{
		{"empty owner", `owner = "owner"`, `owner = ""`, []string{`owner = "": want a non-empty id`}, ""},
		{"unknown lang", `owner = "owner"`, "owner = \"owner\"\nlang = \"fr\"", []string{`lang = "fr": want one of auto, en, zh`}, ""},
		{"owner with space", `owner = "owner"`, `owner = "a b"`, []string{`owner = "a b"`}, ""},
		{"provider", `provider = "openai"`, `provider = "gemini"`, []string{`model.provider = "gemini": want one of openai, anthropic, deepseek, openrouter, moonshot, qwen, zhipu, minimax, siliconflow, volcengine, hunyuan, qianfan, ollama, vllm, llamacpp`}, ""},
		{"base_url scheme", `base_url = "https://api.openai.com/v1"`, `base_url = "ftp://h/v1"`,
			[]string{`model.base_url = "ftp://h/v1": want an absolute http or https URL`}, ""},
		{"base_url relative", `base_url = "https://api.openai.com/v1"`, `base_url = "api.openai.com/v1"`,
			[]string{`model.base_url = "api.openai.com/v1": want an absolute http or https URL`}, ""},
		{"base_url query", `base_url = "https://api.openai.com/v1"`, `base_url = "https://h/v1?k=1"`,
			[]string{`model.base_url = "https://h/v1?k=1": want a URL without a query`}, ""},
		{"base_url credentials", `base_url = "https://api.openai.com/v1"`, `base_url = "https://u:hunter2@h/v1"`,
			[]string{"model.base_url", "credentials do not belong in the URL"}, "hunter2"},
		{"api_key_env holds a key", `api_key_env = "OPENAI_API_KEY"`, `api_key_env = "sk-proj-abc123"`,
			[]string{"model.api_key_env: want the name of an environment variable", "not the key itself"}, "sk-proj-abc123"},
		{"api_key_secret holds a key", `api_key_env = "OPENAI_API_KEY"`, "api_key_env = \"OPENAI_API_KEY\"\napi_key_secret = \"sk-proj-Abc/123\"",
			[]string{"model.api_key_secret: want the name of a vault secret", "not the key itself"}, "sk-proj-Abc/123"},
		{"api_key_env lower case", `api_key_env = "OPENAI_API_KEY"`, `api_key_env = "openai_key"`,
			[]string{"model.api_key_env: want the name of an environment variable"}, ""},
		{"context_tokens too small", `api_key_env = "OPENAI_API_KEY"`, "api_key_env = \"OPENAI_API_KEY\"\ncontext_tokens = 1000",
			[]string{"model.context_tokens = 1000: want at least 4000"}, ""},
		{"context_tokens zero", `api_key_env = "OPENAI_API_KEY"`, "api_key_env = \"OPENAI_API_KEY\"\ncontext_tokens = 0",
			[]string{"model.context_tokens = 0: want at least 4000"}, ""},
		{"connect_timeout zero", `api_key_env = "OPENAI_API_KEY"`, "api_key_env = \"OPENAI_API_KEY\"\nconnect_timeout = \"0s\"",
			[]string{`model.connect_timeout = "0s": want a positive duration`}, ""},
		{"request_timeout negative", `api_key_env = "OPENAI_API_KEY"`, "api_key_env = \"OPENAI_API_KEY\"\nrequest_timeout = \"-1s\"",
			[]string{`model.request_timeout = "-1s": want a duration such as "10m", or "0s" for no overall limit`}, ""},
		{"memory capture", `capture = "on"`, `capture = "yes"`,
			[]string{`memory.capture = "yes": want on or off`}, ""},
		{"memory capture_every too many", `capture = "on"`, "capture = \"on\"\ncapture_every = 51",
			[]string{`memory.capture_every = 51: want a number of turns from 1 to 50`}, ""},
		{"memory capture_every negative", `capture = "on"`, "capture = \"on\"\ncapture_every = -1",
			[]string{`memory.capture_every = -1: want a number of turns from 1 to 50`}, ""},
		{"memory capture_idle too short", `capture = "on"`, "capture = \"on\"\ncapture_idle = \"30s\"",
			[]string{`memory.capture_idle = "30s": want a duration of at least "1m"`}, ""},
		{"memory review neither on nor off", `capture = "on"`, "capture = \"on\"\nreview = \"weekly\"",
			[]string{`memory.review = "weekly": want on or off`}, ""},
		{"memory review_day unknown", `capture = "on"`, "capture = \"on\"\nreview_day = \"sun\"",
			[]string{`memory.review_day = "sun": want one of sunday, monday`}, ""},
		{"sandbox backend", `owner = "owner"`, "owner = \"owner\"\n[sandbox]\nbackend = \"docker\"",
			[]string{`sandbox.backend = "docker": want one of auto, bwrap, landlock, host`}, ""},
		{"commands allow shell syntax", `owner = "owner"`, "owner = \"owner\"\n[commands]\nallow = [\"sh -c\"]",
			[]string{`commands.allow[0] = "sh -c": want a program name or a clean absolute path`}, ""},
		{"commands unknown", `owner = "owner"`, "owner = \"owner\"\n[commands]\nunknown = \"run\"",
			[]string{`commands.unknown = "run": want sandbox`}, ""},
		{"commands host_tools absolute", `owner = "owner"`, "owner = \"owner\"\n[commands]\nhost_tools = [\"/etc/x\"]",
			[]string{`commands.host_tools[0] = "/etc/x": want a relative pattern`}, ""},
		{"commands host_tools bad glob", `owner = "owner"`, "owner = \"owner\"\n[commands]\nhost_tools = [\"a[\"]",
			[]string{`commands.host_tools[0] = "a[": not a valid glob`}, ""},
		{"commands env", `owner = "owner"`, "owner = \"owner\"\n[commands]\nenv = [\"PATH=/x\"]",
			[]string{`commands.env[0] = "PATH=/x"`}, ""},
		{"commands timeout", `owner = "owner"`, "owner = \"owner\"\n[commands]\ntimeout = \"0s\"",
			[]string{`commands.timeout = "0s": want a positive duration`}, ""},
		{"egress allow wide", `owner = "owner"`, "owner = \"owner\"\n[egress]\nallow = [\"http://10.0.0.0/8\"]",
			[]string{`egress.allow[0] = "http://10.0.0.0/8": want an exact endpoint`}, ""},
		{"files sensitive absolute", `owner = "owner"`, "owner = \"owner\"\n[files]\nsensitive = [\"/etc/x\"]",
			[]string{`files.sensitive[0] = "/etc/x": want a path relative to a workspace root`}, ""},
		{"files allow_sensitive glob-free and clean", `owner = "owner"`, "owner = \"owner\"\n[files]\nallow_sensitive = [\"../.env\", \"nope:.env\"]",
			[]string{`files.allow_sensitive[0] = "../.env": want one clean path`, `files.allow_sensitive[1] = "nope:.env": no workspace root is named "nope"`}, ""},
		{"egress search url", `owner = "owner"`, "owner = \"owner\"\n[egress]\nsearch_url = \"http://s.example/?q=x\"",
			[]string{`egress.search_url = "http://s.example/?q=x": want an https URL containing {query}`}, ""},
		{"rule command first word", `owner = "owner"`, "owner = \"owner\"\n[[rules]]\nid = \"g\"\ntool = \"run_command\"\neffect = \"allow\"\ncommand = [\"git\", \"status\"]",
			[]string{"rules[0].command", "absolute path"}, ""},
		{"rule command inner **", `owner = "owner"`, "owner = \"owner\"\n[[rules]]\nid = \"g\"\ntool = \"run_command\"\neffect = \"allow\"\ncommand = [\"/usr/bin/git\", \"**\", \"push\"]",
			[]string{"rules[0].command", "may only be the last element"}, ""},
		{"artifacts keep zero", `owner = "owner"`, "owner = \"owner\"\n[artifacts]\nkeep = \"0s\"",
			[]string{`artifacts.keep = "0s": want a duration of at least "1h"`}, ""},
		{"artifacts keep short", `owner = "owner"`, "owner = \"owner\"\n[artifacts]\nkeep = \"30m\"",
			[]string{`artifacts.keep = "30m": want a duration of at least "1h"`}, ""},
		{"rule host with path", `owner = "owner"`, "owner = \"owner\"\n[[rules]]\nid = \"w\"\ntool = \"http_get\"\neffect = \"allow\"\npath = \"a/**\"\nhost = \"a.example\"",
			[]string{"rules[0]: path and host do not go together"}, ""},
		{"rule host with scheme", `owner = "owner"`, "owner = \"owner\"\n[[rules]]\nid = \"w\"\ntool = \"http_get\"\neffect = \"allow\"\nhost = \"https://a.example\"",
			[]string{`rules[0].host = "https://a.example": want a lowercase host name`}, ""},
		{"rule host bare star", `owner = "owner"`, "owner = \"owner\"\n[[rules]]\nid = \"w\"\ntool = \"http_get\"\neffect = \"allow\"\nhost = \"*\"",
			[]string{`rules[0].host = "*": want a lowercase host name`}, ""},
		{"rule host upper case", `owner = "owner"`, "owner = \"owner\"\n[[rules]]\nid = \"w\"\ntool = \"http_get\"\neffect = \"allow\"\nhost = \"API.example\"",
			[]string{`rules[0].host = "API.example": want a lowercase host name`}, ""},
		{"rule host star tld", `owner = "owner"`, "owner = \"owner\"\n[[rules]]\nid = \"w\"\ntool = \"http_get\"\neffect = \"allow\"\nhost = \"*.com\"",
			[]string{`rules[0].host = "*.com": want a lowercase host name`}, ""},
		{"rule host with port", `owner = "owner"`, "owner = \"owner\"\n[[rules]]\nid = \"w\"\ntool = \"http_get\"\neffect = \"allow\"\nhost = \"a.example:443\"",
			[]string{`rules[0].host = "a.example:443": want a lowercase host name`}, ""},
		{"gateway addr", `owner = "owner"`, "owner = \"owner\"\n[gateway]\naddr = \"localhost\"",
			[]string{`gateway.addr = "localhost": want host:port`}, ""},
		{"gateway approval_wait", `owner = "owner"`, "owner = \"owner\"\n[gateway]\napproval_wait = \"0s\"",
			[]string{`gateway.approval_wait = "0s": want a positive duration`}, ""},
		{"gateway ping_interval too long", `owner = "owner"`, "owner = \"owner\"\n[gateway]\nping_interval = \"1m\"",
			[]string{`gateway.ping_interval = "1m": want a positive duration of at most "15s"`}, ""},
		{"mode", `mode = "smart"`, `mode = "fast"`, []string{`permissions.mode = "fast": want one of safe, smart, autopilot, yolo`}, ""},
		{"empty mode", `mode = "smart"`, `mode = ""`, []string{`permissions.mode = "": want one of safe, smart, autopilot, yolo`}, ""},
		{"negative ttl", `approval_ttl = "30m"`, `approval_ttl = "-5m"`, []string{`permissions.approval_ttl = "-5m": want a positive duration`}, ""},
		{"zero ttl", `session_grant_ttl = "12h"`, `session_grant_ttl = "0s"`, []string{`permissions.session_grant_ttl = "0s": want a positive duration`}, ""},
		{"unparsable ttl", `always_grant_ttl = "720h"`, `always_grant_ttl = "forever"`,
			[]string{`permissions.always_grant_ttl: invalid duration "forever": want a duration such as "30m"`}, ""},
		{"private_egress", `guest_tools = ["current_time"]`, "guest_tools = [\"current_time\"]\nprivate_egress = \"never\"",
			[]string{`permissions.private_egress = "never": want ask`, `or allow`}, ""},
		{"private_egress case", `guest_tools = ["current_time"]`, "guest_tools = [\"current_time\"]\nprivate_egress = \"Allow\"",
			[]string{`permissions.private_egress = "Allow": want ask`}, ""},
		{"guest tool", `guest_tools = ["current_time"]`, `guest_tools = ["current_time", "Read File"]`,
			[]string{`permissions.guest_tools[1] = "Read File": want a tool name made of a-z, 0-9 and _`}, ""},
		{"no roots", `roots = [{ name = "main", path = "/ws/main" }]`, `roots = []`, []string{"workspace.roots is missing or empty"}, ""},
		{"missing roots", `roots = [{ name = "main", path = "/ws/main" }]`, ``, []string{"workspace.roots is missing or empty"}, ""},
		{"root name", `name = "main"`, `name = "Main"`, []string{`workspace.roots[0].name = "Main": want a name made of a-z, 0-9, _ and -`}, ""},
		{"duplicate root", `{ name = "main", path = "/ws/main" }`, `{ name = "main", path = "/ws/main" }, { name = "main", path = "/ws/b" }`,
			[]string{`workspace.roots[1].name = "main": names must be unique`}, ""},
		{"empty root path", `path = "/ws/main"`, `path = ""`, []string{"workspace.roots[0].path is empty"}, ""},
		{"root path of another user", `path = "/ws/main"`, `path = "~bob/ws"`, []string{`workspace.roots[0].path = "~bob/ws": "~user" paths are not supported`}, ""},
		{"zero max_file_bytes", `max_file_bytes = 1024`, `max_file_bytes = 0`, []string{"workspace.max_file_bytes = 0: want a positive number"}, ""},
		{"negative max_file_bytes", `max_file_bytes = 1024`, `max_file_bytes = -1`, []string{"workspace.max_file_bytes = -1: want a positive number"}, ""},
		{"zero max_checkpoints", `max_checkpoints = 10`, `max_checkpoints = 0`, []string{"workspace.max_checkpoints = 0: want a positive number"}, ""},
		{"zero max_checkpoint_bytes", `max_checkpoint_bytes = 4096`, `max_checkpoint_bytes = 0`, []string{"workspace.max_checkpoint_bytes = 0: want a positive number"}, ""},
		{"wrong type", `max_checkpoints = 10`, `max_checkpoints = "ten"`, []string{"workspace.max_checkpoints", "incompatible types"}, ""},
		{"rule without id", `id = "r1"`, ``, []string{"rules[0].id is missing"}, ""},
		{"rule id with space", `id = "r1"`, `id = "r 1"`, []string{`rules[0].id = "r 1": want a name made of`}, ""},
		{"duplicate rule id", `effect = "allow"`, "effect = \"allow\"\n[[rules]]\nid = \"r1\"\ntool = \"x\"\neffect = \"deny\"",
			[]string{`rules[1].id = "r1": ids must be unique`}, ""},
		{"rule tool", `tool = "read_file"`, `tool = "read-file"`, []string{`rules[0].tool = "read-file": want a tool name made of a-z, 0-9 and _`}, ""},
		{"rule without tool", `tool = "read_file"`, ``, []string{`rules[0].tool = "": want a tool name`}, ""},
		{"rule effect", `effect = "allow"`, `effect = "maybe"`, []string{`rules[0].effect = "maybe": want one of allow, ask, deny`}, ""},
		{"rule path dotdot", `path = "notes/**"`, `path = "notes/../secrets/*"`, []string{`rules[0].path = "notes/../secrets/*": want no ".." path elements`}, ""},
		{"rule path dot", `path = "notes/**"`, `path = "./notes"`, []string{`rules[0].path = "./notes": want no "." path elements`}, ""},
		{"rule path absolute", `path = "notes/**"`, `path = "/etc/*"`, []string{`rules[0].path = "/etc/*": want a path relative to a workspace root`}, ""},
		{"rule path empty element", `path = "notes/**"`, `path = "notes//x"`, []string{`rules[0].path = "notes//x": want no empty path elements`}, ""},
		{"rule path bad pattern", `path = "notes/**"`, `path = "notes/[a"`, []string{`rules[0].path = "notes/[a": invalid pattern "[a"`}, ""},
		{"rule path backslash", `path = "notes/**"`, `path = 'notes\*'`, []string{`rules[0].path = "notes\\*": want "/" as the separator`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, edit(t, tt.old, tt.new))
			c, err := Load(path)
			if err == nil {
				t.Fatalf("Load with %q = %+v; want an error", tt.new, c)
			}
			msg := err.Error()
			// The first line at least must name the file.
			if !strings.HasPrefix(msg, path+":") {
				t.Errorf("Load with %q: error %q does not start with the file name %q", tt.new, msg, path)
			}
			for _, want := range tt.want {
				if !strings.Contains(msg, want) {
					t.Errorf("Load with %q: error\n%s\ndoes not contain\n%s", tt.new, msg, want)
				}
			}
			if tt.secret != "" && strings.Contains(msg, tt.secret) {
				t.Errorf("Load with %q: error %q leaks %q", tt.new, msg, tt.secret)
			}
		})
	}
}

func TestLoadReportsEveryProblem(t *testing.T) {
	doc := strings.Replace(edit(t, `mode = "smart"`, `mode = "fast"`), `effect = "allow"`, `effect = "maybe"`, 1)
	path := writeConfig(t, doc)
	_, err := Load(path)
	if err == nil {
		t.Fatal("Load with two bad values succeeded")
	}
	for _, want := range []string{
		path + `: permissions.mode = "fast"`,
		path + `: rules[0].effect = "maybe"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Load error %q does not contain %q", err, want)
		}
	}
}

func TestLoadSyntaxErrorPosition(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"unclosed table", "owner = \"o\"\n[model\nprovider = \"openai\"\n", ":2:7: "},
		{"bad duration", "[permissions]\n\napproval_ttl = \"soon\"\n", `:3:17: permissions.approval_ttl: invalid duration "soon"`},
		{"type mismatch", "owner = 5\n", `:1: owner: incompatible types`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.doc)
			_, err := Load(path)
			if err == nil {
				t.Fatalf("Load(%q) succeeded; want a syntax error", tt.doc)
			}
			if want := path + tt.want; !strings.Contains(err.Error(), want) {
				t.Errorf("Load(%q) error = %q; want it to contain %q", tt.doc, err, want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	_, err := Load(path)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load(missing) error = %v; want one wrapping fs.ErrNotExist", err)
	}
	for _, want := range []string{path, "homard setup"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Load(missing) error = %q; want it to contain %q", err, want)
		}
	}
}

func TestLoadFileChecks(t *testing.T) {
	path := writeConfig(t, baseConfig)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Errorf("Load(mode 0644) = %v; want success", err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("Load(mode 0666) error = %v; want a refusal suggesting chmod 600", err)
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Load(folder) error = %v; want a not-a-regular-file refusal", err)
	}
	big := writeConfig(t, baseConfig+"\n#"+strings.Repeat("x", maxFileSize))
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Load(huge file) error = %v; want a size refusal", err)
	}
}

func TestLoadRootPaths(t *testing.T) {
	getenv := env(map[string]string{"HOME": "/home/o"})
	tests := []struct {
		in   string
		want string // absolute; "DIR" stands for the config file's folder
	}{
		{"~/work", "/home/o/work"},
		{"~", "/home/o"},
		{"~/", "/home/o"},
		{"rel/work", "DIR/rel/work"},
		{"./a/../b", "DIR/b"},
		{"..", "PARENT"},
		{"a/~", "DIR/a/~"},
		{"/abs/x/", "/abs/x"},
		{"/abs/./x/../y", "/abs/y"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			path := writeConfig(t, edit(t, `path = "/ws/main"`, "path = "+quote(tt.in)))
			dir := filepath.Dir(path)
			c, err := load(path, getenv)
			if err != nil {
				t.Fatalf("load(root path %q): %v", tt.in, err)
			}
			want := strings.Replace(tt.want, "DIR", dir, 1)
			want = strings.Replace(want, "PARENT", filepath.Dir(dir), 1)
			want = filepath.FromSlash(want)
			if got := c.Workspace.Roots[0].Path; got != want {
				t.Errorf("root path %q loaded as %q; want %q", tt.in, got, want)
			}
		})
	}
}

func TestLoadTildeUsesHOME(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	path := writeConfig(t, edit(t, `path = "/ws/main"`, `path = "~/w"`))
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got, want := c.Workspace.Roots[0].Path, filepath.FromSlash("/home/someone/w"); got != want {
		t.Errorf("root path ~/w with HOME=/home/someone loaded as %q; want %q", got, want)
	}
}

func TestDurationText(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		out  string
	}{
		{"30m", 30 * time.Minute, "30m"},
		{"12h", 12 * time.Hour, "12h"},
		{"720h0m0s", 720 * time.Hour, "720h"},
		{"1h30m", 90 * time.Minute, "1h30m"},
		{"90s", 90 * time.Second, "1m30s"},
		{"1.5s", 1500 * time.Millisecond, "1.5s"},
	}
	for _, tt := range tests {
		var d Duration
		if err := d.UnmarshalText([]byte(tt.in)); err != nil {
			t.Errorf("UnmarshalText(%q): %v", tt.in, err)
			continue
		}
		if d.Std() != tt.want {
			t.Errorf("UnmarshalText(%q) = %v; want %v", tt.in, d.Std(), tt.want)
		}
		if d.String() != tt.out {
			t.Errorf("Duration(%v).String() = %q; want %q", tt.want, d.String(), tt.out)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
