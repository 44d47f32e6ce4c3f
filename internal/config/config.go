// Package config reads, validates, writes and locates homard's TOML
// configuration.
//
// Contract:
//   - ResolvePaths decides where config, data and workspace live: under one
//     folder (--home or HOMARD_HOME) or following XDG. It reads the environment
//     only through the getenv function it is given.
//   - Load returns a Config that is complete and valid or an error: keys the
//     file omits get their documented defaults, unknown keys are rejected, and
//     every error names the file, the key and what is allowed. Root paths in a
//     loaded Config are absolute and clean.
//   - Default, Render and Load round-trip: Load(Render(Default(p))) equals
//     Default(p).
//   - Files carry config_version (version.go). Load reads an older file as
//     migrated in memory and never writes; Migration.Apply writes the
//     migrated file after a backup. A newer version is refused.
//   - Init writes a new config file atomically with mode 0600 and creates the
//     data, checkpoint and workspace folders; it never creates the database.
//
// The package imports no other homard package, so mode, effect and provider
// names are repeated here as plain strings; internal/policy parses them again.
package config

import (
	"fmt"
	"strings"
	"time"
)

// Model providers homard has a wire client for.
const (
	ProviderOpenAI    = "openai"    // OpenAI or any OpenAI-compatible endpoint
	ProviderAnthropic = "anthropic" // Anthropic's Messages API
)

// DefaultRootName is the name of the workspace root Default creates.
const DefaultRootName = "main"

// Size defaults.
const (
	DefaultMaxFileBytes       = 8 << 20  // 8 MiB
	DefaultMaxCheckpoints     = 100      // checkpoints kept
	DefaultMaxCheckpointBytes = 64 << 20 // 64 MiB
	// DefaultContextTokens is model.context_tokens when the file omits it
	// and the provider has no size of its own (Preset.ContextTokens).
	DefaultContextTokens = 24000
	// MinContextTokens is the smallest model.context_tokens accepted: the
	// system prompt and tools alone take a few thousand.
	MinContextTokens = 4000
)

// Allowed values, in the order error messages list them. These duplicate
// internal/policy on purpose: config imports no internal package. The
// accepted providers are the presets (presets.go).
var (
	modes    = []string{"safe", "smart", "autopilot", "yolo"}
	effects  = []string{"allow", "ask", "deny"}
	backends = []string{"auto", "bwrap", "landlock", "host"}
)

// Config is the whole of config.toml but config_version, which is the
// file's format rather than a setting (version.go): a loaded Config is of
// CurrentVersion, and Render writes it. After Load no field is at its zero
// value except Rules, which may be empty. The "missing means" notes below
// describe a key the file leaves out; a key written with a zero or empty
// value is an error unless its note says otherwise, so "0" never silently
// means a default.
type Config struct {
	// Owner is the owner's id; approvals and grants are bound to it.
	// Missing means "owner".
	Owner string `toml:"owner"`
	// Lang is the language homard speaks to the owner: "auto" (from
	// LC_ALL, LC_MESSAGES or LANG), "en" or "zh" (internal/lang). A chat
	// whose platform reports the person's language follows it instead.
	// Missing means "auto".
	Lang string `toml:"lang"`
	// Model is the language model homard talks to.
	Model Model `toml:"model"`
	// Models are further named models and which model plays each role
	// (models.go). Missing means none: [model] plays every role.
	Models Models `toml:"models"`
	// Permissions sets how much the owner is asked.
	Permissions Permissions `toml:"permissions"`
	// Workspace says where tools may touch files and how much.
	Workspace Workspace `toml:"workspace"`
	// Files says which files in the workspace tools never touch.
	Files Files `toml:"files"`
	// Sandbox chooses how run_command confines programs.
	Sandbox Sandbox `toml:"sandbox"`
	// Commands sets what run_command may start and with what limits.
	Commands Commands `toml:"commands"`
	// Egress sets where the web tools may connect.
	Egress Egress `toml:"egress"`
	// Memory sets what homard learns about the owner on its own.
	Memory Memory `toml:"memory"`
	// Artifacts sets how long whole tool results are kept.
	Artifacts Artifacts `toml:"artifacts"`
	// Gateway configures `homard serve`, the HTTP API.
	Gateway Gateway `toml:"gateway"`
	// Agent sets the tool budget of one turn.
	Agent Agent `toml:"agent"`
	// Automation bounds scheduled tasks (homard task): defaults of a
	// task's budgets and the ceilings no task can pass (automation.go).
	Automation Automation `toml:"automation"`
	// Monitor configures the monitors over each session's recent tool
	// calls (monitor.go).
	Monitor Monitor `toml:"monitor"`
	// Browser configures the isolated browser (browser.go). Off unless
	// enabled.
	Browser Browser `toml:"browser"`
	// Telemetry configures the OpenTelemetry export (telemetry.go). Off
	// unless an endpoint is set.
	Telemetry Telemetry `toml:"telemetry"`
	// Store says where the state lives: SQLite (the default) or a shared
	// PostgreSQL database (store.go).
	Store Store `toml:"store"`
	// Channels are the chat channels serve runs, one per platform of
	// Platforms; every one is off unless enabled (channels.go).
	Channels Channels `toml:"channels"`
	// MCP lists the MCP servers whose tools are offered once trusted
	// (mcp.go). Missing means none.
	MCP MCP `toml:"mcp"`
	// Rules are operator rules, first match wins. Empty means no rules: the
	// permission mode alone decides.
	Rules []Rule `toml:"rules"`
}

// Agent configures the turn loop's tool budget. A turn that has spent it
// ends with the model's answer so far.
type Agent struct {
	// MaxCalls caps the tool calls of one turn. Must be positive; missing
	// means 24.
	MaxCalls int `toml:"max_calls"`
	// MaxUnits caps the weighted units of one turn's tool calls (a read
	// costs 1, a fetch or write 2, a command or send 3). Must be positive;
	// missing means 48.
	MaxUnits int `toml:"max_units"`
	// ReserveUnits is the last part of MaxUnits that only read-only tools
	// may spend, so a turn can still look at what it did. At least 0 (no
	// reserve) and below MaxUnits; missing means 8.
	ReserveUnits int `toml:"reserve_units"`
	// MaxTokens caps the model tokens (input + output, every model call
	// added up) of one owner turn; past it the turn ends with the answer
	// so far. At least 0; 0 (the default) means no limit.
	MaxTokens int `toml:"max_tokens"`
	// GuestMaxTokens caps the model tokens of one guest turn (a mention
	// in an allowed group): a stranger's message must not spend the
	// owner's money without a bound. Must be positive (a guest turn always
	// has a limit); missing means 20000.
	GuestMaxTokens int `toml:"guest_max_tokens"`
	// GuestMaxCalls caps the tool calls of one guest turn, in place of
	// MaxCalls. Must be positive; missing means 4.
	GuestMaxCalls int `toml:"guest_max_calls"`
	// ExtensionToolBudget is how many tokens of tool definitions the
	// extension tools (MCP servers' tools) may add to every request. While
	// they all fit they are offered directly; beyond it none is, and the
	// model finds and calls them through tool_search and call_tool. At
	// least 0; 0 means they are never offered directly; missing means 1500.
	ExtensionToolBudget int `toml:"extension_tool_budget"`
}

// Agent budget defaults, as internal/agent has them.
const (
	DefaultAgentMaxCalls     = 24
	DefaultAgentMaxUnits     = 48
	DefaultAgentReserveUnits = 8
	// A guest turn's budget: a few tool calls and tokens enough for a
	// short answer with some context.
	DefaultAgentGuestMaxTokens = 20000
	DefaultAgentGuestMaxCalls  = 4
	// Tokens of extension tool definitions offered directly.
	DefaultAgentExtensionToolBudget = 1500
)

// Artifacts configures the whole tool results kept for read_artifact.
type Artifacts struct {
	// Keep is how long an artifact is kept after it was made; older ones
	// are deleted when homard starts and every hour while `homard serve`
	// runs. At least "1h". Missing means "720h" (30 days).
	Keep Duration `toml:"keep"`
}

// Memory configures automatic memory capture.
type Memory struct {
	// Capture is "on" (a model call without tools reads the owner's turns
	// and proposes notes; a note is remembered when a later capture
	// proposes it again or accepted with `homard memory review`) or "off".
	// Missing means "on".
	Capture string `toml:"capture"`
	// CaptureEvery is how many of a session's owner turns one capture call
	// covers: it runs once that many wait (1 to 50). Missing means 4.
	CaptureEvery int `toml:"capture_every"`
	// CaptureIdle is how long a session with turns waiting stays quiet
	// before `homard serve` captures them anyway (at least "1m"). Missing
	// means "10m".
	CaptureIdle Duration `toml:"capture_idle"`
	// Review is "on" (once a week `homard serve` asks the model, without
	// tools, for duplicates, contradictions and stale notes in memory and
	// shows its proposals as one review card; nothing changes until the
	// owner approves) or "off" (no review call). Missing means "on".
	Review string `toml:"review"`
	// ReviewDay is the weekday of the review, at 09:00 in automation.tz
	// (the system's zone when that is empty): "monday" to "sunday".
	// Missing means "sunday".
	ReviewDay string `toml:"review_day"`
}

// Memory capture defaults.
const (
	DefaultCaptureEvery = 4
	DefaultCaptureIdle  = 10 * time.Minute
	maxCaptureEvery     = 50
)

// Weekdays are memory.review_day's values, Sunday first (time.Weekday's
// order).
var Weekdays = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

// Sandbox selects the process confinement backend.
type Sandbox struct {
	// Backend is "auto" (the strongest that works here; never the
	// unconfined host backend), "bwrap", "landlock" or "host". A named
	// backend that does not work refuses to run commands; it never falls
	// back. Missing means "auto".
	Backend string `toml:"backend"`
}

// Commands configures run_command.
type Commands struct {
	// Allow lists programs (base names or absolute paths) the operator
	// permits although they are shells, interpreters or wrappers; they
	// then run as code, never as reads. Missing or empty means none.
	Allow []string `toml:"allow"`
	// Unknown says what autopilot does with a command that runs code (a
	// program the catalog does not know, a build, a test, a script):
	// "sandbox" runs it in the sandbox and checks its changes before they
	// apply; "ask" asks first. Safe and smart always ask; yolo runs it.
	// Missing means "sandbox".
	Unknown string `toml:"unknown"`
	// HostTools are patterns of files the owner's own tools execute or
	// obey when the owner opens or commits in a folder, added to homard's
	// defaults (.vscode/, .idea/, .devcontainer/, .husky/,
	// .github/workflows/, .envrc, .pre-commit-config.yaml, lint-staged
	// configs): a command's change to one is held for the owner. A
	// pattern is path elements matched at any depth, case-insensitively,
	// "dir/" for a folder and all under it, globs allowed. Missing or
	// empty means the defaults only.
	HostTools []string `toml:"host_tools"`
	// Env names environment variables passed to commands besides PATH,
	// HOME, LANG and TERM. Missing or empty means none.
	Env []string `toml:"env"`
	// Timeout is the default limit for one command. Must be positive;
	// missing means 60s.
	Timeout Duration `toml:"timeout"`
	// MaxOutputBytes caps a command's output. Must be positive; missing
	// means 64 KiB.
	MaxOutputBytes int `toml:"max_output_bytes"`
	// Path lists extra folders of the owner's programs (~/.local/bin, a
	// version manager's bin), searched after /usr/local/bin, /usr/bin and
	// /bin, appended to the commands' PATH and shown to them read-only.
	// In the file an entry may start with "~/"; after Load each is an
	// absolute, clean, existing folder that is not inside a writable root
	// (a model could plant a program there). Missing or empty means none.
	Path []string `toml:"path"`
	// Recipes are commands the model may run by alias (see Recipe).
	// Missing or empty means none, and run_command lists no menu.
	Recipes []Recipe `toml:"recipes"`
	// WarmCache keeps a build cache per workspace root (Go build and
	// module caches, npm's, pip's) under the data folder: a sandboxed
	// command reads it but nothing it writes there is kept, and homard
	// refreshes the Go build cache itself after a Go build or test with a
	// fixed compile-only command. Off: every command starts cold. The
	// host backend never uses it. Missing means true (after Load it is
	// never nil).
	WarmCache *bool `toml:"warm_cache"`
}

// Warm reports commands.warm_cache (true when missing).
func (c Commands) Warm() bool { return c.WarmCache == nil || *c.WarmCache }

// Egress configures the web tools' network access.
type Egress struct {
	// Allow lists exact "scheme://host:port" endpoints (home-lab services)
	// exempt from the private-address and HTTPS-only rules; nothing wider.
	// Missing or empty means none.
	Allow []string `toml:"allow"`
	// SearchURL is web_search's RSS endpoint, with {query} where the query
	// goes. Missing means Bing's RSS search.
	SearchURL string `toml:"search_url"`
}

// Gateway configures `homard serve`.
type Gateway struct {
	// Addr is the host:port the API listens on. It must be a loopback
	// address unless `homard serve --allow-remote` says otherwise.
	// Missing means "127.0.0.1:8787".
	Addr string `toml:"addr"`
	// ApprovalWait is how long a turn waits for a card to be answered
	// before the model is told the call was not approved. Must be
	// positive; missing means 30m.
	ApprovalWait Duration `toml:"approval_wait"`
	// PingInterval is how often an open event stream gets a ": ping"
	// comment, so proxies and browsers keep it open. Must be positive and
	// at most 15s; missing means 15s.
	PingInterval Duration `toml:"ping_interval"`
}

// DefaultGatewayAddr is gateway.addr when the file omits it.
const DefaultGatewayAddr = "127.0.0.1:8787"

// Model selects the language model endpoint. It never holds the API key
// itself, only the name of the environment variable that does.
type Model struct {
	// Provider is a wire protocol ("openai", "anthropic") or a preset of
	// one with its own defaults: "deepseek", "openrouter", "moonshot",
	// "qwen", "ollama", "vllm", "llamacpp" (presets.go). Required.
	Provider string `toml:"provider"`
	// BaseURL is the absolute http or https URL of the API, without
	// credentials. Missing or empty means the provider's public endpoint.
	BaseURL string `toml:"base_url"`
	// Name is the model name sent to the API. Missing or empty means the
	// provider's default model.
	Name string `toml:"name"`
	// APIKeyEnv names the environment variable holding the API key
	// ([A-Z_][A-Z0-9_]*). Missing or empty means the provider's usual one
	// (OPENAI_API_KEY, ANTHROPIC_API_KEY, DEEPSEEK_API_KEY...); for a
	// local preset (ollama, vllm, llamacpp) it means no key.
	APIKeyEnv string `toml:"api_key_env"`
	// APIKeySecret, when set, names a vault secret holding the API key
	// (`homard secret set NAME --host HOST`); it is then used instead of
	// APIKeyEnv, and released only if bound to base_url's host.
	APIKeySecret string `toml:"api_key_secret"`
	// ContextTokens caps the estimated size of every request to the model
	// (system prompt, tools, conversation summary and history); older
	// turns are folded into a summary to stay within it. It does not
	// include the answer. At least 4000; missing means the provider's
	// size (Preset.ContextTokens, docs/PROVIDERS.md), 24000 for most.
	ContextTokens int `toml:"context_tokens"`
	// FirstEventTimeout bounds the wait from sending a request to the
	// model's first streamed event; past it the turn ends with a clear
	// error instead of hanging. Must be positive; missing means 180s
	// (models that think before answering can take minutes).
	FirstEventTimeout Duration `toml:"first_event_timeout"`
	// IdleTimeout bounds a silence in the middle of a streamed answer.
	// Must be positive; missing means 90s.
	IdleTimeout Duration `toml:"idle_timeout"`
	// RequestTimeout bounds one whole model request, retries and the
	// streamed answer included, so a model that keeps trickling cannot
	// hold a turn forever. Missing means 10m; "0s" means no overall limit
	// (the first-event and idle limits still apply).
	RequestTimeout Duration `toml:"request_timeout"`
	// ConnectTimeout bounds establishing a connection to the endpoint
	// (TCP connect and TLS handshake). Must be positive; missing means 30s.
	ConnectTimeout Duration `toml:"connect_timeout"`
}

// Permissions holds the permission mode and approval lifetimes.
type Permissions struct {
	// Mode is "safe", "smart", "autopilot" or "yolo". Missing means "smart".
	Mode string `toml:"mode"`
	// ApprovalTTL is how long a pending approval waits for an answer.
	// Must be positive; missing means 30m.
	ApprovalTTL Duration `toml:"approval_ttl"`
	// SessionGrantTTL is how long an "allow for this session" answer lasts.
	// Must be positive; missing means 12h.
	SessionGrantTTL Duration `toml:"session_grant_ttl"`
	// AlwaysGrantTTL is how long an "always" rule lasts before it expires.
	// Must be positive; missing means 720h (30 days).
	AlwaysGrantTTL Duration `toml:"always_grant_ttl"`
	// GuestTools are the tools a guest entry (group chat, paired guest) may
	// use; only read-only ones take effect. Missing means ["current_time"];
	// an explicit empty list means none.
	GuestTools []string `toml:"guest_tools"`
	// PrivateEgress is "ask" or "allow". "ask": once a session's context
	// holds the owner's private data (a file, command output or memory),
	// an outbound request from it (http_get, web_search, a send) asks in
	// autopilot too, unless an operator rule allows it. "allow" turns that
	// check off. Missing means "ask".
	PrivateEgress string `toml:"private_egress"`
	// Taint is how private_egress = "ask" tells a request that could
	// carry private data: "session" (every outbound request of a session
	// that read private data) or "value" (a request whose own arguments
	// carry 8 bytes or more of the private text the session read, as it
	// is or URL-, base64- or hex-encoded; internal/taint). Missing means
	// "session".
	Taint string `toml:"taint"`
	// TOTP is what approvals need a code from the owner's
	// authenticator app (`homard totp setup`): "off" (none); a risk,
	// "medium", "high" or "critical" (that risk or higher); or a blast
	// class, "write", "network" or "send" (calls whose effect reaches
	// that class or further: policy.Reach; a split plan's class is its
	// furthest item's). Chat buttons and terminal cards
	// cannot take a code: such a card is approved in the web UI or with
	// `homard approval approve ID --code CODE`. Missing means "off".
	TOTP string `toml:"totp"`
}

// Workspace configures confined file access.
type Workspace struct {
	// Roots are the folders tools may read and write. Missing or empty is an
	// error rather than a guess, because Load does not know Paths; Default
	// and Init write the root "main" at Paths.WorkspaceDir.
	Roots []Root `toml:"roots"`
	// MaxFileBytes caps one file read or written by a tool. Must be
	// positive; missing means 8 MiB.
	MaxFileBytes int64 `toml:"max_file_bytes"`
	// MaxCheckpoints caps how many checkpoints are kept. Must be positive;
	// missing means 100.
	MaxCheckpoints int `toml:"max_checkpoints"`
	// MaxCheckpointBytes caps the total size of kept checkpoints. Must be
	// positive; missing means 64 MiB.
	MaxCheckpointBytes int64 `toml:"max_checkpoint_bytes"`
}

// Files configures the sensitive files the file tools refuse in every
// mode: homard's defaults (.env and .env.*, private keys, .ssh/, .aws/,
// .gnupg/, .netrc, .npmrc, .pypirc, .git-credentials, .docker/config.json,
// .kube/config, keychains, browser profiles...) plus Sensitive, minus
// AllowSensitive.
type Files struct {
	// Sensitive are patterns added to the defaults: slash-separated globs
	// matched without regard to case against any run of a path's elements
	// ("*.token" anywhere, "deploy/prod.yaml"). Missing or empty means the
	// defaults alone.
	Sensitive []string `toml:"sensitive"`
	// AllowSensitive are paths tools may use although they match a
	// pattern: relative to the first root ("fixtures/.env"), or
	// "root:path" in another root; a folder allows what is inside it.
	// Missing or empty means none.
	AllowSensitive []string `toml:"allow_sensitive"`
}

// Root is one named workspace folder.
type Root struct {
	// Name identifies the root in tool arguments ([a-z0-9_-]+). Required.
	Name string `toml:"name"`
	// Path is the folder. In the file it may start with "~/" or be relative
	// to the config file's folder; after Load it is absolute and clean.
	Path string `toml:"path"`
	// Access is AccessReadWrite ("rw": tools may read and change it) or
	// AccessReadOnly ("ro": tools and commands may read it, nothing ever
	// changes it). A read-only root may be the owner's home or hold
	// homard's own files (they stay hidden), and writable roots may lie
	// inside it. Missing or empty means "rw".
	Access string `toml:"access"`
}

// ReadOnly reports whether r is a read-only root.
func (r Root) ReadOnly() bool { return r.Access == AccessReadOnly }

// Root access modes.
const (
	AccessReadWrite = "rw"
	AccessReadOnly  = "ro"
)

// Rule is one operator rule. It mirrors internal/policy.Rule.
type Rule struct {
	// ID names the rule in decisions and the audit log; unique. Required.
	ID string `toml:"id"`
	// Tool is the exact tool name the rule applies to ([a-z0-9_]+). Required.
	Tool string `toml:"tool"`
	// Path is an optional slash-separated glob over root-relative paths
	// ("notes/**", "*.md"). Empty means the rule matches any target.
	Path string `toml:"path"`
	// Effect is "allow", "ask" or "deny". Required.
	Effect string `toml:"effect"`
	// Command is an optional pattern over a run_command Plan's full argv:
	// the resolved absolute program path, then each argument, one glob per
	// element; a last "**" matches any remaining arguments. Empty means the
	// rule does not look at commands.
	Command []string `toml:"command"`
	// Host is an optional host name for the web tools' targets: exact
	// ("api.weather.example") or "*.example.com" for any name under it.
	// Not together with Path. Empty means the rule does not look at hosts.
	Host string `toml:"host"`
}

// Duration is a time.Duration written in TOML as a string such as "30m" or
// "12h" (time.ParseDuration syntax).
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats d the way Render writes it: "30m", "12h", "1h30m".
func (d Duration) String() string {
	s := time.Duration(d).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(string(text))
	if err != nil {
		return fmt.Errorf("invalid duration %q: want a duration such as \"30m\" or \"12h\"", text)
	}
	*d = Duration(v)
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Default returns the configuration Init writes when given no options: the
// OpenAI provider, smart mode, and one workspace root "main" at
// p.WorkspaceDir.
func Default(p Paths) *Config {
	c := &Config{
		Model: presets[0].model(),
		Workspace: Workspace{
			Roots: []Root{{Name: DefaultRootName, Path: p.WorkspaceDir}},
		},
	}
	applyDefaults(c)
	c.Channels.ByName()
	return c
}

// orDefault sets *p to def when *p is the zero value of its type.
func orDefault[T comparable](p *T, def T) {
	var zero T
	if *p == zero {
		*p = def
	}
}

// orEmpty makes a nil list an empty one.
func orEmpty(p *[]string) {
	if *p == nil {
		*p = []string{}
	}
}

// applyModelDefaults fills the empty fields of m from its provider's
// defaults. It runs after decoding because the defaults depend on the
// provider the file chose.
func applyModelDefaults(m *Model) {
	p, ok := LookupPreset(m.Provider)
	if !ok {
		return
	}
	d := p.model()
	orDefault(&m.BaseURL, d.BaseURL)
	orDefault(&m.Name, d.Name)
	orDefault(&m.APIKeyEnv, d.APIKeyEnv)
}

// applyDefaults fills every zero field that has a provider-independent
// default. Load calls it before decoding, so a key the file omits keeps its
// default while a key the file sets to zero stays zero and fails validation.
// Roots have no default here: it depends on Paths, which Load does not know.
func applyDefaults(c *Config) {
	orDefault(&c.Owner, "owner")
	orDefault(&c.Lang, "auto")
	applyModelLimits(&c.Model)
	applyModelsDefaults(&c.Models)
	p := &c.Permissions
	orDefault(&p.Mode, "smart")
	orDefault(&p.ApprovalTTL, Duration(30*time.Minute))
	orDefault(&p.SessionGrantTTL, Duration(12*time.Hour))
	orDefault(&p.AlwaysGrantTTL, Duration(720*time.Hour))
	if p.GuestTools == nil {
		p.GuestTools = []string{"current_time"}
	}
	orDefault(&p.PrivateEgress, "ask")
	orDefault(&p.Taint, "session")
	orDefault(&p.TOTP, "off")
	orDefault(&c.Sandbox.Backend, "auto")
	orDefault(&c.Memory.Capture, "on")
	orDefault(&c.Memory.CaptureEvery, DefaultCaptureEvery)
	orDefault(&c.Memory.CaptureIdle, Duration(DefaultCaptureIdle))
	orDefault(&c.Memory.Review, "on")
	orDefault(&c.Memory.ReviewDay, "sunday")
	orDefault(&c.Artifacts.Keep, Duration(720*time.Hour))
	orDefault(&c.Commands.Timeout, Duration(60*time.Second))
	orDefault(&c.Commands.MaxOutputBytes, 64<<10)
	orEmpty(&c.Commands.Allow)
	orDefault(&c.Commands.Unknown, "sandbox")
	orEmpty(&c.Commands.HostTools)
	orEmpty(&c.Commands.Env)
	if c.Commands.WarmCache == nil {
		on := true
		c.Commands.WarmCache = &on
	}
	orEmpty(&c.Commands.Path)
	orDefault(&c.Agent.MaxCalls, DefaultAgentMaxCalls)
	orDefault(&c.Agent.MaxUnits, DefaultAgentMaxUnits)
	orDefault(&c.Agent.ReserveUnits, DefaultAgentReserveUnits)
	orDefault(&c.Agent.GuestMaxTokens, DefaultAgentGuestMaxTokens)
	orDefault(&c.Agent.GuestMaxCalls, DefaultAgentGuestMaxCalls)
	orDefault(&c.Agent.ExtensionToolBudget, DefaultAgentExtensionToolBudget)
	orEmpty(&c.Egress.Allow)
	orEmpty(&c.Files.Sensitive)
	orEmpty(&c.Files.AllowSensitive)
	applyAutomationDefaults(&c.Automation)
	applyMonitorDefaults(&c.Monitor)
	applyBrowserDefaults(&c.Browser)
	applyTelemetryDefaults(&c.Telemetry)
	g := &c.Gateway
	orDefault(&g.Addr, DefaultGatewayAddr)
	orDefault(&g.ApprovalWait, Duration(30*time.Minute))
	orDefault(&g.PingInterval, Duration(15*time.Second))
	orDefault(&c.Egress.SearchURL, "https://www.bing.com/search?format=rss&q={query}")
	w := &c.Workspace
	for i := range w.Roots {
		orDefault(&w.Roots[i].Access, AccessReadWrite)
	}
	orDefault(&w.MaxFileBytes, DefaultMaxFileBytes)
	orDefault(&w.MaxCheckpoints, DefaultMaxCheckpoints)
	orDefault(&w.MaxCheckpointBytes, DefaultMaxCheckpointBytes)
}
