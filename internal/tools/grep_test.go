package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/workspace"
)

func TestGrep(t *testing.T) {
	e := newEnv(t, func(o *workspace.Options) { o.MaxFileBytes = 4 << 10 })
	writeFile(t, e.root, "a.txt", "hello world\nbye\nHello again\n")
	writeFile(t, e.root, "sub/b.md", "nothing\nsay hello\n")
	writeFile(t, e.root, "bin.dat", "hello\x00")
	writeFile(t, e.root, "big.txt", "hello\n"+strings.Repeat("x", 5<<10))
	writeFile(t, e.root, ".git/config", "hello = git\n")
	writeFile(t, e.outside, "secret.txt", "hello secret\n")
	symlink(t, e.outside+"/secret.txt", filepath.Join(e.root, "leak.txt"))
	symlink(t, "a.txt", filepath.Join(e.root, "alias.txt"))

	res := e.call(t, "grep", `{"pattern":"hello"}`)
	want := "a.txt:1:hello world\nsub/b.md:2:say hello\n[skipped 2 files: binary, over the size limit or unreadable]\n"
	if res.IsError || res.Text != want || !res.Untrusted {
		t.Errorf("grep hello = %+v; want untrusted %q", res, want)
	}
	res = e.call(t, "grep", `{"pattern":"(?i)^hello","path":"a.txt"}`)
	if res.Text != "a.txt:1:hello world\na.txt:3:Hello again\n" {
		t.Errorf("grep (?i)^hello in a.txt = %q", res.Text)
	}
	res = e.call(t, "grep", `{"pattern":"zzz","path":"sub"}`)
	if res.IsError || !strings.Contains(res.Text, "no matches") {
		t.Errorf("grep zzz = %+v; want no matches", res)
	}
	res = e.call(t, "grep", `{"pattern":"x","path":"missing"}`)
	if !res.IsError || !strings.Contains(res.Text, "does not exist") {
		t.Errorf("grep in missing = %+v; want a does-not-exist error", res)
	}
}

func TestGrepRefusals(t *testing.T) {
	e := newEnv(t)
	e.wantRefusal(t, "grep", `{"pattern":"(?<=a)b"}`, "args.invalid")
	e.wantRefusal(t, "grep", `{"pattern":"a(","path":"."}`, "args.invalid")
	e.wantRefusal(t, "grep", `{"pattern":"root","path":"/etc"}`, "limit.workspace")
	e.wantRefusal(t, "grep", `{"pattern":"root","path":"../../etc/passwd"}`, "limit.workspace")
	e.wantDecodeError(t, "grep", `{"pattern":"a","Pattern":"b"}`)
}

func TestGrepCaps(t *testing.T) {
	e := newEnv(t)
	writeFile(t, e.root, "many.txt", strings.Repeat("match\n", grepMaxMatches+10))
	res := e.call(t, "grep", `{"pattern":"match"}`)
	if n := strings.Count(res.Text, ":match\n"); n != grepMaxMatches || !strings.Contains(res.Text, "stopped at 500 matches") {
		t.Errorf("grep of %d matching lines returned %d; want %d and a note", grepMaxMatches+10, n, grepMaxMatches)
	}
	long := strings.Repeat("m", 400)
	writeFile(t, e.root, "wide/w.txt", strings.Repeat(long+"\n", 300))
	res = e.call(t, "grep", `{"pattern":"m","path":"wide"}`)
	if len(res.Text) > grepMaxBytes+200 || !strings.Contains(res.Text, "stopped at") {
		t.Errorf("grep output = %d bytes; want at most ~%d with a note", len(res.Text), grepMaxBytes)
	}
	writeFile(t, e.root, "line/l.txt", strings.Repeat("n", 5000)+"\n")
	res = e.call(t, "grep", `{"pattern":"n","path":"line"}`)
	if len(res.Text) > grepMaxLineSize+100 || !strings.Contains(res.Text, "line truncated") {
		t.Errorf("grep of a long line = %d bytes; want it cut near %d", len(res.Text), grepMaxLineSize)
	}
}

func TestGrepSwapAfterPrepare(t *testing.T) {
	e := newEnv(t)
	writeFile(t, e.root, "d/a.txt", "fine\n")
	writeFile(t, e.outside, "s.txt", "password=hunter2\n")
	plan := e.mustPrepare(t, "grep", fmt.Sprintf(`{"pattern":"password","path":%q}`, "d"))
	os.RemoveAll(filepath.Join(e.root, "d"))
	symlink(t, "../outside", filepath.Join(e.root, "d"))
	if res := e.run(t, plan); !res.IsError || strings.Contains(res.Text, "hunter2") {
		t.Errorf("grep after swap = %+v; want a refusal without outside content", res)
	}
}
