package policy

import (
	"strings"
	"testing"
)

func cmd(program string, args ...string) Command {
	p := program
	if !strings.HasPrefix(p, "/") {
		p = "/usr/bin/" + program
	}
	return Command{Program: program, Path: p, RealPath: p, Args: args}
}

func TestClassifyCommandRefuses(t *testing.T) {
	cases := []struct {
		name string
		c    Command
		rule string
	}{
		{"shell", cmd("sh", "-c", "id"), "limit.shell"},
		{"bash by path", cmd("/bin/bash", "-c", "id"), "limit.shell"},
		{"symlinked shell", Command{Program: "view", Path: "/usr/bin/view", RealPath: "/usr/bin/dash"}, "limit.shell"},
		{"busybox", cmd("busybox", "sh"), "limit.shell"},
		{"python versioned", cmd("python3.11", "-c", "print(1)"), "limit.inline-code"},
		{"perl", cmd("perl", "-e", "exec 'sh'"), "limit.inline-code"},
		{"node", cmd("node", "-e", "1"), "limit.inline-code"},
		{"awk system", cmd("awk", `BEGIN{system("id")}`), "limit.inline-code"},
		{"env -S", cmd("env", "-S", "sh -c id"), "limit.wrapper"},
		{"xargs", cmd("xargs", "rm"), "limit.wrapper"},
		{"sudo", cmd("sudo", "ls"), "limit.wrapper"},
		{"timeout", cmd("timeout", "5", "sh"), "limit.wrapper"},
		{"nice", cmd("nice", "ls"), "limit.wrapper"},
		{"setarch", cmd("setarch", "x86_64", "sh"), "limit.wrapper"},
		{"prlimit", cmd("prlimit", "sh"), "limit.wrapper"},
		{"homard itself", cmd("homard", "__homard-sandbox-landlock"), "limit.wrapper"},
		{"tmux", cmd("tmux", "new", "id"), "limit.shell"},
		{"curl", cmd("curl", "http://169.254.169.254/"), "limit.network"},
		{"find exec shell", cmd("find", ".", "-exec", "sh", "-c", "id", ";"), "limit.shell"},
		{"git -c", cmd("git", "-c", "core.pager=sh", "log"), "limit.argv"},
		{"git upload-pack", cmd("git", "clone", "--upload-pack=touch /tmp/x", "repo"), "limit.network"},
		{"git exec-path", cmd("git", "--exec-path=/tmp", "status"), "limit.argv"},
		{"git config-env", cmd("git", "--config-env=core.pager=X", "log"), "limit.argv"},
		{"git submodule foreach", cmd("git", "submodule", "foreach", "id"), "limit.argv"},
		{"git config", cmd("git", "config", "core.hooksPath", "/tmp"), "limit.argv"},
		{"git rebase exec", cmd("git", "rebase", "-x", "id", "main"), "limit.argv"},
		{"tar to-command shell", cmd("tar", "xf", "a.tar", "--to-command=sh"), "limit.shell"},
		{"rg pre shell", cmd("rg", "--pre", "sh", "x"), "limit.shell"},
		{"trailing space", cmd("ls ", "-l"), "limit.program-name"},
		{"semicolon", cmd("ls;id"), "limit.program-name"},
		{"and-and", cmd("ls&&id"), "limit.program-name"},
		{"pipe", cmd("ls|sh"), "limit.program-name"},
		{"subshell", cmd("$(id)"), "limit.program-name"},
		{"backticks", cmd("`id`"), "limit.program-name"},
		{"newline", cmd("ls\nid"), "limit.program-name"},
		{"program with args", cmd("ls -la"), "limit.program-name"},
		{"relative path", Command{Program: "./x", Path: "/w/x", RealPath: "/w/x"}, "limit.program-name"},
		{"unclean path", Command{Program: "/usr/bin/../bin/sh", Path: "/usr/bin/sh", RealPath: "/usr/bin/dash"}, "limit.program-name"},
		{"NUL in arg", cmd("ls", "a\x00b"), "limit.argv"},
	}
	for _, c := range cases {
		v := ClassifyCommand(c.c, nil)
		if !v.Refused || v.Rule != c.rule {
			t.Errorf("%s: ClassifyCommand(%q %q) = %+v; want refused by %s", c.name, c.c.Program, c.c.Args, v, c.rule)
		}
	}
}

// TestClassifyCommandRisk: read is low, write medium with escalations,
// runs code medium unless the program changes the system.
func TestClassifyCommandRisk(t *testing.T) {
	cases := []struct {
		c     Command
		risk  Risk
		class Class
	}{
		{cmd("ls", "-la"), RiskLow, ClassRead},
		{cmd("cat", "notes.txt"), RiskLow, ClassRead},
		{cmd("echo", "a;b", "&&", "$(id)", "`x`", "|"), RiskLow, ClassRead}, // argv is literal: no shell
		{cmd("git", "status"), RiskLow, ClassRead},
		{cmd("git", "log", "--oneline", "-5"), RiskLow, ClassRead},
		{cmd("git", "log", "--pretty=oneline"), RiskLow, ClassRead},
		{cmd("find", ".", "-name", "*.go"), RiskLow, ClassRead},
		{cmd("sort", "-o", "out.txt", "in.txt"), RiskMedium, ClassWrite},
		{cmd("mkdir", "build"), RiskMedium, ClassWrite},
		{cmd("git", "commit", "-m", "x"), RiskMedium, ClassWrite},
		{cmd("rm", "a.txt"), RiskHigh, ClassWrite},
		{cmd("rm", "-rf", "build"), RiskCritical, ClassWrite},
		{cmd("rm", "-r", "build"), RiskCritical, ClassWrite},
		{cmd("rm", "--recursive", "build"), RiskCritical, ClassWrite},
		{cmd("rm", "--recu", "build"), RiskCritical, ClassWrite},
		{cmd("rmdir", "-p", "a/b"), RiskHigh, ClassWrite},
		{cmd("find", ".", "-delete"), RiskHigh, ClassWrite},
		{cmd("git", "reset", "--hard", "HEAD~3"), RiskCritical, ClassWrite},
		{cmd("git", "rebase", "main"), RiskCritical, ClassWrite},
		{cmd("git", "rebase", "-i", "main"), RiskCritical, ClassRunsCode},
		{cmd("git", "commit", "--amend", "--no-edit"), RiskCritical, ClassWrite},
		{cmd("git", "branch", "-D", "x"), RiskCritical, ClassWrite},
		{cmd("git", "clean", "-fdx"), RiskCritical, ClassWrite},
		{cmd("git", "checkout", "--", "."), RiskCritical, ClassWrite},
		{cmd("chmod", "-R", "777", "."), RiskCritical, ClassWrite},
		{cmd("chown", "x", "f"), RiskCritical, ClassWrite},
		{cmd("go", "test", "./..."), RiskMedium, ClassRunsCode},
		{cmd("gcc", "x.c"), RiskMedium, ClassRunsCode},
		{cmd("dd", "if=/dev/zero", "of=x"), RiskCritical, ClassRunsCode},
		{cmd("mkfs.ext4", "/dev/sda"), RiskCritical, ClassRunsCode},
		{cmd("truncate", "-s", "0", "f"), RiskCritical, ClassRunsCode},
	}
	for _, c := range cases {
		v := ClassifyCommand(c.c, nil)
		if v.Refused || v.Risk != c.risk || v.Class != c.class || v.ReadOnly != (c.class == ClassRead) {
			t.Errorf("ClassifyCommand(%s %q) = %+v; want risk %s class %v", c.c.Program, c.c.Args, v, c.risk, c.class)
		}
	}
}

func TestClassifyCommandOperatorAllow(t *testing.T) {
	c := Command{Program: "python3", Path: "/usr/bin/python3", RealPath: "/usr/bin/python3.11", Args: []string{"-c", "print(1)"}}
	if v := ClassifyCommand(c, []string{"python3.11"}); v.Refused || v.Risk != RiskMedium || v.Class != ClassRunsCode {
		t.Fatalf("operator-allowed interpreter: %+v; want medium risk, runs code", v)
	}
	if v := ClassifyCommand(c, []string{"/usr/bin/python3"}); v.Refused {
		t.Fatalf("operator-allowed by path: %+v", v)
	}
	if v := ClassifyCommand(c, []string{"perl"}); !v.Refused {
		t.Fatalf("allowing perl let python -c run: %+v", v)
	}
	// An allowed program runs as code, never as a read, even if the
	// catalog would read it.
	if v := ClassifyCommand(cmd("ls", "-l"), []string{"ls"}); v.Class != ClassRunsCode || v.ReadOnly || v.Template.Grantable() {
		t.Fatalf("operator-allowed ls: %+v; want runs code", v)
	}
	// Allowing a program never makes a malformed program name acceptable.
	if v := ClassifyCommand(cmd("sh -c"), []string{"sh -c", "sh"}); !v.Refused {
		t.Fatalf("malformed name allowed: %+v", v)
	}
}

// FuzzClassifyCommand: whatever the program and arguments, nothing that
// names a shell or a wrapper runs, a refused verdict always carries a
// rule, and a verdict is well-formed.
func FuzzClassifyCommand(f *testing.F) {
	f.Add("ls", "-la", "x", "y")
	f.Add("sh", "-c", "id", "")
	f.Add("git", "--upload-pa=x", "clone", "")
	f.Add("ls ", "", "", "")
	f.Add("env", "-S", "sh -c id", "")
	f.Add("git", "grep", "-Ofoo", "x")
	f.Add("tar", "cfI", "a", "sh")
	f.Add("find", ".", "-exec", "bash")
	f.Add("perl5.36-x86_64", "-lane", "1", "")
	f.Fuzz(func(t *testing.T, program, a1, a2, a3 string) {
		c := cmd(program, a1, a2, a3)
		v := ClassifyCommand(c, nil)
		if v.Refused && v.Rule == "" {
			t.Fatalf("refused without a rule: %+v", v)
		}
		base := program[strings.LastIndexByte(program, '/')+1:]
		if kind, ok := refusedPrograms[base]; ok && !v.Refused {
			t.Fatalf("%s %q (a %s) was not refused", program, []string{a1, a2, a3}, kind)
		}
		if v.Refused {
			return
		}
		if v.Risk < RiskLow || v.Risk > RiskCritical || v.Class < ClassRead || v.Class > ClassRunsCode {
			t.Fatalf("invalid verdict %+v", v)
		}
		if v.ReadOnly != (v.Class == ClassRead) || v.Template.RunsCode != (v.Class == ClassRunsCode) {
			t.Fatalf("inconsistent verdict %+v", v)
		}
		if base == "git" {
			for _, a := range []string{a1, a2, a3} {
				if strings.HasPrefix(a, "--upload-pack") || strings.HasPrefix(a, "--git-dir") || strings.HasPrefix(a, "-c") && a == a1 {
					t.Fatalf("git %q not refused: %+v", []string{a1, a2, a3}, v)
				}
			}
		}
		_ = v.Template.String()
	})
}

func TestRuleMatchesCommand(t *testing.T) {
	git := []string{"/usr/bin/git", "status", "-s"}
	cases := []struct {
		pattern []string
		argv    []string
		want    bool
	}{
		{nil, git, true},
		{[]string{"/usr/bin/git", "status", "**"}, git, true},
		{[]string{"/usr/bin/git", "status", "**"}, []string{"/usr/bin/git", "status"}, true},
		{[]string{"/usr/bin/git", "status"}, git, false}, // the full argv, not a prefix
		{[]string{"/usr/bin/git", "**"}, git, true},
		{[]string{"git", "**"}, git, false}, // never the bare first word
		{[]string{"/usr/*/git", "st*", "-s"}, git, true},
		{[]string{"/usr/bin/git", "push", "**"}, git, false},
		{[]string{"/usr/bin/git", "**"}, nil, false}, // not a command plan
	}
	for _, c := range cases {
		if got := (Rule{Command: c.pattern}).MatchesCommand(c.argv); got != c.want {
			t.Errorf("Rule{Command: %q}.MatchesCommand(%q) = %v; want %v", c.pattern, c.argv, got, c.want)
		}
	}
	in := Input{Tool: "run_command", Action: ActionExec, Risk: RiskMedium, Trust: TrustOwner, Mode: ModeSmart,
		Command: []string{"/usr/bin/mkdir", "build"},
		Rules: []Rule{
			{ID: "no-touch", Tool: "run_command", Effect: Deny, Command: []string{"/usr/bin/touch", "**"}},
			{ID: "mkdir-build", Tool: "run_command", Effect: Allow, Command: []string{"/usr/bin/mkdir", "build"}},
		}}
	if d := Decide(in); d.Verdict != Allow || d.Rule != "rule.mkdir-build" {
		t.Errorf("Decide(mkdir build) = %v; want allow by rule.mkdir-build", d)
	}
	in.Command = []string{"/usr/bin/mkdir", "other"}
	if d := Decide(in); d.Verdict != Ask {
		t.Errorf("Decide(mkdir other) = %v; want ask", d)
	}
	in.Command, in.Mode = []string{"/usr/bin/touch", "x"}, ModeYolo
	if d := Decide(in); d.Verdict != Deny || d.Rule != "rule.no-touch" {
		t.Errorf("Decide(touch x) in yolo = %v; want deny by rule.no-touch", d)
	}
}
