package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Paths says where homard keeps its files. Every path is absolute and clean.
//
// With a home folder (--home DIR or HOMARD_HOME) everything lives under it:
//
//	HOME/config.toml
//	HOME/data/homard.db
//	HOME/data/checkpoints/
//	HOME/workspace/
//
// Otherwise homard follows the XDG base directory spec:
//
//	$XDG_CONFIG_HOME/homard/config.toml        (default ~/.config)
//	$XDG_DATA_HOME/homard/homard.db            (default ~/.local/share)
//	$XDG_DATA_HOME/homard/checkpoints/
//	$XDG_DATA_HOME/homard/workspace/
//
// The default workspace sits under the data folder rather than in a visible
// ~/homard-workspace: homard should not create folders in the owner's home
// that they did not ask for, and `homard init` prints where it is. An owner
// who wants it elsewhere changes workspace.roots.
type Paths struct {
	// Home is the single folder holding everything, or empty when the XDG
	// layout is used.
	Home string
	// ConfigFile is the config.toml to load or write.
	ConfigFile string
	// DataDir holds the database and checkpoints (created with mode 0700).
	DataDir string
	// DBFile is the SQLite database, inside DataDir.
	DBFile string
	// WorkspaceDir is where the default workspace root "main" lives.
	WorkspaceDir string
	// CheckpointDir holds file checkpoints, inside DataDir.
	CheckpointDir string
}

// VaultFile is the encrypted vault, inside DataDir.
func (p Paths) VaultFile() string { return filepath.Join(p.DataDir, "vault.json") }

// VaultKeyFile is the vault's key, inside DataDir.
func (p Paths) VaultKeyFile() string { return filepath.Join(p.DataDir, "vault.key") }

// ResolvePaths computes Paths. home is the --home flag; when it is empty the
// HOMARD_HOME variable is used, and when that is empty too, XDG. A relative
// home is taken relative to the current directory and a leading "~/" is
// expanded from HOME. getenv is os.Getenv in production and a map lookup in
// tests. Relative XDG_CONFIG_HOME or XDG_DATA_HOME values are ignored, as
// the XDG spec requires.
func ResolvePaths(home string, getenv func(string) string) (Paths, error) {
	if home == "" {
		home = getenv("HOMARD_HOME")
	}
	if home != "" {
		dir, err := expandTilde(home, getenv)
		if err != nil {
			return Paths{}, fmt.Errorf("resolve home folder %q: %w", home, err)
		}
		dir, err = filepath.Abs(dir)
		if err != nil {
			return Paths{}, fmt.Errorf("resolve home folder %q: %w", home, err)
		}
		data := filepath.Join(dir, "data")
		return Paths{
			Home:          dir,
			ConfigFile:    filepath.Join(dir, "config.toml"),
			DataDir:       data,
			DBFile:        filepath.Join(data, "homard.db"),
			WorkspaceDir:  filepath.Join(dir, "workspace"),
			CheckpointDir: filepath.Join(data, "checkpoints"),
		}, nil
	}

	configHome, err := xdgDir(getenv, "XDG_CONFIG_HOME", ".config")
	if err != nil {
		return Paths{}, err
	}
	dataHome, err := xdgDir(getenv, "XDG_DATA_HOME", filepath.Join(".local", "share"))
	if err != nil {
		return Paths{}, err
	}
	data := filepath.Join(dataHome, "homard")
	return Paths{
		ConfigFile:    filepath.Join(configHome, "homard", "config.toml"),
		DataDir:       data,
		DBFile:        filepath.Join(data, "homard.db"),
		WorkspaceDir:  filepath.Join(data, "workspace"),
		CheckpointDir: filepath.Join(data, "checkpoints"),
	}, nil
}

// xdgDir returns the XDG base folder named by env, or HOME/fallback when the
// variable is unset or relative.
func xdgDir(getenv func(string) string, env, fallback string) (string, error) {
	if v := getenv(env); filepath.IsAbs(v) {
		return filepath.Clean(v), nil
	}
	h := getenv("HOME")
	if !filepath.IsAbs(h) {
		return "", fmt.Errorf("cannot locate the %s folder: HOME is not set to an absolute path; set HOME or %s, or pass --home", env, env)
	}
	return filepath.Join(h, fallback), nil
}

// expandTilde replaces a leading "~" or "~/" in p with HOME. A "~" later in
// the path ("a/~") is an ordinary name; "~bob/x" is rejected because homard
// does not look up other users' folders.
func expandTilde(p string, getenv func(string) string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		if strings.HasPrefix(p, "~") {
			return "", errors.New(`"~user" paths are not supported; use "~/" or an absolute path`)
		}
		return p, nil
	}
	h := getenv("HOME")
	if !filepath.IsAbs(h) {
		return "", errors.New(`cannot expand "~": HOME is not set to an absolute path`)
	}
	return filepath.Join(h, strings.TrimPrefix(p, "~")), nil
}
