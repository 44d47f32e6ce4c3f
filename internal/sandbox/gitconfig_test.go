package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSanitizeGitConfig(t *testing.T) {
	in := `[core]
	repositoryformatversion = 0
	filemode = true
	fsmonitor = "touch /tmp/pwned"
	hooksPath = .husky
	pager = sh -c evil
[include]
	path = ../evil.cfg
[includeIf "gitdir:/"]
	path = ../evil.cfg
[filter "lfs"]
	clean = sh -c evil
	smudge = sh -c evil
[diff "x"]
	textconv = sh -c evil
[diff]
	external = sh -c evil
	renames = true
[remote "origin"]
	url = https://example.com/r.git
	fetch = +refs/heads/*:refs/remotes/origin/*
	uploadpack = sh -c evil
[core] sshCommand = evil
[user]
	name = A \
	B
	email = a@b
[alias]
	st = !sh -c evil
[CORE]
	editor = evil
	BARE = false
`
	got := string(sanitizeGitConfig([]byte(in)))
	for _, bad := range []string{"evil", "fsmonitor", "hooksPath", "include", "filter", "textconv", "external", "uploadpack", "alias", "editor"} {
		if strings.Contains(got, bad) {
			t.Errorf("sanitized config keeps %q:\n%s", bad, got)
		}
	}
	for _, good := range []string{"repositoryformatversion = 0", "filemode = true", "renames = true", "url = https://example.com/r.git", "fetch = +refs", "name = A \\\n\tB", "email = a@b", "BARE = false"} {
		if !strings.Contains(got, good) {
			t.Errorf("sanitized config lost %q:\n%s", good, got)
		}
	}
}

func FuzzSanitizeGitConfig(f *testing.F) {
	f.Add([]byte("[core]\n\tbare = false\n[filter \"a\"]\n\tclean = x\n"))
	f.Add([]byte("[include]\npath=x\n[core]\nfsmonitor=y\\\n z\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		out := string(sanitizeGitConfig(in))
		section := ""
		for _, line := range strings.Split(out, "\n") {
			tl := strings.TrimSpace(line)
			if strings.HasPrefix(tl, "[") {
				section, _ = parseSectionHeader(tl)
				continue
			}
			for _, banned := range []string{"include", "includeif", "filter", "alias", "credential", "gpg"} {
				if section == banned {
					t.Fatalf("section %s kept in %q", section, out)
				}
			}
		}
	})
}

// TestGitInSandbox: git reads a repository whose config the model wrote
// (an fsmonitor, a diff driver, a textconv and a filter that would each run
// a program) without running any of them, and the ordinary git commands
// work: status, log, diff (plain `git diff` works again), grep, and in an
// overlay a commit whose changes come back as objects, refs and index only.
func TestGitInSandbox(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
	for _, b := range confining(t) {
		t.Run(b.Name(), func(t *testing.T) {
			root := workspace(t)
			gitCmd := func(args ...string) {
				t.Helper()
				c := exec.Command(gitBin, args...)
				c.Dir = root
				c.Env = []string{"HOME=" + root, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=o", "GIT_AUTHOR_EMAIL=o@x", "GIT_COMMITTER_NAME=o", "GIT_COMMITTER_EMAIL=o@x"}
				if out, err := c.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v %s", args, err, out)
				}
			}
			gitCmd("init", "-q", "-b", "main")
			writeFile(t, filepath.Join(root, "a.txt"), "one\n")
			writeFile(t, filepath.Join(root, ".gitattributes"), "*.txt diff=evil filter=evil\n")
			gitCmd("add", ".")
			gitCmd("commit", "-qm", "first")
			writeFile(t, filepath.Join(root, "a.txt"), "two\n")
			pwned := filepath.Join(root, "pwned")
			cfg, _ := os.ReadFile(filepath.Join(root, ".git", "config"))
			evil := "[core]\n\tfsmonitor = \"touch " + pwned + "-fsmonitor\"\n[diff \"evil\"]\n\tcommand = touch " + pwned + "-diff\n\ttextconv = touch " + pwned + "-textconv\n[filter \"evil\"]\n\tclean = touch " + pwned + "-clean\n"
			if err := os.WriteFile(filepath.Join(root, ".git", "config"), append(cfg, evil...), 0o644); err != nil {
				t.Fatal(err)
			}
			env := []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_PAGER=cat"}
			for _, args := range [][]string{{"status", "--short"}, {"diff"}, {"log", "--oneline"}, {"grep", "-n", "two"}} {
				res := run(t, b, Spec{Path: gitBin, Args: args, Dir: root, Root: root, Mode: ModeOverlay, Env: env})
				if res.ExitCode != 0 {
					t.Errorf("git %v: exit %d %q", args, res.ExitCode, res.Output)
				}
				if args[0] == "diff" && !strings.Contains(string(res.Output), "+two") {
					t.Errorf("git diff: %q", res.Output)
				}
				if got := readChanges(t, res.Changes); len(got) > 0 {
					for name := range got {
						if strings.Contains(name, "pwned") {
							t.Errorf("git %v ran a program from the repository config: %s", args, name)
						}
					}
				}
			}
			// An approved commit: its changes are objects, refs, logs and
			// the index — never config or hooks.
			res := run(t, b, Spec{Path: gitBin, Args: []string{"-c", "user.name=o", "-c", "user.email=o@x", "commit", "-qam", "second"},
				Dir: root, Root: root, Mode: ModeOverlay, Env: env})
			if res.ExitCode != 0 {
				t.Fatalf("git commit: exit %d %q", res.ExitCode, res.Output)
			}
			got := readChanges(t, res.Changes)
			sawObject := false
			for name := range got {
				switch {
				case strings.HasPrefix(name, ".git/objects/"):
					sawObject = true
				case name == ".git/" || name == ".git/index" || name == ".git/COMMIT_EDITMSG" || name == ".git/ORIG_HEAD" ||
					strings.HasPrefix(name, ".git/refs/") || strings.HasPrefix(name, ".git/logs/"):
				default:
					t.Errorf("git commit changed %s", name)
				}
			}
			if !sawObject {
				t.Errorf("git commit wrote no objects: %v", got)
			}
			if _, err := os.Stat(pwned + "-fsmonitor"); err == nil {
				t.Error("fsmonitor ran")
			}
		})
	}
}
