package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRootsReadOnly: a read-only root may be the owner's home and
// may hold homard's files (they are hidden), but may not be one of
// homard's folders nor lie inside them; the same folders as writable
// roots stay refused (the twins).
func TestCheckRootsReadOnly(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	owner := filepath.Join(base, "owner")
	xdg, err := ResolvePaths("", env(map[string]string{"HOME": owner}))
	if err != nil {
		t.Fatal(err)
	}
	hh, err := ResolvePaths(filepath.Join(owner, ".homard"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{xdg.DataDir, hh.DataDir, filepath.Join(owner, "projects")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	homes := []string{owner}
	for _, c := range []struct {
		name   string
		p      Paths
		root   string
		access string
		want   string // substring of the refusal; "" accepts
	}{
		{"home ro, xdg layout", xdg, owner, AccessReadOnly, ""},
		{"home ro, --home inside it", hh, owner, AccessReadOnly, ""},
		{"filesystem root ro", xdg, "/", AccessReadOnly, ""},
		{"projects rw", xdg, filepath.Join(owner, "projects"), AccessReadWrite, ""},
		{"home rw", hh, owner, AccessReadWrite, "make the root read-only"},
		{"home rw, xdg", xdg, owner, AccessReadWrite, "config file"},
		{"data dir ro", xdg, xdg.DataDir, AccessReadOnly, "data folder"},
		{"--home ro", hh, hh.Home, AccessReadOnly, "home folder (--home)"},
		{"inside data ro", xdg, filepath.Join(xdg.DataDir, "memory"), AccessReadOnly, "lies inside homard's data folder"},
		{"inside --home ro", hh, filepath.Join(hh.Home, "other"), AccessReadOnly, "lies inside homard's"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckRoots([]Root{{Name: "r", Path: c.root, Access: c.access}}, c.p, homes)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("CheckRoots(%s, %s) = %v; want accepted", c.root, c.access, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("CheckRoots(%s, %s) = %v; want a refusal mentioning %q", c.root, c.access, err, c.want)
			}
		})
	}
}

const minimalModel = "[model]\nprovider = \"openai\"\n"

// TestLoadRootAccess: access is "rw" when missing, "ro" when written so,
// and anything else is refused with the allowed values.
func TestLoadRootAccess(t *testing.T) {
	c, err := Load(writeConfig(t, minimalModel+`[workspace]
roots = [{ name = "home", path = "/h", access = "ro" }, { name = "main", path = "/h/p" }]
`))
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Workspace.Roots; !r[0].ReadOnly() || r[1].ReadOnly() || r[1].Access != AccessReadWrite {
		t.Errorf("roots = %+v; want home ro, main rw", r)
	}
	_, err = Load(writeConfig(t, minimalModel+`[workspace]
roots = [{ name = "home", path = "/h", access = "read" }]
`))
	if err == nil || !strings.Contains(err.Error(), `workspace.roots[0].access = "read": want "rw"`) {
		t.Errorf("Load(access = read) = %v; want a refusal naming the key and the allowed values", err)
	}
}

// TestLoadCommandPath: commands.path entries are expanded and checked at
// load: an absolute existing folder outside every writable root is kept
// (also inside a read-only root); relative, missing, a file, "/", a
// duplicate and a folder overlapping a writable root are refused.
func TestLoadCommandPath(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "me")
	for _, d := range []string{".local/bin", "proj/bin", "ro/bin"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := func(path string) string {
		return minimalModel + `[workspace]
roots = [{ name = "main", path = "` + filepath.Join(home, "proj") + `" }, { name = "ro", path = "` + filepath.Join(home, "ro") + `", access = "ro" }]
[commands]
path = ` + path + "\n"
	}
	getenv := env(map[string]string{"HOME": home})
	c, err := load(writeConfig(t, cfg(`["~/.local/bin", "`+filepath.Join(home, "ro", "bin")+`"]`)), getenv)
	if err != nil {
		t.Fatalf("Load(good commands.path) = %v", err)
	}
	if want := filepath.Join(home, ".local", "bin"); len(c.Commands.Path) != 2 || c.Commands.Path[0] != want {
		t.Errorf("commands.path = %q; want %s first", c.Commands.Path, want)
	}
	for _, bad := range []struct{ path, want string }{
		{`["bin"]`, "want an absolute folder"},
		{`["~/missing"]`, "not an existing folder"},
		{`["~/file"]`, "not an existing folder"},
		{`["/"]`, "not the whole file system"},
		{`["~/.local/bin", "~/.local/bin"]`, "listed twice"},
		{`["~/proj/bin"]`, `overlaps the writable workspace root "main"`},
		{`["~"]`, `overlaps the writable workspace root "main"`},
	} {
		_, err := load(writeConfig(t, cfg(bad.path)), getenv)
		if err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "commands.path[") {
			t.Errorf("Load(commands.path = %s) = %v; want a refusal naming the entry and saying %q", bad.path, err, bad.want)
		}
	}
}

// TestCheckCommandPath: a program folder shown whole to every command may
// not hold homard's files or the owner's home; an ordinary one passes.
func TestCheckCommandPath(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	owner := filepath.Join(base, "owner")
	p, err := ResolvePaths("", env(map[string]string{"HOME": owner}))
	if err != nil {
		t.Fatal(err)
	}
	homes := []string{owner}
	for dir, want := range map[string]string{
		filepath.Join(owner, ".local", "bin"):   "",
		filepath.Join(owner, ".local", "share"): "contains homard's own",
		owner:                                   "contains homard's own",
		filepath.Join(p.DataDir, "bin"):         "lies inside homard's data folder",
	} {
		err := CheckCommandPath([]string{dir}, p, homes)
		switch {
		case want == "" && err != nil:
			t.Errorf("CheckCommandPath(%s) = %v; want accepted", dir, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "commands.path[0]")):
			t.Errorf("CheckCommandPath(%s) = %v; want a refusal naming commands.path[0] and %q", dir, err, want)
		}
	}
}

// TestLoadAgentBudget: [agent] keys are read; zero or negative budgets and
// a reserve not below max_units are refused; reserve_units = 0 (no
// reserve) and max_tokens = 0 (no owner limit) are accepted, while the
// guest budgets must be positive.
func TestLoadAgentBudget(t *testing.T) {
	base := minimalModel + "[workspace]\nroots = [{ name = \"main\", path = \"/ws\" }]\n[agent]\n"
	c, err := Load(writeConfig(t, base+"max_calls = 3\nmax_units = 5\nreserve_units = 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Agent != (Agent{MaxCalls: 3, MaxUnits: 5, ReserveUnits: 0, GuestMaxTokens: 20000, GuestMaxCalls: 4, ExtensionToolBudget: 1500}) {
		t.Errorf("agent = %+v; want 3 calls, 5 units, no reserve, no owner token limit, the guest defaults and the extension budget's", c.Agent)
	}
	c, err = Load(writeConfig(t, base+"max_tokens = 90000\nguest_max_tokens = 5000\nguest_max_calls = 1\nextension_tool_budget = 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Agent.MaxTokens != 90000 || c.Agent.GuestMaxTokens != 5000 || c.Agent.GuestMaxCalls != 1 || c.Agent.ExtensionToolBudget != 0 {
		t.Errorf("agent = %+v; want max_tokens 90000, guest_max_tokens 5000, guest_max_calls 1, extension_tool_budget 0 (never offered directly)", c.Agent)
	}
	for _, bad := range []struct{ body, want string }{
		{"max_calls = 0\n", "agent.max_calls = 0"},
		{"max_units = -1\n", "agent.max_units = -1"},
		{"reserve_units = -1\n", "agent.reserve_units = -1"},
		{"max_units = 8\nreserve_units = 8\n", "less than agent.max_units (8)"},
		{"max_unit = 8\n", "unknown key agent.max_unit"},
		{"max_tokens = -1\n", "agent.max_tokens = -1"},
		// A guest turn always has a limit: 0 is not "none" here.
		{"guest_max_tokens = 0\n", "agent.guest_max_tokens = 0"},
		{"guest_max_tokens = -5\n", "agent.guest_max_tokens = -5"},
		{"guest_max_calls = 0\n", "agent.guest_max_calls = 0"},
		{"extension_tool_budget = -1\n", "agent.extension_tool_budget = -1"},
	} {
		_, err := Load(writeConfig(t, base+bad.body))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Load([agent] %q) = %v; want an error containing %q", bad.body, err, bad.want)
		}
	}
}
