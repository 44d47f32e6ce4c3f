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
		{"python versioned", cmd("python3.11", "-c", "print(1)"), "limit.interpreter"},
		{"python3", cmd("python3", "x.py"), "limit.interpreter"},
		{"perl", cmd("perl", "-e", "exec 'sh'"), "limit.interpreter"},
		{"node", cmd("node", "-e", "1"), "limit.interpreter"},
		{"awk system", cmd("awk", `BEGIN{system("id")}`), "limit.interpreter"},
		{"sed e command", cmd("sed", "s/x/id/e"), "limit.interpreter"},
		{"env -S", cmd("env", "-S", "sh -c id"), "limit.wrapper"},
		{"xargs", cmd("xargs", "rm"), "limit.wrapper"},
		{"sudo", cmd("sudo", "ls"), "limit.wrapper"},
		{"timeout", cmd("timeout", "5", "sh"), "limit.wrapper"},
		{"nice", cmd("nice", "ls"), "limit.wrapper"},
		{"homard itself", cmd("homard", "__homard-sandbox-landlock"), "limit.wrapper"},
		{"sqlite3 .shell", cmd("sqlite3", "x.db", ".shell id"), "limit.interpreter"},
		{"tmux", cmd("tmux", "new", "id"), "limit.interpreter"},
		{"dpkg", cmd("dpkg", "-i", "x.deb"), "limit.interpreter"},
		{"curl", cmd("curl", "http://169.254.169.254/"), "limit.network"},
		{"find exec", cmd("find", ".", "-exec", "sh", "-c", "id", ";"), "limit.argv"},
		{"find execdir", cmd("find", ".", "-execdir", "id", ";"), "limit.argv"},
		{"find delete", cmd("find", ".", "-delete"), "limit.argv"},
		{"git -c", cmd("git", "-c", "core.pager=sh", "log"), "limit.argv"},
		{"git upload-pack", cmd("git", "clone", "--upload-pack=touch /tmp/x", "repo"), "limit.argv"},
		{"git upload-pack abbreviated", cmd("git", "clone", "--upload-p=evil", "repo"), "limit.argv"},
		{"git exec-path", cmd("git", "--exec-path=/tmp", "status"), "limit.argv"},
		{"git config-env", cmd("git", "--config-env=core.pager=X", "log"), "limit.argv"},
		{"git ext transport", cmd("git", "clone", "ext::sh -c id", "d"), "limit.argv"},
		{"git submodule foreach", cmd("git", "submodule", "foreach", "id"), "limit.argv"},
		{"git config", cmd("git", "config", "core.hooksPath", "/tmp"), "limit.argv"},
		{"git rebase exec", cmd("git", "rebase", "-x", "id", "main"), "limit.argv"},
		{"tar to-command", cmd("tar", "xf", "a.tar", "--to-command=sh"), "limit.argv"},
		{"tar checkpoint action", cmd("tar", "cf", "a.tar", "--checkpoint-action=exec=id", "."), "limit.argv"},
		{"tar -I", cmd("tar", "-I", "sh", "-xf", "a"), "limit.argv"},
		{"rg pre", cmd("rg", "--pre", "sh", "x"), "limit.argv"},
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

func TestClassifyCommandRisk(t *testing.T) {
	cases := []struct {
		c        Command
		risk     Risk
		readOnly bool
	}{
		{cmd("ls", "-la"), RiskLow, true},
		{cmd("cat", "notes.txt"), RiskLow, true},
		{cmd("echo", "a;b", "&&", "$(id)", "`x`", "|"), RiskLow, true}, // argv is literal: no shell
		{cmd("git", "status"), RiskLow, true},
		{cmd("git", "log", "--oneline", "-5"), RiskLow, true},
		{cmd("git", "log", "--pretty=oneline"), RiskLow, true},
		{cmd("find", ".", "-name", "*.go"), RiskLow, true},
		{cmd("sort", "-o", "out.txt", "in.txt"), RiskMedium, false},
		{cmd("mkdir", "build"), RiskMedium, false},
		{cmd("git", "commit", "-m", "x"), RiskMedium, false},
		{cmd("git", "push", "origin", "main"), RiskHigh, false},
		{cmd("rm", "a.txt"), RiskHigh, false},
		{cmd("rm", "-rf", "build"), RiskCritical, false},
		{cmd("rm", "-r", "build"), RiskCritical, false},
		{cmd("rm", "--recursive", "build"), RiskCritical, false},
		{cmd("rmdir", "-p", "a/b"), RiskHigh, false},
		{cmd("git", "push", "--force", "origin", "main"), RiskCritical, false},
		{cmd("git", "push", "-f"), RiskCritical, false},
		{cmd("git", "push", "--force-with-lease"), RiskCritical, false},
		{cmd("git", "push", "origin", "+main"), RiskCritical, false},
		{cmd("git", "push", "origin", ":main"), RiskCritical, false},
		{cmd("git", "reset", "--hard", "HEAD~3"), RiskCritical, false},
		{cmd("git", "rebase", "-i", "main"), RiskCritical, false},
		{cmd("git", "commit", "--amend"), RiskCritical, false},
		{cmd("git", "branch", "-D", "x"), RiskCritical, false},
		{cmd("git", "clean", "-fdx"), RiskCritical, false},
		{cmd("git", "checkout", "--", "."), RiskCritical, false},
		{cmd("chmod", "-R", "777", "."), RiskCritical, false},
		{cmd("chown", "x", "f"), RiskCritical, false},
		{cmd("dd", "if=/dev/zero", "of=x"), RiskCritical, false},
		{cmd("mkfs.ext4", "/dev/sda"), RiskCritical, false},
		{cmd("truncate", "-s", "0", "f"), RiskCritical, false},
	}
	for _, c := range cases {
		v := ClassifyCommand(c.c, nil)
		if v.Refused || v.Risk != c.risk || v.ReadOnly != c.readOnly {
			t.Errorf("ClassifyCommand(%s %q) = %+v; want risk %s read-only %v", c.c.Program, c.c.Args, v, c.risk, c.readOnly)
		}
	}
}

func TestClassifyCommandOperatorAllow(t *testing.T) {
	c := Command{Program: "python3", Path: "/usr/bin/python3", RealPath: "/usr/bin/python3.11", Args: []string{"tool.py"}}
	if v := ClassifyCommand(c, []string{"python3.11"}); v.Refused || v.Risk != RiskMedium {
		t.Fatalf("operator-allowed interpreter: %+v; want medium risk", v)
	}
	if v := ClassifyCommand(c, []string{"/usr/bin/python3"}); v.Refused {
		t.Fatalf("operator-allowed by path: %+v", v)
	}
	if v := ClassifyCommand(c, []string{"perl"}); !v.Refused {
		t.Fatalf("allowing perl let python run: %+v", v)
	}
	// Allowing a program never makes a malformed program name acceptable.
	if v := ClassifyCommand(cmd("sh -c"), []string{"sh -c", "sh"}); !v.Refused {
		t.Fatalf("malformed name allowed: %+v", v)
	}
}

// FuzzClassifyCommand: whatever the program and arguments, nothing that
// names a shell or a wrapper runs, argv never makes a shell, and a refused
// verdict always carries a rule.
func FuzzClassifyCommand(f *testing.F) {
	f.Add("ls", "-la", "x")
	f.Add("sh", "-c", "id")
	f.Add("git", "--upload-pa=x", "clone")
	f.Add("ls ", "", "")
	f.Add("env", "-S", "sh -c id")
	f.Fuzz(func(t *testing.T, program, a1, a2 string) {
		c := cmd(program, a1, a2)
		v := ClassifyCommand(c, nil)
		if v.Refused && v.Rule == "" {
			t.Fatalf("refused without a rule: %+v", v)
		}
		base := program[strings.LastIndexByte(program, '/')+1:]
		if kind, ok := forbiddenPrograms[base]; ok && !v.Refused {
			t.Fatalf("%s %q (a %s) was not refused", program, []string{a1, a2}, kind)
		}
		if !v.Refused && (v.Risk < RiskLow || v.Risk > RiskCritical) {
			t.Fatalf("invalid risk %v", v.Risk)
		}
		for _, a := range []string{a1, a2} {
			if strings.HasPrefix(a, "--upload-pack") && !v.Refused {
				t.Fatalf("%q not refused", a)
			}
		}
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
