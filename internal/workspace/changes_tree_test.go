package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Grading judges the tree as it will be (issue 21): a repository that an
// earlier step began is complete when this step lands; a bare repository
// already there is protected like .git; HEAD may not point outside refs/;
// emptying a file is graded like truncate; build files are marked. Each
// attack has its twin.
func TestGradeTheResultingTree(t *testing.T) {
	mkdirs := func(rels ...string) func(t *testing.T, root string) {
		return func(t *testing.T, root string) {
			for _, r := range rels {
				if err := os.MkdirAll(filepath.Join(root, r), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	bare := func(t *testing.T, root string) {
		mkdirs("site.git/objects", "site.git/refs/heads", "site.git/hooks")(t, root)
		write(t, root, "site.git/HEAD", "ref: refs/heads/main\n")
		write(t, root, "site.git/config", "[core]\n\tbare = true\n")
	}
	runGradeCases(t, []gradeCase{
		{name: "HEAD completes objects/ and refs/ made earlier", setup: mkdirs("ev/objects", "ev/refs"),
			up:   func(*testing.T, string) upper { return upper{}.file("ev/HEAD", "ref: refs/heads/main\n") },
			want: GradeCritical, text: "creates a git repository", path: "ev"},
		{name: "refs/ completes HEAD and objects/ made earlier", setup: func(t *testing.T, root string) {
			mkdirs("ev/objects")(t, root)
			write(t, root, "ev/HEAD", "ref: refs/heads/main\n")
		}, up: func(*testing.T, string) upper { return upper{}.dir("ev/refs") },
			want: GradeCritical, text: "creates a git repository", path: "ev"},
		{name: "commondir with HEAD (a linked git folder)", setup: func(t *testing.T, root string) { write(t, root, "wt/HEAD", "x") },
			up:   func(*testing.T, string) upper { return upper{}.file("wt/commondir", "../main/.git\n") },
			want: GradeCritical, text: "creates a git repository", path: "wt"},
		{name: "twin: objects/ and refs/ without HEAD", setup: mkdirs("ev/objects"),
			up: func(*testing.T, string) upper { return upper{}.dir("ev/refs") }, want: GradeMedium},
		{name: "twin: HEAD and refs/ without objects/", setup: mkdirs("ev/refs"),
			up: func(*testing.T, string) upper { return upper{}.file("ev/HEAD", "notes") }, want: GradeMedium},

		{name: "a bare repository's hook", setup: bare,
			up: func(*testing.T, string) upper {
				return upper{}.fileMode("site.git/hooks/post-update", "#!/bin/sh\n", 0o755)
			},
			want: GradeCritical, text: "outside git's own data", path: "site.git/hooks/post-update"},
		{name: "a bare repository's config", setup: bare,
			up:   func(*testing.T, string) upper { return upper{}.file("site.git/config", "[core]\n\tfsmonitor = evil\n") },
			want: GradeCritical, text: "outside git's own data", path: "site.git/config"},
		{name: "a bare repository's info/", setup: bare,
			up:   func(*testing.T, string) upper { return upper{}.file("site.git/info/exclude", "*\n") },
			want: GradeCritical, text: "outside git's own data", path: "site.git/info/exclude"},
		{name: "taking a bare repository apart", setup: bare,
			up:   func(*testing.T, string) upper { return upper{}.whiteout("site.git/refs") },
			want: GradeCritical, text: "takes apart", path: "site.git"},
		{name: "twin: a bare repository's objects", setup: bare,
			up: func(*testing.T, string) upper { return upper{}.file("site.git/objects/ab/cdef", "x") }, want: GradeMedium},
		{name: "the root itself is a bare repository", setup: func(t *testing.T, root string) {
			mkdirs("objects", "refs")(t, root)
			write(t, root, "HEAD", "ref: refs/heads/main\n")
		}, up: func(*testing.T, string) upper { return upper{}.file("hooks/pre-receive", "x") },
			want: GradeCritical, text: "outside git's own data", path: "hooks/pre-receive"},

		{name: "HEAD outside refs/", setup: bare,
			up:   func(*testing.T, string) upper { return upper{}.file("site.git/HEAD", "ref: config\n") },
			want: GradeCritical, text: "outside refs/", path: "site.git/HEAD"},
		{name: "HEAD climbing out of refs/", setup: func(t *testing.T, root string) { writeRepo(t, root, ".", "[core]\n") },
			up:   func(*testing.T, string) upper { return upper{}.file(".git/HEAD", "ref: refs/../hooks/x\n") },
			want: GradeCritical, text: "outside refs/", path: ".git/HEAD"},

		{name: "emptying a file", setup: func(t *testing.T, root string) { write(t, root, "data.csv", "a,b\n1,2\n") },
			up:   func(*testing.T, string) upper { return upper{}.file("data.csv", "") },
			want: GradeCritical, text: "like truncate", path: "data.csv"},
		{name: "twin: shortening a file", setup: func(t *testing.T, root string) { write(t, root, "data.csv", "a,b\n1,2\n") },
			up: func(*testing.T, string) upper { return upper{}.file("data.csv", "a,b\n") }, want: GradeMedium},
		{name: "twin: a new empty file", up: func(*testing.T, string) upper { return upper{}.file("empty.txt", "") }, want: GradeMedium},

		{name: "a Makefile is marked", up: func(*testing.T, string) upper { return upper{}.file("sub/Makefile", "all:\n\tcurl x\n") },
			want: GradeMedium, text: RunsWhenBuilt, path: "sub/Makefile"},
		{name: "a go:generate line is marked", up: func(*testing.T, string) upper {
			return upper{}.file("gen.go", "package x\n\n//go:generate sh -c evil\n")
		}, want: GradeMedium, text: RunsWhenBuilt, path: "gen.go"},
		{name: "twin: ordinary Go is not marked", up: func(*testing.T, string) upper { return upper{}.file("x.go", "package x\n") },
			want: GradeMedium},
	})
}

// TestDefaultHostToolsEachEntry: every entry of DefaultHostTools has an
// example path that grades critical, found by the entry itself, at the
// root and in a subfolder; the twins (the same names with one letter
// changed, or in a plain folder) stay medium. A new entry without an
// example fails.
func TestDefaultHostToolsEachEntry(t *testing.T) {
	examples := map[string]string{
		".husky/": ".husky/_/pre-commit", ".lefthook*": ".lefthook.yml", "lefthook.yml": "lefthook.yml",
		"lefthook.yaml": "lefthook.yaml", "lefthook-local.yml": "lefthook-local.yml", "lefthook-local.yaml": "lefthook-local.yaml",
		".pre-commit-config.yaml": ".pre-commit-config.yaml", ".pre-commit-config.yml": ".pre-commit-config.yml",
		".lintstagedrc*": ".lintstagedrc.json", "lint-staged.config.*": "lint-staged.config.mjs",
		".envrc": ".envrc", ".mise.toml": ".mise.toml", "mise.toml": "mise.toml", ".mise.local.toml": ".mise.local.toml",
		"mise.local.toml": "mise.local.toml", ".mise/": ".mise/tasks/build",
		".config/mise/": ".config/mise/config.toml", ".tool-versions": ".tool-versions",
		".vscode/": ".vscode/tasks.json", "*.code-workspace": "app.code-workspace", ".idea/": ".idea/workspace.xml",
		".zed/": ".zed/tasks.json", ".devcontainer/": ".devcontainer/devcontainer.json", ".devcontainer.json": ".devcontainer.json",
		".github/workflows/": ".github/workflows/ci.yml", ".github/actions/": ".github/actions/setup/action.yml",
		".gitlab-ci.yml": ".gitlab-ci.yml", ".gitlab-ci.yaml": ".gitlab-ci.yaml", ".circleci/": ".circleci/config.yml",
		".travis.yml": ".travis.yml", "azure-pipelines.yml": "azure-pipelines.yml", "bitbucket-pipelines.yml": "bitbucket-pipelines.yml",
		".yarnrc": ".yarnrc", ".yarnrc.yml": ".yarnrc.yml", ".yarn/plugins/": ".yarn/plugins/plugin.cjs",
		".yarn/releases/": ".yarn/releases/yarn-4.0.0.cjs", ".pnpmfile.cjs": ".pnpmfile.cjs", ".pnpmfile.mjs": ".pnpmfile.mjs",
		".npmrc": ".npmrc", ".cargo/config.toml": ".cargo/config.toml", ".cargo/config": ".cargo/config", ".hg/hgrc": ".hg/hgrc",
		".claude/settings.json": ".claude/settings.json", ".claude/settings.local.json": ".claude/settings.local.json",
		".mcp.json": ".mcp.json", ".cursor/mcp.json": ".cursor/mcp.json", ".gemini/settings.json": ".gemini/settings.json",
	}
	var cases []gradeCase
	for _, pat := range DefaultHostTools {
		ex, ok := examples[pat]
		if !ok {
			t.Errorf("DefaultHostTools entry %q has no example in this test: add one", pat)
			continue
		}
		for _, rel := range []string{ex, "app/" + ex} {
			cases = append(cases, gradeCase{name: rel, up: func(*testing.T, string) upper { return upper{}.file(rel, "x") },
				want: GradeCritical, text: "owner's tools execute (" + pat + ")", path: rel})
		}
		twin := "plain/" + strings.ReplaceAll(strings.ReplaceAll(ex, "/", "_"), ".", "-") + ".txt"
		cases = append(cases, gradeCase{name: "twin: " + twin, up: func(*testing.T, string) upper { return upper{}.file(twin, "x") }, want: GradeMedium})
	}
	runGradeCases(t, cases)
}

// TestGradeOwnerGitConfig: a hooks path the owner's global git config sets
// (relative to each worktree, or absolute into the root) protects the files
// there in every repository of the root; the twin, the same write without
// that config, is ordinary.
func TestGradeOwnerGitConfig(t *testing.T) {
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte("[core]\n\thooksPath = .githooks\n[include]\n\tpath = /nonexistent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	withGlobal := func(o *GradeOptions) { o.GitConfigs = []string{global, filepath.Join(t.TempDir(), "missing")} }
	inRepo := func(t *testing.T, root string) { writeRepo(t, root, "proj", "[core]\n") }
	runGradeCases(t, []gradeCase{
		{name: "global hooksPath", setup: inRepo, opts: withGlobal,
			up:   func(*testing.T, string) upper { return upper{}.file("proj/.githooks/pre-commit", "x") },
			want: GradeCritical, text: "repository config names (core.hooksPath)", path: "proj/.githooks/pre-commit"},
		{name: "twin: no global config", setup: inRepo,
			up: func(*testing.T, string) upper { return upper{}.file("proj/.githooks/pre-commit", "x") }, want: GradeMedium},
		{name: "twin: outside any repository", opts: withGlobal,
			up: func(*testing.T, string) upper { return upper{}.file("loose/.githooks/pre-commit", "x") }, want: GradeMedium},
	})
}

// TestHostToolsDocumented: docs/RULES.md lists DefaultHostTools and
// DefaultBuildFiles exactly (the section "Files your own tools run").
func TestHostToolsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "RULES.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Files your own tools run")
	if !ok {
		t.Fatal(`docs/RULES.md has no section "## Files your own tools run"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	hostPart, buildPart, ok := strings.Cut(section, "**Build files")
	if !ok {
		t.Fatal("the section has no **Build files paragraph")
	}
	quoted := func(s string) []string {
		var out []string
		parts := strings.Split(s, "`")
		for i := 1; i < len(parts); i += 2 {
			out = append(out, parts[i])
		}
		return out
	}
	_, hosts, _ := strings.Cut(hostPart, "**Host tools**")
	hosts, _, _ = strings.Cut(hosts, "**Also critical**")
	for _, c := range []struct {
		name   string
		table  []string
		listed []string
	}{{"DefaultHostTools", DefaultHostTools, quoted(hosts)}, {"DefaultBuildFiles", DefaultBuildFiles, quoted(buildPart)}} {
		for _, p := range c.table {
			if !slices.Contains(c.listed, p) {
				t.Errorf("docs/RULES.md does not list %s entry `%s`", c.name, p)
			}
		}
	}
	for _, p := range quoted(hosts) {
		if !slices.Contains(DefaultHostTools, p) && p != "commands.host_tools" && p != "workspace.DefaultHostTools" {
			t.Errorf("docs/RULES.md lists `%s` as a host tool; it is not in DefaultHostTools", p)
		}
	}
}

// TestGradeHookManagerScripts: a script the owner's lefthook, pre-commit
// or husky setup runs is host-executed whoever writes it; the twins, a
// script nobody names and one named only in a comment, are ordinary.
func TestGradeHookManagerScripts(t *testing.T) {
	withManagers := func(t *testing.T, root string) {
		writeRepo(t, root, ".", "[core]\n")
		write(t, root, "lefthook.yml", "pre-commit:\n  commands:\n    lint:\n      run: ./scripts/lint.sh {staged_files}\n")
		write(t, root, ".pre-commit-config.yaml", "repos:\n- repo: local\n  hooks:\n  - id: check\n    entry: tools/check.py\n    language: system\n")
		write(t, root, ".husky/pre-push", "#!/bin/sh\n# ./scripts/ignored.sh is a comment\nnpm test && ./bin/verify\n")
	}
	runGradeCases(t, []gradeCase{
		{name: "lefthook run:", setup: withManagers, up: func(*testing.T, string) upper { return upper{}.file("scripts/lint.sh", "x") },
			want: GradeCritical, text: "hook manager runs (named in lefthook.yml)", path: "scripts/lint.sh"},
		{name: "pre-commit entry:", setup: withManagers, up: func(*testing.T, string) upper { return upper{}.file("tools/check.py", "x") },
			want: GradeCritical, text: "hook manager runs (named in .pre-commit-config.yaml)", path: "tools/check.py"},
		{name: "husky hook body", setup: withManagers, up: func(*testing.T, string) upper { return upper{}.file("bin/verify", "x") },
			want: GradeCritical, text: "hook manager runs (named in pre-push)", path: "bin/verify"},
		{name: "twin: a script nobody names", setup: withManagers,
			up: func(*testing.T, string) upper { return upper{}.file("scripts/build.sh", "x") }, want: GradeMedium},
		{name: "twin: a name in a comment", setup: withManagers,
			up: func(*testing.T, string) upper { return upper{}.file("scripts/ignored.sh", "x") }, want: GradeMedium},
	})
}
