package policy

import (
	"slices"
	"testing"
)

// TestCatalogConfigs: every program that reads project files names them
// in its verdict, under every name it goes by, whatever its class; a
// program that reads none, an unknown program and a refusal name none.
func TestCatalogConfigs(t *testing.T) {
	cases := []struct {
		argv []string
		want []string // files that must be listed; nil: Configs must be empty
	}{
		{argv("git", "status"), []string{".gitattributes", ".git/config", ".gitmodules"}},
		{argv("git", "diff"), []string{".gitattributes", ".git/config"}},
		{argv("git", "commit", "-m", "x"), []string{".gitattributes", ".git/config"}},
		{argv("npm", "ls"), []string{"package.json", ".npmrc"}},
		{argv("npm", "test"), []string{"package.json", ".npmrc"}},
		{argv("pnpm", "ls"), []string{"package.json", ".npmrc", "pnpm-workspace.yaml"}},
		{argv("yarn", "list"), []string{"package.json", ".yarnrc", ".yarnrc.yml"}},
		{argv("npx", "vitest"), []string{"package.json", "node_modules/.bin/"}},
		{argv("make", "test"), []string{"Makefile", "makefile", "GNUmakefile"}},
		{argv("gmake"), []string{"Makefile"}},
		{argv("go", "test", "./..."), []string{"go.mod", "go.work"}},
		{argv("go", "list", "-m"), []string{"go.mod", "go.work"}},
		{argv("cargo", "build"), []string{"Cargo.toml", ".cargo/config.toml", "build.rs"}},
		{argv("cargo", "--version"), []string{".cargo/config.toml"}},
		{argv("python", "script.py"), []string{"pyproject.toml", "setup.cfg"}},
		{argv("python3.11", "-m", "pytest"), []string{"pyproject.toml", "conftest.py"}},
		{argv("node", "app.js"), []string{"package.json"}},
		{argv("nodejs", "app.js"), []string{"package.json"}},
		{argv("rg", "TODO"), []string{".rgignore", ".ignore", ".gitignore"}},
		{argv("fdfind", "x"), []string{".fdignore"}},
		{argv("ls", "-l"), nil},
		{argv("tar", "-czf", "a.tgz", "src"), nil},
		{argv("mkdir", "build"), nil},
		{argv("some-unknown-tool"), nil},
		{argv("python", "-c", "print(1)"), nil}, // refused: nothing runs
	}
	for _, c := range cases {
		v := ClassifyCommand(cmd(c.argv[0], c.argv[1:]...), nil)
		if c.want == nil {
			if len(v.Configs) != 0 {
				t.Errorf("ClassifyCommand(%q).Configs = %q; want none", c.argv, v.Configs)
			}
			continue
		}
		for _, f := range c.want {
			if !slices.Contains(v.Configs, f) {
				t.Errorf("ClassifyCommand(%q).Configs = %q; want it to list %s", c.argv, v.Configs, f)
			}
		}
	}
}

// TestCatalogConfigsFamilies: every entry of a family with project files
// lists a non-empty set, and the table names only catalog entries.
func TestCatalogConfigsFamilies(t *testing.T) {
	for _, name := range []string{"git", "npm", "pnpm", "yarn", "npx", "make", "gmake", "go", "cargo", "python", "node"} {
		g, ok := catalog()[name]
		if !ok {
			t.Errorf("catalog has no entry %q", name)
			continue
		}
		if len(g.configs) == 0 {
			t.Errorf("catalog entry %q lists no config files; its program reads project files", name)
		}
	}
	for name := range entryConfigs {
		if _, ok := catalog()[name]; !ok {
			t.Errorf("entryConfigs names %q, which is not a catalog entry", name)
		}
	}
}

// TestCatalogConfigsAllNames: a program is judged by every name it goes
// by, and its Configs are those of every reading — a make that is really
// a copy of cargo shows the makefiles and cargo's files — without
// duplicates.
func TestCatalogConfigsAllNames(t *testing.T) {
	v := ClassifyCommand(Command{Program: "make", Path: "/usr/bin/make", RealPath: "/usr/bin/cargo", Args: []string{"build"}}, nil)
	for _, f := range []string{"Makefile", "Cargo.toml"} {
		if !slices.Contains(v.Configs, f) {
			t.Errorf("make → cargo: Configs = %q; want %s listed", v.Configs, f)
		}
	}
	twin := ClassifyCommand(cmd("git", "status"), nil)
	seen := map[string]bool{}
	for _, f := range twin.Configs {
		if seen[f] {
			t.Errorf("git status: Configs = %q lists %s twice", twin.Configs, f)
		}
		seen[f] = true
	}
}

// TestCatalogConfigsCopied: a verdict's Configs is its own: changing it
// does not change the catalog.
func TestCatalogConfigsCopied(t *testing.T) {
	v := ClassifyCommand(cmd("make"), nil)
	if len(v.Configs) == 0 {
		t.Fatal("make lists no configs")
	}
	v.Configs[0] = "changed"
	if again := ClassifyCommand(cmd("make"), nil); slices.Contains(again.Configs, "changed") {
		t.Errorf("changing a verdict's Configs changed the catalog: %q", again.Configs)
	}
}
