package config

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/policy"
)

// The name checks are compiled on first use, not at package init: most
// configurations never reach several of them (a counted repetition such as
// {1,64} compiles into a long program).
var (
	toolNameRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9_]+$`) })
	rootNameRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9_-]+$`) })
	ruleIDRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`) })
	envNameRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`) })
	secretNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9_-]{1,64}$`) }) // as secrets.Vault names
)

// validate checks a complete Config (defaults applied, roots resolved) and
// records every problem in ps.
func validate(c *Config, ps *problems) {
	if c.Owner == "" || strings.ContainsFunc(c.Owner, badIDRune) {
		ps.add("owner = %q: want a non-empty id without spaces or control characters", c.Owner)
	}
	if !slices.Contains(lang.Settings, c.Lang) {
		ps.add("lang = %q: want one of %s", c.Lang, strings.Join(lang.Settings, ", "))
	}
	validateModel("model", &c.Model, ps)
	validateModels(c, ps)
	validatePermissions(&c.Permissions, ps)
	validateWorkspace(&c.Workspace, ps)
	validateFiles(&c.Files, c.Workspace.Roots, ps)
	validateRunLimits(c, ps)
	validateRules(c.Rules, ps)
	validateGateway(&c.Gateway, ps)
	validateAgent(&c.Agent, ps)
	validateAutomation(&c.Automation, ps)
	validateMonitor(&c.Monitor, ps)
	validateBrowser(&c.Browser, ps)
	validateTelemetry(&c.Telemetry, ps)
	validateStore(&c.Store, ps)
	validateChannels(&c.Channels, ps)
	validateMCP(&c.MCP, ps)
	validateCommandPath(c.Commands.Path, c.Workspace.Roots, ps)
	validateRecipes(c.Commands.Recipes, ps)
}

func validateGateway(g *Gateway, ps *problems) {
	host, port, err := net.SplitHostPort(g.Addr)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 || host == "" {
		ps.add("gateway.addr = %q: want host:port such as \"127.0.0.1:8787\"", g.Addr)
	}
	if g.ApprovalWait <= 0 {
		ps.add("gateway.approval_wait = %q: want a positive duration such as \"30m\"", g.ApprovalWait)
	}
	if g.PingInterval <= 0 || g.PingInterval.Std() > 15*time.Second {
		ps.add("gateway.ping_interval = %q: want a positive duration of at most \"15s\"", g.PingInterval)
	}
}

var programRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(/[A-Za-z0-9._+-]+)+$|^[A-Za-z0-9._+-]+$`) })

func validateRunLimits(c *Config, ps *problems) {
	if c.Memory.Capture != "on" && c.Memory.Capture != "off" {
		ps.add("memory.capture = %q: want on or off", c.Memory.Capture)
	}
	if c.Memory.CaptureEvery < 1 || c.Memory.CaptureEvery > maxCaptureEvery {
		ps.add("memory.capture_every = %d: want a number of turns from 1 to %d (4 is the default)", c.Memory.CaptureEvery, maxCaptureEvery)
	}
	if c.Memory.Review != "on" && c.Memory.Review != "off" {
		ps.add("memory.review = %q: want on or off", c.Memory.Review)
	}
	if !slices.Contains(Weekdays, c.Memory.ReviewDay) {
		ps.add("memory.review_day = %q: want one of %s", c.Memory.ReviewDay, strings.Join(Weekdays, ", "))
	}
	if c.Memory.CaptureIdle.Std() < time.Minute {
		ps.add("memory.capture_idle = %q: want a duration of at least \"1m\", such as \"10m\"", c.Memory.CaptureIdle)
	}
	if c.Artifacts.Keep.Std() < time.Hour {
		ps.add("artifacts.keep = %q: want a duration of at least \"1h\", such as \"720h\" (30 days)", c.Artifacts.Keep)
	}
	if !slices.Contains(backends, c.Sandbox.Backend) {
		ps.add("sandbox.backend = %q: want one of %s", c.Sandbox.Backend, strings.Join(backends, ", "))
	}
	for i, p := range c.Commands.Allow {
		if !programRE().MatchString(p) || path.Clean(p) != p {
			ps.add("commands.allow[%d] = %q: want a program name or a clean absolute path", i, p)
		}
	}
	if c.Commands.Unknown != "ask" && c.Commands.Unknown != "sandbox" {
		ps.add("commands.unknown = %q: want sandbox (autopilot runs commands that run code in the sandbox, their changes checked before they apply) or ask (autopilot asks first)", c.Commands.Unknown)
	}
	for i, h := range c.Commands.HostTools {
		if h == "" || strings.HasPrefix(h, "/") || strings.Contains(h, "..") || strings.ContainsAny(h, "\x00\n") {
			ps.add("commands.host_tools[%d] = %q: want a relative pattern such as \".vscode/\" or \".envrc\"", i, h)
		} else if _, err := path.Match(h, ""); err != nil {
			ps.add("commands.host_tools[%d] = %q: not a valid glob: %v", i, h, err)
		}
	}
	for i, e := range c.Commands.Env {
		if !envNameRE().MatchString(e) {
			ps.add("commands.env[%d] = %q: want an environment variable name (A-Z, 0-9 and _)", i, e)
		}
	}
	if c.Commands.Timeout <= 0 {
		ps.add("commands.timeout = %q: want a positive duration such as \"60s\"", c.Commands.Timeout)
	}
	if c.Commands.MaxOutputBytes <= 0 {
		ps.add("commands.max_output_bytes = %d: want a positive number of bytes", c.Commands.MaxOutputBytes)
	}
	for i, a := range c.Egress.Allow {
		u, err := url.Parse(a)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Port() == "" ||
			u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			ps.add("egress.allow[%d] = %q: want an exact endpoint such as \"http://127.0.0.1:3900\" (scheme, host and port; no path)", i, a)
		}
	}
	if u, err := url.Parse(c.Egress.SearchURL); err != nil || u.Scheme != "https" || u.Host == "" ||
		!strings.Contains(c.Egress.SearchURL, "{query}") {
		ps.add("egress.search_url = %q: want an https URL containing {query}", c.Egress.SearchURL)
	}
}

// validateModel checks [model] or a [models.NAME] table; key is its
// table's name ("model", "models.local").
func validateModel(key string, m *Model, ps *problems) {
	preset, ok := LookupPreset(m.Provider)
	if !ok {
		ps.add("%s.provider = %q: want one of %s", key, m.Provider, ProviderNames())
		return // the other fields' defaults depend on the provider
	}
	validateBaseURL(key, m.BaseURL, ps)
	switch {
	case m.Name == "" && preset.Model == "":
		ps.add("%s.name is missing: %s has no default model; name the one it serves (`homard setup` lists Ollama's)", key, preset.Title)
	case m.Name == "" || strings.ContainsFunc(m.Name, unicode.IsControl):
		ps.add("%s.name = %q: want a model name such as %q", key, m.Name, preset.Model)
	}
	if m.FirstEventTimeout <= 0 {
		ps.add("%s.first_event_timeout = %q: want a positive duration such as \"180s\"", key, m.FirstEventTimeout)
	}
	if m.IdleTimeout <= 0 {
		ps.add("%s.idle_timeout = %q: want a positive duration such as \"90s\"", key, m.IdleTimeout)
	}
	if m.RequestTimeout < 0 {
		ps.add("%s.request_timeout = %q: want a duration such as \"10m\", or \"0s\" for no overall limit", key, m.RequestTimeout)
	}
	if m.ConnectTimeout <= 0 {
		ps.add("%s.connect_timeout = %q: want a positive duration such as \"30s\"", key, m.ConnectTimeout)
	}
	if m.ContextTokens < MinContextTokens {
		ps.add("%s.context_tokens = %d: want at least %d (the default is %d)", key, m.ContextTokens, MinContextTokens, DefaultContextTokens)
	}
	// The value is never echoed: someone may have pasted the key itself.
	// Empty is "no key", allowed only where the preset needs none.
	if !envNameRE().MatchString(m.APIKeyEnv) && (m.APIKeyEnv != "" || preset.KeyEnv != "") {
		example := preset.KeyEnv
		if example == "" {
			example = "OPENAI_API_KEY"
		}
		ps.add("%s.api_key_env: want the name of an environment variable such as %q (A-Z, 0-9 and _), not the key itself", key, example)
	}
	if m.APIKeySecret != "" && !secretNameRE().MatchString(m.APIKeySecret) {
		ps.add("%s.api_key_secret: want the name of a vault secret (a-z, 0-9, _ and -, as in `homard secret list`), not the key itself", key)
	}
}

func validateBaseURL(key, s string, ps *problems) {
	const want = "want an absolute http or https URL such as"
	example := "https://api.openai.com/v1"
	u, err := url.Parse(s)
	if err != nil {
		// url.Parse errors quote the input, which may hold credentials.
		ps.add("%s.base_url: %s %q", key, want, example)
		return
	}
	if u.User != nil {
		ps.add("%s.base_url = %q: credentials do not belong in the URL; put the key in the variable named by %s.api_key_env",
			key, u.Redacted(), key)
		return
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		ps.add("%s.base_url = %q: %s %q", key, s, want, example)
		return
	}
	if u.Fragment != "" || u.RawQuery != "" {
		ps.add("%s.base_url = %q: want a URL without a query or fragment", key, s)
	}
}

func validatePermissions(p *Permissions, ps *problems) {
	if !slices.Contains(modes, p.Mode) {
		ps.add("permissions.mode = %q: want one of %s", p.Mode, strings.Join(modes, ", "))
	}
	for _, d := range []struct {
		key string
		val Duration
	}{
		{"approval_ttl", p.ApprovalTTL},
		{"session_grant_ttl", p.SessionGrantTTL},
		{"always_grant_ttl", p.AlwaysGrantTTL},
	} {
		if d.val <= 0 {
			ps.add("permissions.%s = %q: want a positive duration such as \"30m\" or \"12h\"", d.key, d.val)
		}
	}
	if p.PrivateEgress != "ask" && p.PrivateEgress != "allow" {
		ps.add("permissions.private_egress = %q: want ask (an outbound request from a session that read private data asks) or allow (it does not)", p.PrivateEgress)
	}
	switch p.TOTP {
	case "off", "medium", "high", "critical", "write", "network", "send":
	default:
		ps.add("permissions.totp = %q: want off; a risk (medium, high or critical); or a blast class (write, network or send): the lowest whose approval needs a code from your authenticator app", p.TOTP)
	}
	if p.Taint != "session" && p.Taint != "value" {
		ps.add("permissions.taint = %q: want session (every outbound request of a session that read private data asks) or value (a request asks when it carries the private text itself)", p.Taint)
	}
	for i, t := range p.GuestTools {
		if !toolNameRE().MatchString(t) {
			ps.add("permissions.guest_tools[%d] = %q: want a tool name made of a-z, 0-9 and _", i, t)
		}
	}
}

func validateWorkspace(w *Workspace, ps *problems) {
	if len(w.Roots) == 0 {
		ps.add(`workspace.roots is missing or empty: want at least one root such as roots = [{ name = "main", path = "~/homard-workspace" }]`)
	}
	seen := make(map[string]bool)
	for i, r := range w.Roots {
		switch {
		case !rootNameRE().MatchString(r.Name):
			ps.add("workspace.roots[%d].name = %q: want a name made of a-z, 0-9, _ and -", i, r.Name)
		case seen[r.Name]:
			ps.add("workspace.roots[%d].name = %q: names must be unique", i, r.Name)
		}
		seen[r.Name] = true
		if r.Access != AccessReadWrite && r.Access != AccessReadOnly {
			ps.add("workspace.roots[%d].access = %q: want \"rw\" (tools may change it) or \"ro\" (tools may only read it)", i, r.Access)
		}
		switch {
		case r.Path == "":
			ps.add("workspace.roots[%d].path is empty: want a folder path", i)
		case !filepath.IsAbs(r.Path):
			// Load has already resolved "~/" and relative paths.
			ps.add("workspace.roots[%d].path = %q: want an absolute path", i, r.Path)
		}
	}
	if w.MaxFileBytes <= 0 {
		ps.add("workspace.max_file_bytes = %d: want a positive number of bytes", w.MaxFileBytes)
	}
	if w.MaxCheckpoints <= 0 {
		ps.add("workspace.max_checkpoints = %d: want a positive number", w.MaxCheckpoints)
	}
	if w.MaxCheckpointBytes <= 0 {
		ps.add("workspace.max_checkpoint_bytes = %d: want a positive number of bytes", w.MaxCheckpointBytes)
	}
}

func validateFiles(f *Files, roots []Root, ps *problems) {
	for i, p := range f.Sensitive {
		if err := checkGlob(p); err != nil {
			ps.add("files.sensitive[%d] = %q: %v", i, p, err)
		}
	}
	for i, a := range f.AllowSensitive {
		rel := a
		if name, r, ok := strings.Cut(a, ":"); ok {
			rel = r
			if !slices.ContainsFunc(roots, func(r Root) bool { return r.Name == name }) {
				ps.add("files.allow_sensitive[%d] = %q: no workspace root is named %q; write a path relative to the first root, or root:path", i, a, name)
				continue
			}
		}
		if rel == "" || path.IsAbs(rel) || path.Clean(rel) != rel || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			ps.add("files.allow_sensitive[%d] = %q: want one clean path relative to a root, such as \"fixtures/.env\" (no globs, no leading /, no ..)", i, a)
		}
	}
}

func validateRules(rules []Rule, ps *problems) {
	seen := make(map[string]bool)
	for i, r := range rules {
		switch {
		case r.ID == "":
			ps.add("rules[%d].id is missing: want a unique name such as \"read-notes\"", i)
		case !ruleIDRE().MatchString(r.ID):
			ps.add("rules[%d].id = %q: want a name made of letters, digits, _, ., : and -", i, r.ID)
		case seen[r.ID]:
			ps.add("rules[%d].id = %q: ids must be unique", i, r.ID)
		}
		seen[r.ID] = true
		if !toolNameRE().MatchString(r.Tool) {
			ps.add("rules[%d].tool = %q: want a tool name made of a-z, 0-9 and _", i, r.Tool)
		}
		if !slices.Contains(effects, r.Effect) {
			ps.add("rules[%d].effect = %q: want one of %s", i, r.Effect, strings.Join(effects, ", "))
		}
		if r.Path != "" {
			if err := checkGlob(r.Path); err != nil {
				ps.add("rules[%d].path = %q: %v", i, r.Path, err)
			}
		}
		if len(r.Command) > 0 {
			if err := checkCommand(r.Command); err != nil {
				ps.add("rules[%d].command = %q: %v", i, r.Command, err)
			}
		}
		if r.Host != "" {
			if r.Path != "" {
				ps.add("rules[%d]: path and host do not go together: path matches files, host matches web requests; write two rules", i)
			}
			if !policy.HostPattern(r.Host) {
				ps.add("rules[%d].host = %q: want a lowercase host name or IPv4 address such as \"api.weather.example\", or \"*.example.com\" for any name under example.com (no scheme, port or path)", i, r.Host)
			}
		}
	}
}

// checkCommand accepts an argv pattern whose first element is an absolute
// program path (rules match the resolved path, never a bare first word),
// whose elements are path.Match patterns, and where "**" may only be last.
func checkCommand(c []string) error {
	if !strings.HasPrefix(c[0], "/") {
		return fmt.Errorf("the first element must be the program's absolute path, such as \"/usr/bin/git\" (rules match the resolved path, not the first word)")
	}
	for i, e := range c {
		if e == "**" {
			if i != len(c)-1 {
				return fmt.Errorf("\"**\" may only be the last element")
			}
			continue
		}
		if _, err := path.Match(e, ""); err != nil {
			return fmt.Errorf("element %q is not a valid pattern", e)
		}
	}
	return nil
}

// checkGlob accepts a slash-separated, root-relative glob whose elements are
// "**" or path.Match patterns. It rejects what could never match a cleaned
// root-relative path ("", ".", "..", a leading "/") so that a typo does not
// silently disable a rule.
func checkGlob(g string) error {
	if strings.HasPrefix(g, "/") {
		return fmt.Errorf("want a path relative to a workspace root, without a leading /")
	}
	if strings.Contains(g, `\`) {
		return fmt.Errorf(`want "/" as the separator, without backslashes`)
	}
	for elem := range strings.SplitSeq(g, "/") {
		switch elem {
		case "":
			return fmt.Errorf("want no empty path elements (// or a trailing /)")
		case ".", "..":
			return fmt.Errorf("want no %q path elements", elem)
		case "**":
			continue
		}
		if _, err := path.Match(elem, ""); err != nil {
			return fmt.Errorf("invalid pattern %q: %v", elem, err)
		}
	}
	return nil
}

// badIDRune reports runes not allowed in an owner id.
func badIDRune(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r)
}
