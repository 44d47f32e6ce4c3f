package config

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Render writes c as a commented config.toml in which every key carries a
// comment explaining it and its allowed values, followed by one commented-out
// example rule and then c's own rules. It refuses an invalid Config, so
// whatever it returns, Load accepts and reads back as an equal Config.
func Render(c *Config) ([]byte, error) {
	var ps problems
	validate(c, &ps)
	if len(ps) > 0 {
		return nil, fmt.Errorf("render config: %w", ps.err("invalid config"))
	}

	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	w(`# homard configuration. Unknown keys are rejected.
# Durations use Go syntax ("90s", "30m", "12h"); sizes are in bytes.

# The format of this file. homard migrates an older file (keeping a
# backup) and refuses a newer one; see homard config migrate --help.
config_version = %d

# The owner's id. Approvals and grants are bound to it.
owner = %s

# The language homard speaks: "auto" (from LC_ALL, LC_MESSAGES or LANG),
# "en" or "zh". A chat whose platform reports its language follows it.
# --json output, API fields and rule ids stay English.
lang = %s

[model]
# "openai" (OpenAI or any OpenAI-compatible server), "anthropic", or a
# preset with its own defaults: "deepseek", "openrouter", "moonshot",
# "qwen", "ollama", "vllm", "llamacpp". homard setup changes these keys
# and keeps your comments.
provider = %s
# Absolute http or https URL of the API, without credentials.
base_url = %s
# Model name sent to the API.
name = %s
# Name of the environment variable holding the API key (A-Z, 0-9 and _);
# "" for a local server that needs none. Never put the key itself here.
api_key_env = %s
# Or keep the key in homard's encrypted vault instead:
#   homard secret set NAME --host HOST   (HOST as in base_url, with its port
#   if base_url names one), then put NAME here. When set, api_key_env is not
#   read, and the key is released only to base_url's host.
api_key_secret = %s
# Cap on the estimated tokens of one request (system prompt, tools,
# conversation summary and history), at least 4000. Older turns are folded
# into a summary to stay within it. Leave room for the answer under the
# model's context window.
context_tokens = %d
# How long to wait for the model's first streamed event after a request;
# past it the turn ends with an error saying so instead of hanging.
first_event_timeout = %s
# The longest silence in the middle of an answer (positive duration).
idle_timeout = %s
# The longest one whole request may take, answer included ("0s": no limit).
request_timeout = %s
# How long to wait for a connection to base_url (positive duration).
connect_timeout = %s
`,
		CurrentVersion, quote(c.Owner), quote(c.Lang),
		quote(c.Model.Provider), quote(c.Model.BaseURL), quote(c.Model.Name), quote(c.Model.APIKeyEnv), quote(c.Model.APIKeySecret), c.Model.ContextTokens,
		quote(c.Model.FirstEventTimeout.String()), quote(c.Model.IdleTimeout.String()),
		quote(c.Model.RequestTimeout.String()), quote(c.Model.ConnectTimeout.String()))
	renderModels(w, &c.Models)
	w(`
[permissions]
# How much homard asks before acting. Hard limits apply in every mode.
#   "safe"       only read-only, low-risk actions run unasked
#   "smart"      also actions an operator rule below allows exactly
#   "autopilot"  also the verified owner's non-critical actions
#   "yolo"       least supervision; critical actions still ask
mode = %s
# How long a pending approval waits for an answer (positive duration).
approval_ttl = %s
# How long an "allow for this session" answer lasts (positive duration).
session_grant_ttl = %s
# How long an "always" rule lasts before it expires (positive duration).
always_grant_ttl = %s
# Tools a guest entry (group chat, paired guest) may use. Only read-only
# tools take effect. [] means none.
guest_tools = %s
# What happens to an outbound request (http_get, web_search) from a session
# whose context already holds your private data: a file, command output or
# a memory. The model could hide that data in the request, so
#   "ask"    autopilot asks you too, showing the exact request, unless a
#            rule below allows that tool (safe asks for every fetch
#            anyway, smart unless a rule allows it; yolo never asks)
#   "allow"  no such check: autopilot runs it unasked
private_egress = %s
# How "ask" tells such a request:
#   "session"  every outbound request of a session that read private data
#   "value"    a request whose own arguments carry 8 bytes or more of the
#              private text the session read, as it is or URL-, base64-
#              or hex-encoded; the card names where the text was read.
#              A tripwire: a model can still paraphrase what it read
taint = %s
# Approvals that need a code from your authenticator app (run "homard totp
# setup" first): "off"; a risk and higher, "medium", "high" or "critical";
# or a blast class and further, "write" (changes files, runs commands),
# "network" (also reads the web) or "send" (sends data out).
# Chat buttons cannot take a code: approve those in the web UI or with
# "homard approval approve ID --code CODE".
totp = %s

[workspace]
# Folders tools may use; at least one. name is made of a-z, 0-9, _ and -
# and is unique. path is absolute, "~/..." or relative to this file's
# folder. access is "rw" (tools may read and change it) or "ro" (tools and
# commands may only read it; it may be your home folder: credentials and
# homard's own files in it stay hidden, and "rw" roots may lie inside it).
roots = [
`,
		quote(c.Permissions.Mode),
		quote(c.Permissions.ApprovalTTL.String()),
		quote(c.Permissions.SessionGrantTTL.String()),
		quote(c.Permissions.AlwaysGrantTTL.String()),
		quoteList(c.Permissions.GuestTools),
		quote(c.Permissions.PrivateEgress), quote(c.Permissions.Taint), quote(c.Permissions.TOTP))
	for _, r := range c.Workspace.Roots {
		w("  { name = %s, path = %s, access = %s },\n", quote(r.Name), quote(r.Path), quote(r.Access))
	}
	w(`]
# Largest file a tool may read or write, in bytes%s.
max_file_bytes = %d
# How many file checkpoints are kept.
max_checkpoints = %d
# Total size of kept checkpoints, in bytes%s.
max_checkpoint_bytes = %d

[files]
# Files that hold credentials are refused to every file tool in every mode,
# matched where a path really leads (after symlinks): .env and .env.*,
# private keys (id_rsa..., *.pem, *.key, *.p12, *.pfx), .ssh/, .aws/,
# .gnupg/, .netrc, .npmrc, .pypirc, .git-credentials, .docker/config.json,
# .kube/config, keychains and browser profiles. More patterns (globs matched
# without regard to case against any part of a path, "*.token"):
sensitive = %s
# Paths tools may use anyway, each one you mean: relative to the first root
# ("fixtures/.env") or "root:path"; a folder allows what is inside it.
allow_sensitive = %s

[sandbox]
# How run_command confines programs: "auto" (the strongest that works on this
# machine, never the unconfined host), "bwrap" (bubblewrap), "landlock" or
# "host" (no confinement: only if you mean it). A named backend that does
# not work refuses to run commands; it never falls back.
backend = %s

[commands]
# Programs allowed although they are shells, interpreters or wrappers
# (base names or absolute paths); they run as code, never as reads.
# [] means none.
allow = %s
# What autopilot does with a command that runs code (a program homard's
# catalog does not know, a build, a test, a script): "sandbox" runs it in
# the sandbox and checks its changes before they apply; "ask" asks first.
# Safe and smart modes always ask; yolo runs it.
unknown = %s
# Files your own tools execute or obey (editor settings, git hooks, CI
# workflows...), added to homard's defaults: a command's change to one is
# held for you to approve. "dir/" is a folder and all under it; globs work.
host_tools = %s
# Environment variables passed to commands besides PATH, HOME, LANG, TERM.
env = %s
# Default time limit for one command (positive duration).
timeout = %s
# Largest output kept from one command, in bytes.
max_output_bytes = %d
# Folders of your own programs ("~/.local/bin", a version manager's bin),
# searched after /usr/local/bin, /usr/bin and /bin, added to the commands'
# PATH and shown to them read-only. Each must exist and lie outside every
# "rw" root. [] means none.
path = %s
# Keep a build cache per root (Go build and module caches, npm's, pip's) in
# homard's data folder: sandboxed commands read it but nothing they write
# there is kept; homard refreshes the Go build cache itself after a Go build
# or test, compiling without running anything. false: every command starts
# with empty caches.
warm_cache = %t
%s
[egress]
# Exact "scheme://host:port" endpoints the web tools may reach although they
# are private or plain http (home-lab services). [] means none.
allow = %s
# RSS search endpoint for web_search; {query} is replaced by the query.
search_url = %s

[memory]
# "on": a model call without tools reads your turns and proposes short
# notes about you; one is remembered when a later capture proposes it
# again or when you accept it (homard memory review); one contradicting a
# remembered preference waits for you. "off": only what you or a session
# explicitly remember.
capture = %s
# One capture call covers this many of a session's turns (1 to 50).
capture_every = %d
# A session quiet this long has its waiting turns captured by homard serve
# (at least "1m"); homard run captures at its end, serve when it stops.
capture_idle = %s
# "on": once a week homard serve asks the model (without tools) for
# duplicate, contradicting and stale notes in memory and shows what it
# proposes as one review card; nothing changes until you approve
# (homard memory review). "off": no review call.
review = %s
# The review's weekday, at 09:00 in automation.tz: "monday" to "sunday".
review_day = %s

[artifacts]
# A tool result longer than the model should read at once is kept whole as
# an artifact (read on with read_artifact). How long one is kept before it
# is deleted: at least "1h".
keep = %s

[gateway]
# Where homard serve listens (host:port). Keep it on loopback; a
# non-loopback address also needs homard serve --allow-remote with TLS
# or a reverse proxy (see docs/GUIDE.md).
addr = %s
# How long a turn waits for an approval card to be answered (in a browser
# tab or with homard approval approve ID) before the model is told
# the call was not approved (positive duration).
approval_wait = %s
# How often an open event stream gets a keep-alive ping (at most "15s").
ping_interval = %s

[agent]
# The tool budget of one turn; past it the turn ends with the answer so far.
# Tool calls per turn (positive).
max_calls = %d
# Units per turn (positive): a read costs 1, a fetch or a write 2, a
# command or a send 3.
max_units = %d
# The last units of max_units only read-only tools may spend, so a turn can
# still look at what it did (0 means no reserve; below max_units).
reserve_units = %d
# Model tokens (input + output) per owner turn; 0 means no limit.
max_tokens = %d
# Model tokens per guest turn (a mention in an allowed group chat);
# positive: a guest turn always has a limit.
guest_max_tokens = %d
# Tool calls per guest turn, in place of max_calls (positive).
guest_max_calls = %d
# Tokens of tool definitions the extension tools (MCP servers' tools) may
# add to every request: beyond it they are found with tool_search and
# called with call_tool instead (0 means always that way).
extension_tool_budget = %d

`,
		mib(c.Workspace.MaxFileBytes), c.Workspace.MaxFileBytes,
		c.Workspace.MaxCheckpoints,
		mib(c.Workspace.MaxCheckpointBytes), c.Workspace.MaxCheckpointBytes,
		quoteList(c.Files.Sensitive), quoteList(c.Files.AllowSensitive),
		quote(c.Sandbox.Backend),
		quoteList(c.Commands.Allow), quote(c.Commands.Unknown), quoteList(c.Commands.HostTools), quoteList(c.Commands.Env), quote(c.Commands.Timeout.String()), c.Commands.MaxOutputBytes, quoteList(c.Commands.Path), c.Commands.Warm(), renderRecipes(c.Commands.Recipes),
		quoteList(c.Egress.Allow), quote(c.Egress.SearchURL), quote(c.Memory.Capture), c.Memory.CaptureEvery, quote(c.Memory.CaptureIdle.String()),
		quote(c.Memory.Review), quote(c.Memory.ReviewDay),
		quote(c.Artifacts.Keep.String()),
		quote(c.Gateway.Addr), quote(c.Gateway.ApprovalWait.String()), quote(c.Gateway.PingInterval.String()),
		c.Agent.MaxCalls, c.Agent.MaxUnits, c.Agent.ReserveUnits,
		c.Agent.MaxTokens, c.Agent.GuestMaxTokens, c.Agent.GuestMaxCalls, c.Agent.ExtensionToolBudget)
	renderAutomation(w, &c.Automation)
	renderMonitor(w, &c.Monitor)
	renderBrowser(w, &c.Browser)
	renderTelemetry(w, &c.Telemetry)
	renderStore(w, &c.Store)
	// Before the example rules: a test uncomments everything after those.
	renderMCP(w, &c.MCP)
	w("%s", exampleRules)
	renderChannels(w, &c.Channels)
	for _, r := range c.Rules {
		w("\n[[rules]]\nid = %s\ntool = %s\n", quote(r.ID), quote(r.Tool))
		optionalKey(w, "path", r.Path)
		optionalList(w, "command", r.Command)
		optionalKey(w, "host", r.Host)
		w("effect = %s\n", quote(r.Effect))
	}
	// TOML files are UTF-8; a non-UTF-8 folder name cannot be written
	// faithfully, and a silently altered path would point somewhere else.
	if !utf8.ValidString(b.String()) {
		return nil, errors.New("render config: a value is not valid UTF-8")
	}
	return []byte(b.String()), nil
}

// quote writes s as a TOML basic string. strconv.Quote is not used because
// Go escapes such as \x00 are not valid TOML.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			// Keep an invalid byte as it is so that Render can refuse it
			// instead of writing a different value.
			b.WriteByte(s[i])
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// optionalKey writes `key = "value"` when value is not empty, and nothing
// otherwise.
func optionalKey(w func(string, ...any), key, value string) {
	if value != "" {
		w("%s = %s\n", key, quote(value))
	}
}

// optionalList writes `key = [...]` when l is not empty, and nothing
// otherwise.
func optionalList(w func(string, ...any), key string, l []string) {
	if len(l) > 0 {
		w("%s = %s\n", key, quoteList(l))
	}
}

// mib returns " (N MiB)" when n is a whole number of MiB.
func mib(n int64) string {
	if n > 0 && n%(1<<20) == 0 {
		return fmt.Sprintf(" (%d MiB)", n>>20)
	}
	return ""
}

// exampleRules explains operator rules; it ends the rendered file's fixed
// part so uncommenting it there adds the rules.
const exampleRules = `
# Operator rules, checked in order; the first that matches decides.
#   id      unique name shown in decisions and the audit log
#   tool    exact tool name (a-z, 0-9 and _)
#   path    optional glob over root-relative paths, "/"-separated, "**"
#           matches any number of folders ("notes/**", "*.md"); no "..",
#           no leading "/"; leave it out to match every target
#   effect  "allow", "ask" or "deny"
#   command optional, for run_command: the full argv to match, the
#           program's resolved absolute path first, one glob per element,
#           a last "**" for any further arguments
#           (command = ["/usr/bin/git", "status", "**"])
#   host    optional, for http_get and web_search: the host requested,
#           exact or "*.example.com" for any name under it; not with path
#           (an allow rule also lets a session that read your files fetch
#           from that host in autopilot without asking)
#
# [[rules]]
# id = "read-notes"
# tool = "read_file"
# path = "notes/**"
# effect = "allow"
#
# [[rules]]
# id = "git-status"
# tool = "run_command"
# command = ["/usr/bin/git", "status", "**"]
# effect = "allow"
#
# [[rules]]
# id = "weather"
# tool = "http_get"
# host = "api.weather.example"
# effect = "allow"
`
