package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRoots: a root that is or contains homard's files or the owner's
// home, or lies inside homard's folders (other than the default workspace),
// is refused, also when reached through a symlink; ordinary folders and the
// default workspace are accepted (the twins).
func TestCheckRoots(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	owner := filepath.Join(base, "owner") // the owner's $HOME
	xdg, err := ResolvePaths("", env(map[string]string{"HOME": owner}))
	if err != nil {
		t.Fatal(err)
	}
	home, err := ResolvePaths(filepath.Join(base, "hh"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{xdg.DataDir, xdg.WorkspaceDir, home.DataDir, home.WorkspaceDir, filepath.Join(owner, "projects"), filepath.Join(base, "elsewhere")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(xdg.DataDir, filepath.Join(owner, "projects", "data-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(owner, filepath.Join(base, "elsewhere", "me")); err != nil {
		t.Fatal(err)
	}
	homes := []string{owner}
	for _, c := range []struct {
		name string
		p    Paths
		root string
		want string // substring of the refusal; "" accepts
	}{
		{"xdg default workspace", xdg, xdg.WorkspaceDir, ""},
		{"xdg folder in the default workspace", xdg, filepath.Join(xdg.WorkspaceDir, "sub"), ""},
		{"xdg projects", xdg, filepath.Join(owner, "projects"), ""},
		{"home-layout default workspace", home, home.WorkspaceDir, ""},
		{"elsewhere", xdg, filepath.Join(base, "elsewhere"), ""},

		{"owner home", xdg, owner, "config file"},
		{"owner home, home layout", home, owner, "your home folder"},
		{"parent of the owner home", xdg, filepath.Join(base, "owner", ".."), "contains"},
		{"filesystem root", home, "/", "contains"},
		{"symlink to the owner home", home, filepath.Join(base, "elsewhere", "me"), "your home folder"},
		{"xdg data dir", xdg, xdg.DataDir, "data folder"},
		{"xdg data parent", xdg, filepath.Dir(xdg.DataDir), "data folder"},
		{"xdg config folder", xdg, filepath.Dir(xdg.ConfigFile), "config file"},
		{"inside xdg data", xdg, filepath.Join(xdg.DataDir, "memory"), "lies inside homard's data folder"},
		{"inside xdg config folder", xdg, filepath.Join(filepath.Dir(xdg.ConfigFile), "x"), "lies inside homard's config folder"},
		{"checkpoints", xdg, xdg.CheckpointDir, "checkpoints"},
		{"symlink to xdg data", xdg, filepath.Join(owner, "projects", "data-link"), "data folder"},
		{"symlink inside xdg data", xdg, filepath.Join(owner, "projects", "data-link", "memory"), "lies inside"},
		{"--home itself", home, home.Home, "config file"},
		{"inside --home", home, filepath.Join(home.Home, "other"), "lies inside homard's"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckRoots([]Root{{Name: "main", Path: c.root}}, c.p, homes)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("CheckRoots(%s) = %v; want accepted", c.root, err)
			case c.want != "" && err == nil:
				t.Errorf("CheckRoots(%s) accepted; want a refusal mentioning %q", c.root, c.want)
			case c.want != "" && (!strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "workspace.roots[0] (main = "+c.root+")") ||
				!strings.Contains(err.Error(), "choose")):
				t.Errorf("CheckRoots(%s) = %v; want it to name the root, mention %q and say what to choose", c.root, err, c.want)
			}
		})
	}
}

// TestLoadHomeRefusesHomeRoot: LoadHome applies CheckRoots to the file's
// roots; Load alone does not know where homard lives.
func TestLoadHomeRefusesHomeRoot(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := ResolvePaths(filepath.Join(base, "h"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(root string) {
		cfg := "[model]\nprovider = \"openai\"\n[workspace]\nroots = [{ name = \"main\", path = \"" + root + "\" }]\n"
		if err := os.WriteFile(p.ConfigFile, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(p.Home)
	if _, err := Load(p.ConfigFile); err != nil {
		t.Fatalf("Load = %v", err)
	}
	if _, err := LoadHome(p); err == nil || !strings.Contains(err.Error(), "config file") {
		t.Errorf("LoadHome with the home as root = %v; want a refusal", err)
	}
	write(p.WorkspaceDir)
	if _, err := LoadHome(p); err != nil {
		t.Errorf("LoadHome with the default workspace = %v", err)
	}
}
