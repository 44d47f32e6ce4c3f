package policy

import (
	"strings"
	"testing"
)

// tmpl is the template run_command would build: the verdict's template
// with the caller's fields filled in.
func tmpl(dir string, timeout int, stdin string, program string, args ...string) Template {
	v := ClassifyCommand(cmd(program, args...), nil)
	t := v.Template
	t.Dir, t.TimeoutS, t.SHA256 = dir, timeout, "ab12"
	t.SetStdin(stdin)
	return t
}

// insideAll stands for a resolver that finds every path inside.
func insideAll(dir, slot, op string, _ bool) bool { return true }

func TestTemplateCovers(t *testing.T) {
	grant := tmpl(".", 60, "", "mkdir", "build")
	nested := tmpl(".", 60, "", "mkdir", "-p", "build/x")
	cases := []struct {
		name   string
		grant  Template
		call   Template
		inside Inside
		want   bool
	}{
		{"the approved command", grant, tmpl(".", 60, "", "mkdir", "build"), insideAll, true},
		{"a second mkdir (twin)", grant, tmpl(".", 60, "", "mkdir", "src"), insideAll, true},
		// A destination stays directly in the folder the owner saw.
		{"a path deeper than the working folder", grant, tmpl(".", 60, "", "mkdir", "build/x"), insideAll, false},
		{"a shorter timeout", grant, tmpl(".", 30, "", "mkdir", "src"), insideAll, true},
		{"cp /etc/passwd", grant, tmpl(".", 60, "", "cp", "/etc/passwd", "important.txt"), insideAll, false},
		{"an added option", grant, tmpl(".", 60, "", "mkdir", "-p", "x", "--mode=4777"), insideAll, false},
		{"gcc -wrapper", grant, tmpl(".", 60, "", "gcc", "-wrapper", "sh,-c,id"), insideAll, false},
		{"mkdir ../x", grant, tmpl(".", 60, "", "mkdir", "../x"), insideAll, false},
		{"mkdir -x", grant, tmpl(".", 60, "", "mkdir", "-x"), insideAll, false},
		{"mkdir -- -x", grant, tmpl(".", 60, "", "mkdir", "--", "-x"), insideAll, false},
		{"an absolute path", grant, tmpl(".", 60, "", "mkdir", "/etc/x"), insideAll, false},
		{"the working folder itself", grant, tmpl(".", 60, "", "mkdir", "."), insideAll, false},
		{"an unclean path", grant, tmpl(".", 60, "", "mkdir", "a//b"), insideAll, false},
		{"two operands", grant, tmpl(".", 60, "", "mkdir", "a", "b"), insideAll, false},
		{"another folder", grant, tmpl("sub", 60, "", "mkdir", "src"), insideAll, false},
		{"a longer timeout", grant, tmpl(".", 61, "", "mkdir", "src"), insideAll, false},
		{"stdin", grant, tmpl(".", 60, "x", "mkdir", "src"), insideAll, false},
		{"the resolver says outside (a symlink)", grant, tmpl(".", 60, "", "mkdir", "link/x"), func(string, string, string, bool) bool { return false }, false},
		{"no resolver", grant, tmpl(".", 60, "", "mkdir", "src"), nil, false},
		{"nested slot, same folder", nested, tmpl(".", 60, "", "mkdir", "-p", "build/y"), insideAll, true},
		{"nested slot, deeper", nested, tmpl(".", 60, "", "mkdir", "-p", "build/y/z"), insideAll, false},
		{"nested slot, another folder", nested, tmpl(".", 60, "", "mkdir", "-p", "src/y"), insideAll, false},
		{"nested slot, the folder itself", nested, tmpl(".", 60, "", "mkdir", "-p", "build"), insideAll, false},
		{"nested slot, no -p", nested, tmpl(".", 60, "", "mkdir", "build/y"), insideAll, false},
		{"the same spelling is not needed", nested, tmpl(".", 60, "", "mkdir", "--parents", "build/y"), insideAll, true},
	}
	for _, c := range cases {
		if got := c.grant.Covers(c.call, c.inside); got != c.want {
			t.Errorf("%s: grant %s covers %s = %v; want %v", c.name, c.grant, c.call, got, c.want)
		}
	}
	// A different binary at the same path is not covered.
	other := tmpl(".", 60, "", "mkdir", "src")
	other.SHA256 = "ff"
	if grant.Covers(other, insideAll) {
		t.Errorf("a grant covered another binary")
	}
	// The resolver is asked about the operand, in the grant's folder.
	var asked []string
	grant.Covers(tmpl(".", 60, "", "mkdir", "src"), func(dir, slot, op string, _ bool) bool {
		asked = append(asked, dir+"|"+slot+"|"+op)
		return true
	})
	if strings.Join(asked, ",") != ".|.|src" {
		t.Errorf("resolver asked %q; want .|.|src", asked)
	}
}

// TestTemplateRunsCodeNeverCovers: a command that runs code outside a
// graded sandbox is not grantable and covers nothing, not even itself.
func TestTemplateRunsCodeNeverCovers(t *testing.T) {
	for _, a := range [][]string{{"go", "test", "./..."}, {"python3", "x.py"}, {"gcc", "x.c"}, {"git", "commit"}} {
		g := tmpl(".", 60, "", a[0], a[1:]...)
		if g.Grantable() || g.Covers(g, insideAll) {
			t.Errorf("template of %q (runs code) is grantable or covers itself", a)
		}
	}
}

// TestTemplateGradedCode: a command that runs code, run graded (Graded:
// sandboxed, no network, its change set graded), is grantable and covers
// exactly itself run graded; never the same command run ungraded, nor a
// wider one, nor a command that does not run code (the twins).
func TestTemplateGradedCode(t *testing.T) {
	graded := func(timeout int, program string, args ...string) Template {
		tm := tmpl(".", timeout, "", program, args...)
		tm.Graded = true
		return tm
	}
	grant := graded(60, "make", "test")
	if !grant.RunsCode || !grant.Grantable() {
		t.Fatalf("graded make test: RunsCode %v Grantable %v; want both", grant.RunsCode, grant.Grantable())
	}
	ungraded := tmpl(".", 60, "", "make", "test")
	if ungraded.Grantable() || ungraded.Covers(grant, insideAll) {
		t.Errorf("make test run ungraded is grantable or covers the graded one")
	}
	if !strings.Contains(grant.Cover(), "no network") || strings.Contains(tmpl(".", 60, "", "mkdir", "build").Cover(), "no network") ||
		strings.Contains(ungraded.Cover(), "no network") {
		t.Errorf("Cover() = %q; want the note on code only", grant.Cover())
	}
	otherBinary := graded(60, "make", "test")
	otherBinary.SHA256 = "ff"
	otherDir := grant
	otherDir.Dir = "sub"
	stdin := graded(60, "make", "test")
	stdin.SetStdin("x")
	mkdirGraded := graded(60, "mkdir", "build")
	cases := []struct {
		name  string
		grant Template
		call  Template
		want  bool
	}{
		{"the same command, graded", grant, graded(60, "make", "test"), true},
		{"a shorter timeout", grant, graded(30, "make", "test"), true},
		{"the same command, ungraded", grant, ungraded, false},
		{"a longer timeout", grant, graded(120, "make", "test"), false},
		{"another target", grant, graded(60, "make", "install"), false},
		{"an added option", grant, graded(60, "make", "-f", "evil.mk", "test"), false},
		{"another binary", grant, otherBinary, false},
		{"another folder", grant, otherDir, false},
		{"with stdin", grant, stdin, false},
		{"a command that does not run code", grant, mkdirGraded, false},
		// A write grant made graded does not cover the write run ungraded;
		// one made ungraded still covers it graded (narrower).
		{"graded mkdir grant, ungraded call", mkdirGraded, tmpl(".", 60, "", "mkdir", "src"), false},
		{"ungraded mkdir grant, graded call", tmpl(".", 60, "", "mkdir", "build"), graded(60, "mkdir", "src"), true},
		{"graded mkdir grant, graded call", mkdirGraded, graded(60, "mkdir", "src"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.grant.Covers(c.call, insideAll); got != c.want {
				t.Errorf("grant %s covers %s = %v; want %v", c.grant, c.call, got, c.want)
			}
		})
	}
}

func TestTemplateString(t *testing.T) {
	cases := []struct {
		argv []string
		want string
	}{
		{argv("mkdir", "-p", "build/x"), "mkdir -p ‹new name in build/›"},
		{argv("mkdir", "build"), "mkdir ‹new name in ./›"},
		{argv("mkdir", "--mode=755", "/abs"), "mkdir -m 755 /abs"},
		{argv("git", "commit", "-m", "fix: a b"), `git commit -m "fix: a b"`},
		{argv("git", "log", "-5"), "git log -5"},
		{argv("cp", "a", "b/c"), "cp ‹path in ./› ‹new name in b/›"},
		{argv("touch", "--", "a\x1b[2J"), `touch -- "a\x1b[2J"`},
		{argv("rm", "../x"), "rm ../x"},
	}
	for _, c := range cases {
		got := tmpl(".", 60, "", c.argv[0], c.argv[1:]...).String()
		if got != c.want {
			t.Errorf("template of %q = %q; want %q", c.argv, got, c.want)
		}
	}
	if got := tmpl(".", 60, "in", "sort").String(); got != "sort ‹with the same stdin›" {
		t.Errorf("template with stdin = %q", got)
	}
}

// TestTemplateFindExecIsExact: find -exec's command is part of the
// template, shown on the card and compared word by word: a grant of one
// command never covers another, nor the same words split differently.
func TestTemplateFindExecIsExact(t *testing.T) {
	grant := tmpl(".", 60, "", "find", ".", "-exec", "touch", "a b", ";")
	grant.Graded = true
	if s := grant.String(); s != `find . -exec touch "a b" ;` {
		t.Errorf("String() = %q; want the -exec command shown", s)
	}
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{".", "-exec", "touch", "a b", ";"}, true},
		{[]string{".", "-exec", "touch", "a", "b", ";"}, false},
		{[]string{".", "-exec", "rm", "a b", ";"}, false},
	} {
		call := tmpl(".", 60, "", "find", c.args...)
		call.Graded = true
		if got := grant.Covers(call, insideAll); got != c.want {
			t.Errorf("grant %s covers find %q = %v; want %v", grant, c.args, got, c.want)
		}
	}
}
