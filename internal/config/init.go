package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/homard/homard/internal/atomicfile"
)

// InitOptions are the choices `homard init` passes on. Empty fields take the
// defaults of Default, or of the chosen provider.
type InitOptions struct {
	// Provider is "openai", "anthropic" or a preset (presets.go). Empty
	// means "openai".
	Provider string
	// BaseURL overrides the provider's endpoint. Empty means its default.
	BaseURL string
	// Model overrides the provider's default model name.
	Model string
	// APIKeyEnv names the variable holding the API key. Empty means
	// OPENAI_API_KEY or ANTHROPIC_API_KEY.
	APIKeyEnv string
	// APIKeySecret names a vault secret holding the API key instead.
	APIKeySecret string
	// Mode is the permission mode. Empty means "smart".
	Mode string
	// Force replaces an existing config file.
	Force bool
	// StoreURL is store.url: a PostgreSQL database's URL, or "" for the
	// SQLite file (tests on PostgreSQL set it; storetest.URL).
	StoreURL string
}

// Init writes a new config file at p.ConfigFile built from Default(p) and o,
// and returns the Config written. It validates first and writes nothing if
// the options are invalid. It refuses to replace an existing file unless
// o.Force is set; the error wraps fs.ErrExist. It creates p.DataDir and
// p.CheckpointDir with mode 0700 and p.WorkspaceDir with mode 0755, then
// writes the file atomically with mode 0600. It does not create the database.
func Init(p Paths, o InitOptions) (*Config, error) {
	for _, d := range []string{p.ConfigFile, p.DataDir, p.CheckpointDir, p.WorkspaceDir} {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("init config: path %q is not absolute: get Paths from ResolvePaths", d)
		}
	}
	c := Default(p)
	if o.Provider != "" {
		pr, ok := LookupPreset(o.Provider)
		if !ok {
			return nil, fmt.Errorf("init config: provider %q: want one of %s", o.Provider, ProviderNames())
		}
		d := pr.model()
		d.ContextTokens = pr.Context()
		// not provider defaults
		d.FirstEventTimeout, d.IdleTimeout = c.Model.FirstEventTimeout, c.Model.IdleTimeout
		d.RequestTimeout, d.ConnectTimeout = c.Model.RequestTimeout, c.Model.ConnectTimeout
		c.Model = d
	}
	if o.BaseURL != "" {
		c.Model.BaseURL = o.BaseURL
	}
	if o.Model != "" {
		c.Model.Name = o.Model
	}
	if o.APIKeyEnv != "" {
		c.Model.APIKeyEnv = o.APIKeyEnv
	}
	c.Model.APIKeySecret = o.APIKeySecret
	if o.Mode != "" {
		if !slices.Contains(modes, o.Mode) {
			return nil, fmt.Errorf("init config: mode %q: want one of %s", o.Mode, strings.Join(modes, ", "))
		}
		c.Permissions.Mode = o.Mode
	}
	c.Store.URL = o.StoreURL
	// Render validates: an invalid URL or key variable stops here.
	data, err := Render(c)
	if err != nil {
		return nil, fmt.Errorf("init config: %w", err)
	}

	if !o.Force {
		if _, err := os.Lstat(p.ConfigFile); err == nil {
			return nil, existsError(p.ConfigFile)
		}
	}
	for _, d := range []struct {
		path string
		perm fs.FileMode
	}{
		{filepath.Dir(p.ConfigFile), 0o700},
		{p.DataDir, 0o700},
		{p.CheckpointDir, 0o700},
		{p.WorkspaceDir, 0o755},
	} {
		if err := makeDir(d.path, d.perm); err != nil {
			return nil, fmt.Errorf("init config: %w", err)
		}
	}
	if err := writeFile(p.ConfigFile, data, o.Force); err != nil {
		return nil, fmt.Errorf("init config: %w", err)
	}
	return c, nil
}

func existsError(path string) error {
	return fmt.Errorf("config file %s already exists: pass --force to overwrite it: %w", path, fs.ErrExist)
}

// makeDir creates dir and its parents. A folder it creates gets exactly perm
// whatever the umask; an existing folder keeps its mode, since the owner may
// have chosen it. Missing parents get perm minus the umask.
func makeDir(dir string, perm fs.FileMode) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	return os.Chmod(dir, perm)
}

// writeFile replaces path with data atomically: readers see the old file or
// the whole new one, never a part. Without force it never replaces an
// existing file, even one created after Init's first check
// (atomicfile.Staged.Place).
func writeFile(path string, data []byte, force bool) error {
	s, err := atomicfile.Stage(path, data, 0o600)
	if err != nil {
		return err
	}
	defer s.Discard()
	if force {
		return s.Replace()
	}
	err = s.Place()
	if errors.Is(err, fs.ErrExist) {
		return existsError(path)
	}
	return err
}
