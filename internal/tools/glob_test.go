package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	e := newEnv(t)
	for _, f := range []string{"main.go", "a/b.go", "a/c/d.go", "a/c/readme.md", ".git/hooks/x.go", "vendor/v.go"} {
		writeFile(t, e.root, f, "")
	}
	symlink(t, "a", filepath.Join(e.root, "alias"))     // in-root symlinked dir: not followed
	symlink(t, e.outside, filepath.Join(e.root, "out")) // outside: not followed either
	writeFile(t, e.outside, "o.go", "")
	writeFile(t, e.docs, "g/h.md", "")
	tests := []struct{ pattern, want string }{
		{"**/*.go", "a/b.go a/c/d.go main.go vendor/v.go"},
		{"*.go", "main.go"},
		{"a/*", "a/b.go a/c/"},
		{"a/**", "a/b.go a/c/ a/c/d.go a/c/readme.md"},
		{"a/c/readme.md", "a/c/readme.md"},
		{"**/readme.md", "a/c/readme.md"},
		{".git/**/*.go", ".git/hooks/x.go"},
		{"al*", "alias"},
		{"*.rs", ""},
		{e.docs + "/**/*.md", e.docs + "/g/h.md"},
	}
	for _, tt := range tests {
		res := e.call(t, "glob", fmt.Sprintf(`{"pattern":%q}`, tt.pattern))
		var got []string
		for _, l := range strings.Split(strings.TrimSuffix(res.Text, "\n"), "\n") {
			if !strings.HasPrefix(l, "no paths match") {
				got = append(got, l)
			}
		}
		if res.IsError || !res.Untrusted || strings.Join(got, " ") != tt.want {
			t.Errorf("glob %q = %q (error %v); want %q", tt.pattern, strings.Join(got, " "), res.IsError, tt.want)
		}
	}
	plan := e.mustPrepare(t, "glob", `{"pattern":"a/c/*.md"}`)
	if got := plan.Targets(); len(got) != 1 || got[0] != "a/c" {
		t.Errorf("glob targets = %v; want [a/c]", got)
	}
}

func TestGlobRefusals(t *testing.T) {
	e := newEnv(t)
	symlink(t, e.outside, filepath.Join(e.root, "out"))
	for _, tt := range []struct{ pattern, rule string }{
		{"../*", "limit.workspace"},
		{"a/../../*", "limit.workspace"},
		{"/etc/*", "limit.workspace"},
		{"%2e%2e/*", "limit.workspace"},
		{"out/*", "limit.workspace"},
		{"", "limit.workspace"},
		{"a/[z-", "args.invalid"},
	} {
		e.wantRefusal(t, "glob", fmt.Sprintf(`{"pattern":%q}`, tt.pattern), tt.rule)
	}
}

func TestGlobCap(t *testing.T) {
	e := newEnv(t)
	for i := range globMaxResults + 3 {
		writeFile(t, e.root, fmt.Sprintf("d/f%04d.txt", i), "")
	}
	res := e.call(t, "glob", `{"pattern":"d/*.txt"}`)
	lines := strings.Split(strings.TrimSuffix(res.Text, "\n"), "\n")
	if len(lines) != globMaxResults+1 || !strings.Contains(lines[len(lines)-1], "stopped at 1000 results") {
		t.Errorf("glob of %d files gave %d lines; want %d and a note", globMaxResults+3, len(lines), globMaxResults)
	}
}

func TestGlobSwapAfterPrepare(t *testing.T) {
	e := newEnv(t)
	os.Mkdir(filepath.Join(e.root, "d"), 0o755)
	writeFile(t, e.outside, "private.go", "")
	plan := e.mustPrepare(t, "glob", `{"pattern":"d/**/*.go"}`)
	os.Remove(filepath.Join(e.root, "d"))
	symlink(t, "../outside", filepath.Join(e.root, "d"))
	if res := e.run(t, plan); !res.IsError || strings.Contains(res.Text, "private") {
		t.Errorf("glob after swap = %+v; want a refusal without outside names", res)
	}
}
