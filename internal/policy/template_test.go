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

func TestTemplateRunsCodeNeverCovers(t *testing.T) {
	for _, a := range [][]string{{"go", "test", "./..."}, {"python3", "x.py"}, {"gcc", "x.c"}, {"git", "commit"}} {
		g := tmpl(".", 60, "", a[0], a[1:]...)
		if g.Grantable() || g.Covers(g, insideAll) {
			t.Errorf("template of %q (runs code) is grantable or covers itself", a)
		}
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
