package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// env returns a getenv backed by m.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func homePaths(dir string) Paths {
	return Paths{
		Home:          dir,
		ConfigFile:    dir + "/config.toml",
		DataDir:       dir + "/data",
		DBFile:        dir + "/data/homard.db",
		WorkspaceDir:  dir + "/workspace",
		CheckpointDir: dir + "/data/checkpoints",
	}
}

func xdgPaths(config, data string) Paths {
	return Paths{
		ConfigFile:    config + "/homard/config.toml",
		DataDir:       data + "/homard",
		DBFile:        data + "/homard/homard.db",
		WorkspaceDir:  data + "/homard/workspace",
		CheckpointDir: data + "/homard/checkpoints",
	}
}

func TestResolvePaths(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)

	tests := []struct {
		name string
		home string
		env  map[string]string
		want Paths
	}{
		{"flag", "/srv/h", nil, homePaths("/srv/h")},
		{"flag is cleaned", "/srv/h/../h2/", nil, homePaths("/srv/h2")},
		{"flag relative to cwd", "rel/h", nil, homePaths(cwd + "/rel/h")},
		{"flag tilde", "~/hh", map[string]string{"HOME": "/home/o"}, homePaths("/home/o/hh")},
		{"HOMARD_HOME", "", map[string]string{"HOMARD_HOME": "/env/h", "HOME": "/home/o"}, homePaths("/env/h")},
		{"HOMARD_HOME relative", "", map[string]string{"HOMARD_HOME": "eh"}, homePaths(cwd + "/eh")},
		{"flag beats HOMARD_HOME", "/flag/h", map[string]string{"HOMARD_HOME": "/env/h"}, homePaths("/flag/h")},
		{"home beats XDG", "", map[string]string{
			"HOMARD_HOME": "/env/h", "XDG_CONFIG_HOME": "/xc", "XDG_DATA_HOME": "/xd",
		}, homePaths("/env/h")},
		{"XDG set", "", map[string]string{
			"HOME": "/home/o", "XDG_CONFIG_HOME": "/xc", "XDG_DATA_HOME": "/xd",
		}, xdgPaths("/xc", "/xd")},
		{"XDG set without HOME", "", map[string]string{
			"XDG_CONFIG_HOME": "/xc", "XDG_DATA_HOME": "/xd",
		}, xdgPaths("/xc", "/xd")},
		{"XDG defaults", "", map[string]string{"HOME": "/home/o"},
			xdgPaths("/home/o/.config", "/home/o/.local/share")},
		{"relative XDG ignored", "", map[string]string{
			"HOME": "/home/o", "XDG_CONFIG_HOME": "xc", "XDG_DATA_HOME": "./xd",
		}, xdgPaths("/home/o/.config", "/home/o/.local/share")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolvePaths(tt.home, env(tt.env))
			if err != nil {
				t.Fatalf("ResolvePaths(%q, %v): %v", tt.home, tt.env, err)
			}
			want := tt.want
			for _, p := range []*string{&want.Home, &want.ConfigFile, &want.DataDir, &want.DBFile, &want.WorkspaceDir, &want.CheckpointDir} {
				if *p != "" {
					*p = filepath.FromSlash(*p)
				}
			}
			if got != want {
				t.Errorf("ResolvePaths(%q, %v) =\n%+v\nwant\n%+v", tt.home, tt.env, got, want)
			}
		})
	}
}

func TestResolvePathsErrors(t *testing.T) {
	tests := []struct {
		name string
		home string
		env  map[string]string
		want string // substring of the error
	}{
		{"no HOME for XDG", "", nil, "HOME"},
		{"relative HOME", "", map[string]string{"HOME": "home/o"}, "HOME"},
		{"only config XDG", "", map[string]string{"XDG_CONFIG_HOME": "/xc"}, "XDG_DATA_HOME"},
		{"tilde without HOME", "~/h", nil, `cannot expand "~"`},
		{"tilde user", "~bob/h", map[string]string{"HOME": "/home/o"}, `"~user" paths are not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolvePaths(tt.home, env(tt.env))
			if err == nil {
				t.Fatalf("ResolvePaths(%q, %v) = %+v; want an error containing %q", tt.home, tt.env, got, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ResolvePaths(%q, %v) error = %q; want it to contain %q", tt.home, tt.env, err, tt.want)
			}
		})
	}
}
