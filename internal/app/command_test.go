package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/sandbox"
)

// TestRunCommandThroughThePipeline drives run_command as a hostile model
// would: shells, wrappers and shell syntax never run; a plain program runs
// in the sandbox with argv taken literally; destructive forms always ask.
func TestRunCommandThroughThePipeline(t *testing.T) {
	r := newTestRuntime(t, "yolo")
	if _, ok := r.Registry.Lookup("run_command"); !ok {
		t.Fatal("run_command is not registered")
	}
	if _, err := sandbox.Select(r.Config.Sandbox.Backend); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox backend works here, and CI must test one: %v", err)
		}
		t.Skipf("no sandbox backend works here: %v", err)
	}
	root := r.Config.Workspace.Roots[0].Path
	refused := []string{
		`{"program":"sh","args":["-c","id"]}`,
		`{"program":"bash","args":["-c","touch pwned"]}`,
		`{"program":"/bin/sh","args":["-c","id"]}`,
		`{"program":"python3","args":["-c","print(1)"]}`,
		`{"program":"env","args":["-S","sh -c id"]}`,
		`{"program":"ls; touch pwned"}`,
		`{"program":"ls "}`,
		`{"program":"find","args":[".","-exec","sh","-c","touch pwned",";"]}`,
		`{"program":"git","args":["-c","core.pager=touch pwned","log"]}`,
		`{"program":"git","args":["clone","--upload-p=touch pwned","x"]}`,
		`{"program":"curl","args":["http://169.254.169.254/"]}`,
	}
	// The refusals in a session of their own: after them the session would
	// ask first (monitor.denied-repeat), and the calls below are twins.
	for _, args := range refused {
		out := call(t, r, CallRequest{Tool: "run_command", Args: args, Session: "refused"})
		if string(out.Decision) != "denied" || !strings.HasPrefix(out.Rule, "limit.") {
			t.Errorf("run_command %s: %s by %s (%s); want denied by a hard limit", args, out.Decision, out.Rule, out.Reason)
		}
	}
	// A program inside the (writable) workspace runs as code whatever its
	// name: on an overlay, with its effects graded (it changes nothing
	// here, so nothing is applied).
	bin, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "notes"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	out0 := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"` + filepath.Join(root, "notes") + `"}`, Mode: "smart"})
	wantDecision(t, out0, "pending", "mode.smart")
	if !strings.Contains(out0.Plan, "on a copy") {
		t.Errorf("plan %q does not say the program runs on a copy", out0.Plan)
	}
	// find -exec runs code: it asks in smart mode instead of being read.
	out0 = call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"find","args":[".","-exec","touch","pwned",";"]}`, Mode: "smart"})
	wantDecision(t, out0, "pending", "mode.smart")

	// Shell syntax in argv is literal: echo prints it, nothing else runs.
	out := call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"echo","args":["a;","touch","pwned","&&","$(id)","|","sh"]}`})
	wantDecision(t, out, "ran", "mode.")
	if !strings.Contains(out.Result.Text, "a; touch pwned && $(id) | sh") {
		t.Fatalf("echo output %q; want the arguments verbatim", out.Result.Text)
	}
	if _, err := os.Stat(filepath.Join(root, "pwned")); err == nil {
		t.Fatal("a refused or literal command created a file")
	}
	// In smart mode a read-only program runs; one that changes things asks.
	out = call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"ls","args":["-la"]}`, Mode: "smart"})
	wantDecision(t, out, "ran", "mode.smart.read")
	out = call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"mkdir","args":["new"]}`, Mode: "smart"})
	wantDecision(t, out, "pending", "mode.smart")
	// A repository's own config cannot make git run a program: core.fsmonitor
	// in .git/config is overridden.
	if _, err := os.Stat("/usr/bin/git"); err == nil {
		repo := filepath.Join(root, "repo")
		for _, d := range []string{"repo/.git/objects", "repo/.git/refs"} {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		writeWorkspaceFile(t, r, "repo/.git/HEAD", "ref: refs/heads/main\n")
		writeWorkspaceFile(t, r, "repo/.git/config", "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch fsmonitor-ran\n")
		out = call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"git","args":["status"],"cwd":"repo"}`})
		if _, err := os.Stat(filepath.Join(repo, "fsmonitor-ran")); err == nil {
			t.Fatalf("git ran the repository's core.fsmonitor command: %+v", out.Result)
		}
	}
	// Destructive forms ask even in yolo mode.
	out = call(t, r, CallRequest{Tool: "run_command", Args: `{"program":"rm","args":["-rf","notes"]}`})
	wantDecision(t, out, "pending", "risk.critical")
	// The plan shows the absolute program path and the exact argv.
	if !strings.Contains(out.Plan, `["/usr/bin/rm", "-rf", "notes"]`) && !strings.Contains(out.Plan, `["/bin/rm", "-rf", "notes"]`) {
		t.Fatalf("plan %q does not show the resolved argv", out.Plan)
	}
}
