// Package setup makes and changes a homard home: `homard setup` (Run: the
// model, its key in the vault, the mode and the workspace folders, tested
// before anything is written; a failed setup writes nothing), `homard init`
// (Init), the local-server probe (DetectOllama), and the toolchain check
// setup and doctor share (Toolchains). It needs no opened runtime.
package setup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/provider"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/tools"
)

// Options are the answers to `homard setup`'s questions, from the
// wizard or from flags. Empty fields keep what the config says, or take
// the provider's default.
type Options struct {
	// Provider is a model.provider name (config.Presets). Empty keeps the
	// config's; it is required when there is no config yet.
	Provider string
	// BaseURL is the API root. Empty keeps the config's when the provider
	// is the config's, else means the preset's, or for Ollama OllamaURL +
	// "/v1".
	BaseURL string
	// Model is the model name. Empty keeps the config's when the provider
	// is the config's, else means the preset's default; a local preset has
	// none, so it is then an error that lists Ollama's models.
	Model string
	// APIKey is the key the owner typed or piped in. It is stored in the
	// vault (never in config.toml) as secret "model-<provider>", bound to
	// the base URL's host. Empty means no new key: the config keeps its
	// vault secret for the same provider and endpoint, or reads the
	// preset's environment variable, or (local) uses none.
	APIKey string
	// Mode is the permission mode. Empty keeps the config's (smart in a
	// new home).
	Mode string
	// Workspaces are the folders tools may use, the first named "main".
	// Empty keeps the config's writable roots (the home's workspace
	// folder in a new home).
	Workspaces []string
	// ReadOnly are folders tools may read but never change (roots with
	// access = "ro": the owner's home, a reference checkout). Empty keeps
	// the config's read-only roots when nil; a non-nil empty list removes
	// them.
	ReadOnly []string
	// SkipTest writes the config without testing the provider first.
	SkipTest bool
	// TestTimeout bounds the provider test. Zero means 30s.
	TestTimeout time.Duration
	// OllamaURL is where Ollama is looked for. Empty means
	// DefaultOllamaURL.
	OllamaURL string
	// Getenv reads the environment. Nil means os.Getenv.
	Getenv func(string) string
	// StoreURL, when set, is where a new home's store is created instead
	// of store.url (cmd/homard passes HOMARD_STORE_URL, as it does to
	// app.Options.StoreURL).
	StoreURL string
	// Say is the language of the errors and notes. The zero Printer is
	// English.
	Say lang.Printer
}

// Result says what Setup did.
type Result struct {
	ConfigFile string
	// Created is true when Setup made the home (as `homard init` would).
	Created bool
	Config  *config.Config
	// KeyFrom says where the key comes from, for people: "vault secret
	// model-deepseek", "$DEEPSEEK_API_KEY", "no key (local server)".
	KeyFrom string
	// Test is the provider test's report; nil when it was skipped.
	Test *provider.Report
	// Migrated says how an older config file was brought to the current
	// config_version and where its backup is; empty when it was current.
	Migrated string
	// Toolchains is doctor's suggestion when toolchains on the owner's
	// $PATH are not where run_command looks (the commands.path line to
	// add); empty when there is none.
	Toolchains string
}

// ErrBadOption wraps an answer the owner gave wrong (the CLI exits 2).
var ErrBadOption = errors.New("bad request") // lang:en: a sentinel

// ErrTest wraps a failed provider test: nothing was written.
var ErrTest = errors.New("provider test failed") // lang:en: a sentinel

// Run connects homard to a model in one step. It builds the config the
// answers describe (a new home as `homard init` would, or the existing
// config.toml edited in place with its comments kept; a provider other
// than the config's also sets model.context_tokens to its preset's
// size), validates it, tests the provider with the key, and only then
// creates the home, stores the key in the vault and replaces config.toml
// atomically. What the answers leave empty keeps the config's. A failed setup writes nothing: a key the
// vault would refuse (too short) is refused before anything is written,
// and so is a failed test unless o.SkipTest.
func Run(ctx context.Context, paths config.Paths, o Options) (Result, error) {
	res := Result{ConfigFile: paths.ConfigFile}
	say := o.Say
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	old, exists, err := readConfig(say, paths)
	if err != nil {
		return res, err
	}
	// An older config is edited as migrated; storeSetup keeps a backup
	// of it as it was before writing.
	mig, err := config.PlanMigration(paths.ConfigFile, old)
	if err != nil {
		return res, say.Errorf("setup: %w", err)
	}
	old = mig.After
	var oldModel config.Model
	var oldRoots []config.Root
	if exists {
		if c, err := config.Load(paths.ConfigFile); err == nil {
			oldModel = c.Model
			oldRoots = c.Workspace.Roots
		}
	}
	if o.Provider == "" {
		if oldModel.Provider == "" {
			return res, say.Errorf("%w: setup needs --provider (there is no config to keep it from): one of %s", ErrBadOption, config.ProviderNames())
		}
		o.Provider = oldModel.Provider
	}
	preset, ok := config.LookupPreset(o.Provider)
	if !ok {
		return res, say.Errorf("setup: provider %q: want one of %s", o.Provider, config.ProviderNames())
	}

	m := config.Model{Provider: preset.Name, BaseURL: o.BaseURL, Name: o.Model}
	if oldModel.Provider == preset.Name {
		// The same provider: keep its endpoint and model unless told.
		if m.BaseURL == "" {
			m.BaseURL = oldModel.BaseURL
		}
		if m.Name == "" && m.BaseURL == oldModel.BaseURL {
			m.Name = oldModel.Name
		}
	}
	if m.BaseURL == "" {
		m.BaseURL = preset.BaseURL
		if preset.Name == "ollama" && o.OllamaURL != "" {
			m.BaseURL = strings.TrimRight(o.OllamaURL, "/") + "/v1"
		}
	}
	if m.Name == "" {
		m.Name = preset.Model
	}
	if m.Name == "" {
		return res, missingModel(say, ctx, preset, o.OllamaURL)
	}
	// The key: a new one goes to the vault; else keep the vault secret of
	// the same provider and endpoint; else the environment variable.
	secret := secrets.Secret{}
	switch {
	case o.APIKey != "":
		s, err := modelSecret(say, m, preset)
		if err != nil {
			return res, err
		}
		// Refused here, before anything is written, if the vault would
		// refuse it once the home exists.
		if err := secrets.Check(s, []byte(o.APIKey)); err != nil {
			return res, say.Errorf("%w: setup: the key: %w (nothing was written)", ErrBadOption, err)
		}
		secret = s
		m.APIKeySecret = s.Name
		m.APIKeyEnv = preset.KeyEnv
	case oldModel.APIKeySecret != "" && oldModel.Provider == m.Provider && oldModel.BaseURL == m.BaseURL:
		m.APIKeySecret, m.APIKeyEnv = oldModel.APIKeySecret, oldModel.APIKeyEnv
	case oldModel.Provider == m.Provider && oldModel.APIKeyEnv != "":
		m.APIKeyEnv = oldModel.APIKeyEnv
	default:
		m.APIKeyEnv = preset.KeyEnv
	}

	edits := []config.KeyEdit{
		{Table: "model", Key: "provider", Value: config.QuoteString(m.Provider)},
		{Table: "model", Key: "base_url", Value: config.QuoteString(m.BaseURL)},
		{Table: "model", Key: "name", Value: config.QuoteString(m.Name)},
		{Table: "model", Key: "api_key_env", Value: config.QuoteString(m.APIKeyEnv)},
		{Table: "model", Key: "api_key_secret", Value: config.QuoteString(m.APIKeySecret)},
	}
	if oldModel.Provider != preset.Name {
		// A new provider is a new model: its context size replaces the
		// old model's (a new home's file holds the generic default).
		edits = append(edits, config.KeyEdit{Table: "model", Key: "context_tokens", Value: strconv.Itoa(preset.Context())})
	}
	if o.Mode != "" {
		if _, err := policy.ParseMode(o.Mode); err != nil {
			return res, say.Errorf("setup: %w", err)
		}
		edits = append(edits, config.KeyEdit{Table: "permissions", Key: "mode", Value: config.QuoteString(o.Mode)})
	}
	if len(o.Workspaces) > 0 || o.ReadOnly != nil {
		roots, err := setupRoots(say, o.Workspaces, o.ReadOnly, oldRoots, paths)
		if err != nil {
			return res, err
		}
		edits = append(edits, config.KeyEdit{Table: "workspace", Key: "roots", Value: config.RootsValue(roots)})
	}
	data, err := config.EditKeys(old, edits...)
	if err != nil {
		return res, say.Errorf("setup: %s: %w", paths.ConfigFile, err)
	}
	cfg, err := config.Check(paths.ConfigFile, data)
	if err != nil {
		return res, say.Errorf("setup: %w", err)
	}
	if err := config.CheckRoots(cfg.Workspace.Roots, paths, config.OwnerHomes(getenv)); err != nil {
		return res, say.Errorf("setup: %w", err)
	}

	key, from, err := setupKey(say, cfg.Model, o.APIKey, exists, paths, getenv)
	res.KeyFrom = from
	if !o.SkipTest {
		if err != nil {
			return res, say.Errorf("%w: %w (nothing was written)", ErrTest, err)
		}
		timeout := o.TestTimeout
		if timeout == 0 {
			timeout = 30 * time.Second
		}
		rep, err := provider.Probe(ctx, cfg.Model, key, timeout, fmt.Sprintf("homard setup --test-timeout %s", 2*timeout)) // lang:en: a command
		if err != nil {
			return res, say.Errorf("%w: %s (nothing was written; fix it and run homard setup again, or pass --skip-test)",
				ErrTest, Explain(say, cfg.Model, err))
		}
		res.Test = &rep
	}

	if !exists {
		if _, err := Init(ctx, paths, config.InitOptions{}, o.StoreURL); err != nil {
			return res, say.Errorf("setup: %w", err)
		}
		res.Created = true
	}
	if err := storeSetup(say, paths, secret, o.APIKey, data, mig, &res); err != nil {
		if res.Created {
			// Init's keyless config must not stand for a setup that
			// failed: without it the home is not initialised, and setup
			// runs again from the start.
			_ = os.Remove(paths.ConfigFile)
		}
		return res, err
	}
	if c := Toolchains(getenv("PATH"), tools.CommandPath(), res.Config.Commands.Path, res.Config.Workspace.Roots); c.Info {
		res.Toolchains = c.Detail
	}
	return res, nil
}

// storeSetup stores the key (when one was typed) and then the config,
// after a backup of an older config as it was (mig).
func storeSetup(say lang.Printer, paths config.Paths, secret secrets.Secret, key string, data []byte, mig *config.Migration, res *Result) error {
	if secret.Name != "" {
		v, err := secrets.OpenVault(paths.VaultFile(), paths.VaultKeyFile())
		if err != nil {
			return say.Errorf("setup: open the vault: %w", err)
		}
		if err := v.Set(secret, []byte(key)); err != nil {
			return say.Errorf("setup: store the key: %w", err)
		}
	}
	if mig.Needed() {
		backup, err := mig.WriteBackup()
		if err != nil {
			return say.Errorf("setup: %w", err)
		}
		res.Migrated = say.Sprintf("%s; the file as it was is in %s", mig.Summary(), backup)
	}
	cfg, err := config.WriteChecked(paths.ConfigFile, data)
	if err != nil {
		return say.Errorf("setup: %w", err)
	}
	res.Config = cfg
	return nil
}

// readConfig returns the config file's text, or when there is none yet the
// commented file `homard init` would write.
func readConfig(say lang.Printer, paths config.Paths) ([]byte, bool, error) {
	data, err := os.ReadFile(paths.ConfigFile)
	if err == nil {
		return data, true, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, say.Errorf("setup: %w", err)
	}
	data, err = config.Render(config.Default(paths))
	if err != nil {
		return nil, false, say.Errorf("setup: %w", err)
	}
	return data, false, nil
}

// modelSecret is the vault entry for a typed key: named after the
// provider, bound to the endpoint's host. Plain http is allowed only to
// loopback, where the key never leaves the machine.
func modelSecret(say lang.Printer, m config.Model, p config.Preset) (secrets.Secret, error) {
	u, err := url.Parse(m.BaseURL)
	if err != nil || u.Host == "" {
		return secrets.Secret{}, say.Errorf("setup: base URL %q: want an absolute http or https URL such as %q", m.BaseURL, p.BaseURL)
	}
	s := secrets.Secret{Name: "model-" + p.Name, Hosts: []string{strings.ToLower(u.Host)}}
	if u.Scheme == "http" {
		if !isLoopback(u.Hostname()) {
			return s, say.Errorf("setup: the key would travel in clear text to %s: use an https URL; for a server on your own network without TLS, run `homard secret set %s --host %s --allow-http` yourself and put api_key_secret = %q in [model]",
				u.Host, s.Name, strings.ToLower(u.Host), s.Name)
		}
		s.AllowHTTP = true
	}
	return s, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// setupKey finds the key the provider test sends and says where it comes
// from. Nothing is created: the vault is opened only if it exists.
func setupKey(say lang.Printer, m config.Model, typed string, homeExists bool, paths config.Paths, getenv func(string) string) (key, from string, err error) {
	switch {
	case typed != "":
		return typed, say.Sprintf("vault secret %s", m.APIKeySecret), nil
	case m.APIKeySecret != "":
		from = say.Sprintf("vault secret %s", m.APIKeySecret)
		if _, err := os.Stat(paths.VaultKeyFile()); !homeExists || err != nil {
			return "", from, say.Errorf("model.api_key_secret names %q but there is no vault here: type the key again", m.APIKeySecret)
		}
		v, err := secrets.OpenVault(paths.VaultFile(), paths.VaultKeyFile())
		if err != nil {
			return "", from, err
		}
		key, err := provider.Key(m, getenv, v)
		return key, from, err
	case m.APIKeyEnv == "":
		return "", say.T("no key (local server)"), nil
	}
	from = "$" + m.APIKeyEnv
	key = getenv(m.APIKeyEnv)
	if key == "" && !m.Local() && !LoopbackURL(m.BaseURL) {
		return "", from, say.Errorf("%s not set: type the key when homard setup asks, pass it with --api-key-stdin (it goes to the encrypted vault), or export %s=…", m.APIKeyEnv, m.APIKeyEnv)
	}
	return key, from, nil
}

func LoopbackURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && isLoopback(u.Hostname())
}

// rootNameRE is compiled on first use (setup), not at init.
var rootNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9_-]+`) })

// setupRoots builds the roots setup writes: the writable folders rw (or
// the old config's writable roots when none are given) followed by the
// read-only folders (or the old read-only roots when none are given), so
// changing one list never drops the other or an access mode.
func setupRoots(say lang.Printer, rw, ro []string, old []config.Root, paths config.Paths) ([]config.Root, error) {
	keep := func(readOnly bool) []string {
		var dirs []string
		for _, r := range old {
			if r.ReadOnly() == readOnly {
				dirs = append(dirs, r.Path)
			}
		}
		return dirs
	}
	if len(rw) == 0 {
		rw = keep(false)
		if len(rw) == 0 && len(old) == 0 {
			rw = []string{paths.WorkspaceDir}
		}
	}
	if ro == nil {
		ro = keep(true)
	}
	if len(rw) == 0 {
		return nil, say.Errorf("setup: no writable workspace folder: pass --workspace DIR (the first root, named main, is where relative paths point)")
	}
	return workspaceRoots(say, append(slices.Clone(rw), ro...), len(rw), paths)
}

// workspaceRoots turns folders into roots: absolute, existing (the home's
// own workspace folder excepted: Init creates it), the first named "main",
// the others after their base name; the folders from index firstRO on are
// read-only.
func workspaceRoots(say lang.Printer, dirs []string, firstRO int, paths config.Paths) ([]config.Root, error) {
	var roots []config.Root
	seen := map[string]bool{}
	for i, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, say.Errorf("setup: workspace %s: %w", d, err)
		}
		if abs != paths.WorkspaceDir {
			fi, err := os.Stat(abs)
			if err != nil || !fi.IsDir() {
				return nil, say.Errorf("setup: workspace %s is not an existing folder: create it first or choose another", abs)
			}
		}
		name := "main"
		if i > 0 {
			name = strings.Trim(rootNameRE().ReplaceAllString(strings.ToLower(filepath.Base(abs)), "-"), "-")
			if name == "" {
				name = "root"
			}
		}
		for n := 2; seen[name]; n++ {
			name = fmt.Sprintf("%s-%d", strings.TrimRight(name, "-0123456789"), n)
		}
		seen[name] = true
		access := config.AccessReadWrite
		if i >= firstRO {
			access = config.AccessReadOnly
		}
		roots = append(roots, config.Root{Name: name, Path: abs, Access: access})
	}
	return roots, nil
}

// ModeInfo is one permission mode with a line saying what it does.
type ModeInfo struct {
	Name, Line string
}

// modeLines explains each policy mode in one line, for `homard setup`.
var modeLines = map[policy.Mode]string{
	policy.ModeSafe:      lang.N("asks before anything but low-risk reads"),
	policy.ModeSmart:     lang.N("also runs what your rules allow (a good start)"),
	policy.ModeAutopilot: lang.N("also runs low/medium risk actions; code in the sandbox"),
	policy.ModeYolo:      lang.N("asks only for critical actions"),
}

// Modes lists the permission modes, most supervised first.
func Modes() []ModeInfo {
	out := make([]ModeInfo, len(policy.Modes))
	for i, m := range policy.Modes {
		out[i] = ModeInfo{Name: string(m), Line: modeLines[m]}
	}
	return out
}

// Init creates a new home: config, data folder, workspace and database.
// The database is created where storeURL says when it is set
// (HOMARD_STORE_URL, which the home's runtime will use too), else where
// store.url does.
func Init(ctx context.Context, paths config.Paths, o config.InitOptions, storeURL string) (*config.Config, error) {
	cfg, err := config.Init(paths, o)
	if err != nil {
		return nil, err
	}
	where, name := cfg.StoreURL(paths.DBFile, storeURL)
	st, err := store.OpenURL(ctx, where)
	if err != nil {
		return nil, fmt.Errorf("create database %s: %w", name, err) // lang:en: init's error
	}
	return cfg, st.Close()
}
