package app

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/sandbox"
)

// requireCommands skips (fails under CI) without a working sandbox and git.
func requireCommands(t *testing.T, r *Runtime) {
	t.Helper()
	if _, err := sandbox.Select(r.Config.Sandbox.Backend); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox backend works here, and CI must test one: %v", err)
		}
		t.Skipf("no sandbox backend works here: %v", err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
}

// gitRepo makes a repository with one commit in the workspace's folder rel.
func gitRepo(t *testing.T, r *Runtime, rel string) string {
	t.Helper()
	dir := filepath.Join(r.Config.Workspace.Roots[0].Path, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-qm", "first", "--allow-empty"}} {
		c := exec.Command("git", args...)
		c.Dir = dir
		c.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=o", "GIT_AUTHOR_EMAIL=o@x", "GIT_COMMITTER_NAME=o", "GIT_COMMITTER_EMAIL=o@x"}
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return dir
}

// TestScenarioGitCannotBecomeAShell: the red team's git attacks, each with
// its twin. `git grep -O<script>` (the attached short form) and the other
// program-running or file-writing options are refused in every spelling
// and mode; git's reads run unasked in safe mode and work — plain `git
// diff` included.
func TestScenarioGitCannotBecomeAShell(t *testing.T) {
	r := newTestRuntime(t, "safe")
	requireCommands(t, r)
	writeWorkspaceFile(t, r, "repo/notes.txt", "hello world\n")
	repo := gitRepo(t, r, "repo")
	writeWorkspaceFile(t, r, "repo/notes.txt", "hello there\n")
	for _, args := range []string{
		`["grep","--no-index","-Otouch pwned","hello"]`,
		`["grep","-O","touch pwned","hello"]`,
		`["grep","--open-files-in-pager=touch pwned","hello"]`,
		`["grep","--open-f=touch pwned","hello"]`,
		`["log","--output=notes.txt"]`,
		`["log","--outp","notes.txt"]`,
		`["diff","--no-index","--output=notes.txt","a","b"]`,
		`["--git-dir=evil","status"]`,
		`["--work-tree=/","status"]`,
		`["-c","core.pager=touch pwned","log"]`,
		`["--exec-path=.","status"]`,
		`["--config-env=core.pager=X","log"]`,
	} {
		out := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"git","args":` + args + `,"cwd":"repo"}`, Mode: "yolo"})
		if string(out.Decision) != "denied" || !strings.HasPrefix(out.Rule, "limit.") {
			t.Errorf("git %s: %s by %s (%s); want denied by a hard limit", args, out.Decision, out.Rule, out.Reason)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "notes.txt")); string(got) != "hello there\n" {
		t.Errorf("notes.txt = %q", got)
	}
	// Twins: reads run unasked in safe mode and do their job. They run
	// in a session of their own: after the denials above, the session
	// "cli" would ask first (monitor.denied-repeat).
	for _, tc := range []struct{ args, want string }{
		{`["grep","-n","hello"]`, "notes.txt:1:hello there"},
		{`["log","--oneline"]`, "first"},
		{`["diff"]`, "+hello there"},
		{`["status","--short"]`, "M notes.txt"},
	} {
		out := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"git","args":` + tc.args + `,"cwd":"repo"}`, Session: "twins"})
		if string(out.Decision) != "ran" || out.Result == nil || !strings.Contains(out.Result.Text, tc.want) {
			t.Errorf("git %s: %s by %s (%s) %+v; want it to run and print %q", tc.args, out.Decision, out.Rule, out.Reason, out.Result, tc.want)
		}
	}
}

// TestScenarioCodeCannotPlantAHook: code the model runs (here: a program
// it wrote into the workspace) works on a copy; a git hook it plants there
// never reaches the real repository — the change set is held for the
// owner with the path named — while an ordinary output of the same run is
// applied and can be rolled back.
func TestScenarioCodeCannotPlantAHook(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			r := newTestRuntime(t, "autopilot")
			requireCommands(t, r)
			useBackend(t, r, backend)
			root := r.Config.Workspace.Roots[0].Path
			gitRepo(t, r, "repo")
			// A "program" the model wrote: a copy of a real binary under a new
			// name runs as code, whatever its name.
			script := "#!/bin/sh\nmkdir -p .git/hooks && printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit\n"
			writeWorkspaceFile(t, r, "repo/build.sh", script)
			if err := os.Chmod(filepath.Join(root, "repo", "build.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			out := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"` + filepath.Join(root, "repo", "build.sh") + `","cwd":"repo"}`})
			wantDecision(t, out, "ran", "mode.autopilot")
			if _, err := os.Stat(filepath.Join(root, "repo", ".git", "hooks", "pre-commit")); err == nil {
				t.Fatal("the hook reached the real repository")
			}
			ap := wantHookHeld(t, r, out.Result.Text)
			if !strings.Contains(ap.Plan, ".git/hooks/pre-commit") {
				t.Errorf("the card does not show the hook: %q", ap.Plan)
			}

			// Twin: the same kind of run that writes an ordinary file is applied
			// in autopilot, and one rollback undoes it.
			writeWorkspaceFile(t, r, "repo/gen.sh", "#!/bin/sh\necho generated > out.txt\n")
			if err := os.Chmod(filepath.Join(root, "repo", "gen.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			out = call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"` + filepath.Join(root, "repo", "gen.sh") + `","cwd":"repo"}`})
			wantDecision(t, out, "ran", "mode.autopilot")
			got, err := os.ReadFile(filepath.Join(root, "repo", "out.txt"))
			if err != nil || string(got) != "generated\n" {
				t.Fatalf("out.txt = %q, %v; result %q", got, err, out.Result.Text)
			}
			cp := regexp.MustCompile("checkpoint rollback ([^`]+)`").FindStringSubmatch(out.Result.Text)
			if cp == nil {
				t.Fatalf("no checkpoint in %q", out.Result.Text)
			}
			pv, err := r.Workspace.RollbackPreview(cp[1])
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Workspace.RollbackCheckpoint(cp[1], pv.SavedSHA256()); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(root, "repo", "out.txt")); err == nil {
				t.Error("rollback left out.txt")
			}
		})
	}
}

// TestScenarioCommandsCannotReadSecrets: `cat .env` fails inside the
// sandbox whatever the mode; the ordinary file next to it reads.
func TestScenarioCommandsCannotReadSecrets(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			r := newTestRuntime(t, "yolo")
			requireCommands(t, r)
			useBackend(t, r, backend)
			writeWorkspaceFile(t, r, ".env", "API_KEY=TOPSECRET\n")
			writeWorkspaceFile(t, r, "keys/id_ed25519", "TOPSECRET-KEY\n")
			writeWorkspaceFile(t, r, "notes.txt", "ordinary\n")
			for _, args := range []string{`[".env"]`, `["keys/id_ed25519"]`, `["notes.txt",".env"]`} {
				out := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"cat","args":` + args + `}`})
				if out.Result != nil && strings.Contains(out.Result.Text, "TOPSECRET") {
					t.Errorf("cat %s read a sensitive file: %q", args, out.Result.Text)
				}
			}
			out := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"cat","args":["notes.txt"]}`})
			if out.Result == nil || !strings.Contains(out.Result.Text, "ordinary") {
				t.Errorf("cat notes.txt: %+v", out)
			}
		})
	}
}

// TestScenarioCommandGrantIsATemplate: approving `mkdir build/a` for the
// session covers a second mkdir of a path inside build/ — and nothing
// else: not another program, another option or another operand count, not
// a path that leaves build/ through a symlink, not code.
func TestScenarioCommandGrantIsATemplate(t *testing.T) {
	r := newTestRuntime(t, "smart")
	requireCommands(t, r)
	ctx := context.Background()
	root := r.Config.Workspace.Roots[0].Path
	writeWorkspaceFile(t, r, "build/keep.txt", "x\n")
	writeWorkspaceFile(t, r, "other/keep.txt", "x\n")
	if err := os.Symlink("../other", filepath.Join(root, "build", "l")); err != nil {
		t.Fatal(err)
	}
	mk := func(args string) CallRequest {
		return CallRequest{Tool: "run_command", Args: `{"program":"mkdir","args":` + args + `}`, Session: "s1"}
	}
	out := call(t, r, mk(`["build/a"]`))
	wantDecision(t, out, "pending", "mode.smart")
	if !strings.Contains(out.Plan, "‹") {
		t.Errorf("the card does not show the template: %q", out.Plan)
	}
	if _, err := r.Owner.Approve(ctx, out.ApprovalID, "session"); err != nil {
		t.Fatal(err)
	}
	out = call(t, r, mk(`["build/a"]`))
	wantDecision(t, out, "ran", "")
	// Twin: a second mkdir inside build/ runs from the grant.
	out = call(t, r, mk(`["build/b"]`))
	if string(out.Decision) != "ran" {
		t.Fatalf("second mkdir under the session grant: %s by %s (%s)", out.Decision, out.Rule, out.Reason)
	}
	if fi, err := os.Stat(filepath.Join(root, "build", "b")); err != nil || !fi.IsDir() {
		t.Fatalf("build/b was not created: %v (%+v)", err, out.Result)
	}
	for _, req := range []CallRequest{
		{Tool: "run_command", Args: `{"program":"cp","args":["/etc/passwd","build/important.txt"]}`, Session: "s1"},
		mk(`["-p","build/x"]`),
		mk(`["--mode=4777","build/y"]`),
		mk(`["build/../escape"]`),
		mk(`["src"]`),
		mk(`["build/l/inside"]`),
		mk(`["build/c","build/d"]`),
		{Tool: "run_command", Args: `{"program":"mkdir","args":["build/z"],"cwd":"other"}`, Session: "s1"},
		{Tool: "run_command", Args: `{"program":"gcc","args":["-wrapper","/bin/sh,-c,id","x.c"]}`, Session: "s1"},
	} {
		out := call(t, r, req)
		if string(out.Decision) == "ran" {
			t.Errorf("%s ran under the mkdir build/a grant", req.Args)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "other", "inside")); err == nil {
		t.Error("a mkdir through a symlink ran under the grant")
	}
}

// useBackend makes r's run_command use the named sandbox backend (before
// its first command: the backend is chosen lazily).
// wantHookHeld checks that a run's result says its change set, holding a
// planted .git/hooks/pre-commit, was held, and that apply_changes for it
// asks even in yolo (only a one-time approval runs it). It returns
// apply_changes' outcome.
func wantHookHeld(t *testing.T, r *Runtime, text string) arbiter.Outcome {
	t.Helper()
	if !strings.Contains(text, "NOT applied") || !strings.Contains(text, ".git/hooks/pre-commit") {
		t.Fatalf("result does not say the hook was held: %q", text)
	}
	id := regexp.MustCompile(`cs_[0-9a-f]{16}`).FindString(text)
	if id == "" {
		t.Fatalf("no change-set id in %q", text)
	}
	ap := call(t, r, CallRequest{Tool: "apply_changes", Args: `{"id":"` + id + `"}`, Mode: "yolo"})
	wantDecision(t, ap, "pending", "risk.critical")
	return ap
}

func useBackend(t *testing.T, r *Runtime, name string) {
	t.Helper()
	b, err := sandbox.Select(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s backend unavailable in CI: %v", name, err)
		}
		t.Skipf("%s backend unavailable: %v", name, err)
	}
	_ = b
	r.Config.Sandbox.Backend = name
}

// TestScenarioBuildsRunAndApply: the legitimate coding task the old
// deny-list refused outright — `make` and `go build`/`go test` of a small
// project — runs in autopilot, in both sandboxes, on a copy of the
// workspace; its outputs are applied, and one rollback undoes them.
func TestScenarioBuildsRunAndApply(t *testing.T) {
	if testing.Short() {
		t.Skip("cold Go builds in the sandbox; skipped with -short (the quick command), never in the full suite")
	}
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			r := newTestRuntime(t, "autopilot")
			useBackend(t, r, backend)
			root := r.Config.Workspace.Roots[0].Path
			if _, err := exec.LookPath("make"); err != nil {
				if os.Getenv("CI") != "" {
					t.Fatal("make is not installed")
				}
				t.Skip("make is not installed")
			}
			writeWorkspaceFile(t, r, "proj/in.txt", "input\n")
			writeWorkspaceFile(t, r, "proj/Makefile", "out.txt: in.txt\n\tcp in.txt out.txt\n\techo built >> out.txt\n")
			out := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"make","cwd":"proj"}`})
			wantDecision(t, out, "ran", "mode.autopilot")
			got, err := os.ReadFile(filepath.Join(root, "proj", "out.txt"))
			if err != nil || string(got) != "input\nbuilt\n" {
				t.Fatalf("make's output = %q, %v; result %+v", got, err, out.Result)
			}
			cp := regexp.MustCompile("checkpoint rollback ([^`]+)`").FindStringSubmatch(out.Result.Text)
			if cp == nil {
				t.Fatalf("no checkpoint in %q", out.Result.Text)
			}
			pv, err := r.Workspace.RollbackPreview(cp[1])
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Workspace.RollbackCheckpoint(cp[1], pv.SavedSHA256()); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(root, "proj", "out.txt")); err == nil {
				t.Error("rollback left out.txt")
			}

			goBin := "/usr/local/go/bin/go"
			if _, err := os.Stat(goBin); err != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("Go is not at %s", goBin)
				}
				t.Skip("Go is not at " + goBin)
			}
			writeWorkspaceFile(t, r, "gop/go.mod", "module example.com/gop\n\ngo 1.22\n")
			writeWorkspaceFile(t, r, "gop/main.go", "package main\n\nfunc main() { println(add(1, 2)) }\n\nfunc add(a, b int) int { return a + b }\n")
			writeWorkspaceFile(t, r, "gop/main_test.go", "package main\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n")
			// Each backend compiles once (a cold build: the command's Go
			// cache lives and dies with its run): go test in one, go build
			// in the other.
			if backend == "bwrap" {
				out = call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"` + goBin + `","args":["test","./..."],"cwd":"gop","timeout_s":300}`})
				wantDecision(t, out, "ran", "mode.autopilot")
				if out.Result == nil || !strings.Contains(out.Result.Text, "ok") || out.Result.IsError {
					t.Fatalf("go test: %+v", out.Result)
				}
				return
			}
			out = call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"` + goBin + `","args":["build","-o","app","."],"cwd":"gop","timeout_s":300}`})
			wantDecision(t, out, "ran", "mode.autopilot")
			if fi, err := os.Stat(filepath.Join(root, "gop", "app")); err != nil || fi.Mode()&0o100 == 0 {
				t.Fatalf("go build's binary was not applied: %v; result %+v", err, out.Result)
			}
		})
	}
}

// TestScenarioHighChangesAskOutsideYolo: a run that deletes 150 files is
// graded high (more than 100 deletions): held for the owner in autopilot,
// applied in yolo (the owner's choice to be asked only for critical
// effects) — while a critical one (a hook) is held in yolo too.
func TestScenarioHighChangesAskOutsideYolo(t *testing.T) {
	for _, mode := range []string{"autopilot", "yolo"} {
		t.Run(mode, func(t *testing.T) {
			r := newTestRuntime(t, mode)
			requireCommands(t, r)
			root := r.Config.Workspace.Roots[0].Path
			for i := range 150 {
				writeWorkspaceFile(t, r, fmt.Sprintf("old/f%03d.txt", i), "x\n")
			}
			writeWorkspaceFile(t, r, "clean.sh", "#!/bin/sh\nrm -f old/*.txt\n")
			if err := os.Chmod(filepath.Join(root, "clean.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			out := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"` + filepath.Join(root, "clean.sh") + `"}`})
			wantDecision(t, out, "ran", "mode."+mode)
			_, err := os.Stat(filepath.Join(root, "old", "f000.txt"))
			if mode == "yolo" && err == nil {
				t.Errorf("yolo did not apply a high-graded change set: %q", out.Result.Text)
			}
			if mode == "autopilot" && (err != nil || !strings.Contains(out.Result.Text, "NOT applied")) {
				t.Errorf("autopilot applied a high-graded change set (%v): %q", err, out.Result.Text)
			}
		})
	}
}

// TestScenarioOwnerEditIsAConflict: a file the owner changes while a
// command runs is not overwritten by the command's change set; the twin —
// the same command without a concurrent edit — applies.
func TestScenarioOwnerEditIsAConflict(t *testing.T) {
	r := newTestRuntime(t, "autopilot")
	requireCommands(t, r)
	root := r.Config.Workspace.Roots[0].Path
	writeWorkspaceFile(t, r, "f.txt", "v1\n")
	writeWorkspaceFile(t, r, "slow.sh", "#!/bin/sh\nsleep 1\necho command > f.txt\n")
	if err := os.Chmod(filepath.Join(root, "slow.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(300 * time.Millisecond)
		os.WriteFile(filepath.Join(root, "f.txt"), []byte("owner\n"), 0o644)
	}()
	out := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"` + filepath.Join(root, "slow.sh") + `"}`})
	<-done
	if got, _ := os.ReadFile(filepath.Join(root, "f.txt")); string(got) != "owner\n" {
		t.Errorf("f.txt = %q; the owner's edit was overwritten (%q)", got, out.Result.Text)
	}
	if !strings.Contains(out.Result.Text, "conflict") {
		t.Errorf("no conflict reported: %q", out.Result.Text)
	}
	// Twin: without the edit, the command's change applies.
	out = call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"` + filepath.Join(root, "slow.sh") + `"}`})
	if got, _ := os.ReadFile(filepath.Join(root, "f.txt")); string(got) != "command\n" {
		t.Errorf("f.txt = %q after an undisturbed run (%q)", got, out.Result.Text)
	}
}

// TestScenarioDenyRulesHoldInsideCommands: an operator's `deny secrets/**`
// rule is a barrier for commands too — `cat secrets/pw` fails inside the
// sandbox and a command's change to secrets/ is held, while files outside
// the rule read and change normally.
func TestScenarioDenyRulesHoldInsideCommands(t *testing.T) {
	r := newTestRuntime(t, "yolo")
	requireCommands(t, r)
	r = reopenWith(t, r, func(cfg string) string {
		return cfg + "\n[[rules]]\nid = \"no-secrets\"\ntool = \"read_file\"\npath = \"secrets/**\"\neffect = \"deny\"\n"
	})
	root := r.Config.Workspace.Roots[0].Path
	writeWorkspaceFile(t, r, "secrets/pw", "TOPSECRET\n")
	writeWorkspaceFile(t, r, "public/a.txt", "public\n")
	out := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"cat","args":["secrets/pw","public/a.txt"]}`})
	if out.Result == nil || strings.Contains(out.Result.Text, "TOPSECRET") || !strings.Contains(out.Result.Text, "public") {
		t.Errorf("cat: %+v", out.Result)
	}
	writeWorkspaceFile(t, r, "w.sh", "#!/bin/sh\necho changed > secrets/new\necho changed > public/b.txt\n")
	if err := os.Chmod(filepath.Join(root, "w.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	out = call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"` + filepath.Join(root, "w.sh") + `"}`})
	if _, err := os.Stat(filepath.Join(root, "secrets", "new")); err == nil {
		t.Errorf("a command wrote under a deny rule: %q", out.Result.Text)
	}
	if !strings.Contains(out.Result.Text, "secrets/new") {
		t.Errorf("the held change does not name secrets/new: %q", out.Result.Text)
	}
}

// TestScenarioAuditListsChanges: the audit record of a command lists what
// it changed — applied or held — and the chain still verifies.
func TestScenarioAuditListsChanges(t *testing.T) {
	r := newTestRuntime(t, "autopilot")
	requireCommands(t, r)
	out := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"mkdir","args":["-p","made/deep"]}`})
	wantDecision(t, out, "ran", "mode.autopilot")
	recs, err := audit.List(context.Background(), r.Store, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	if !strings.Contains(last.Effects, "applied as checkpoint") || !strings.Contains(last.Effects, `create folder "made/deep"`) {
		t.Errorf("audit effects = %q", last.Effects)
	}
	if _, err := audit.Verify(context.Background(), r.Store); err != nil {
		t.Errorf("chain: %v", err)
	}
}

// TestScenarioApprovedGitCommit: an approved `git add` and `git commit`
// work — their change sets (objects, refs, logs, the index) are git's own
// data and apply — and nothing else in .git changes.
func TestScenarioApprovedGitCommit(t *testing.T) {
	r := newTestRuntime(t, "smart")
	requireCommands(t, r)
	ctx := context.Background()
	writeWorkspaceFile(t, r, "repo/a.txt", "one\n")
	repo := gitRepo(t, r, "repo")
	writeWorkspaceFile(t, r, "repo/b.txt", "two\n")
	// The owner's identity comes from the repository's config: the
	// sandbox reads no global git config.
	for _, kv := range [][2]string{{"user.name", "Owner"}, {"user.email", "owner@example.com"}} {
		c := exec.Command("git", "config", kv[0], kv[1])
		c.Dir = repo
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git config: %v %s", err, out)
		}
	}
	config, _ := os.ReadFile(filepath.Join(repo, ".git", "config"))
	for _, args := range []string{`["add","b.txt"]`, `["commit","-m","add b"]`} {
		req := CallRequest{Tool: "run_command", Args: `{"program":"git","args":` + args + `,"cwd":"repo"}`, Session: "g"}
		out := call(t, r, req)
		wantDecision(t, out, "pending", "mode.smart")
		if _, err := r.Owner.Approve(ctx, out.ApprovalID, "once"); err != nil {
			t.Fatal(err)
		}
		out = call(t, r, req)
		if string(out.Decision) != "ran" || out.Result == nil || out.Result.IsError || !strings.Contains(out.Result.Text, "applied") {
			t.Fatalf("git %s: %s %+v", args, out.Decision, out.Result)
		}
	}
	c := exec.Command("git", "log", "--oneline")
	c.Dir = repo
	c.Env = []string{"HOME=" + repo, "GIT_CONFIG_NOSYSTEM=1"}
	log, err := c.CombinedOutput()
	if err != nil || !strings.Contains(string(log), "add b") {
		t.Errorf("git log after the approved commit: %s %v", log, err)
	}
	if now, _ := os.ReadFile(filepath.Join(repo, ".git", "config")); string(now) != string(config) {
		t.Errorf(".git/config changed: %q", now)
	}
}

// TestScenarioHostToolsConfigured: a file the operator lists in
// commands.host_tools is held like .vscode/ when a command writes it; the
// same write elsewhere applies.
func TestScenarioHostToolsConfigured(t *testing.T) {
	r := newTestRuntime(t, "autopilot")
	requireCommands(t, r)
	r = reopenWith(t, r, func(cfg string) string {
		return strings.Replace(cfg, "host_tools = []", `host_tools = ["run-on-open.sh"]`, 1)
	})
	root := r.Config.Workspace.Roots[0].Path
	writeWorkspaceFile(t, r, "w.sh", "#!/bin/sh\necho x > \"$1\"\n")
	if err := os.Chmod(filepath.Join(root, "w.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		applied bool
	}{{"run-on-open.sh", false}, {"sub/run-on-open.sh", false}, {"ordinary.sh", true}, {".vscode/tasks.json", false}} {
		writeWorkspaceFile(t, r, filepath.Dir(tc.name)+"/.keep", "")
		out := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"` + filepath.Join(root, "w.sh") + `","args":["` + tc.name + `"]}`})
		_, err := os.Stat(filepath.Join(root, tc.name))
		if (err == nil) != tc.applied {
			t.Errorf("%s: applied = %v; want %v (%q)", tc.name, err == nil, tc.applied, out.Result.Text)
		}
	}
}

// TestScenarioSymlinkedCwdCannotDodgeARule: a deny rule on secrets/**
// for run_command also holds when the working folder is a symlink into
// secrets/; the twin, a folder outside the rule, runs.
func TestScenarioSymlinkedCwdCannotDodgeARule(t *testing.T) {
	r := newTestRuntime(t, "yolo")
	requireCommands(t, r)
	r = reopenWith(t, r, func(cfg string) string {
		return cfg + "\n[[rules]]\nid = \"no-secrets\"\ntool = \"run_command\"\npath = \"secrets/**\"\neffect = \"deny\"\n"
	})
	root := r.Config.Workspace.Roots[0].Path
	writeWorkspaceFile(t, r, "secrets/inner/pw", "x\n")
	writeWorkspaceFile(t, r, "public/a.txt", "x\n")
	if err := os.Symlink("secrets/inner", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	out := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"ls","cwd":"link"}`})
	wantDecision(t, out, "denied", "rule.no-secrets")
	out = call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"ls","cwd":"public"}`})
	wantDecision(t, out, "ran", "")
}
