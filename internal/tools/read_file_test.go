package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/workspace"
)

func TestReadFile(t *testing.T) {
	e := newEnv(t)
	writeFile(t, e.root, "notes.txt", "alpha\nbeta\ngamma\n")
	plan := e.mustPrepare(t, "read_file", `{"path":"notes.txt"}`)
	if plan.Action() != policy.ActionRead || plan.Risk() != policy.RiskLow || !plan.ReadOnly() {
		t.Errorf("plan = %s/%s read-only %v; want read/low read-only", plan.Action(), plan.Risk(), plan.ReadOnly())
	}
	if got := plan.Targets(); !slices.Equal(got, []string{"notes.txt"}) {
		t.Errorf("targets = %v; want [notes.txt]", got)
	}
	res := e.run(t, plan)
	want := "     1\talpha\n     2\tbeta\n     3\tgamma\n"
	if res.IsError || res.Text != want || !res.Untrusted {
		t.Errorf("read_file = %+v; want untrusted %q", res, want)
	}
	res = e.call(t, "read_file", `{"path":"notes.txt","offset":2,"limit":1}`)
	if !strings.HasPrefix(res.Text, "     2\tbeta\n") || !strings.Contains(res.Text, "offset=3") {
		t.Errorf("read_file offset 2 limit 1 = %q; want line 2 and a hint to read on at offset=3", res.Text)
	}
	res = e.call(t, "read_file", `{"path":"notes.txt","offset":9}`)
	if !res.IsError || !strings.Contains(res.Text, "past the end") {
		t.Errorf("read_file offset 9 = %+v; want a past-the-end error", res)
	}
	// Another root, addressed by its absolute path.
	writeFile(t, e.docs, "g.md", "guide")
	plan = e.mustPrepare(t, "read_file", fmt.Sprintf(`{"path":%q}`, e.docs+"/g.md"))
	if got := plan.Targets(); !slices.Equal(got, []string{"docs:g.md"}) {
		t.Errorf("targets = %v; want [docs:g.md]", got)
	}
	if res := e.run(t, plan); res.Text != "     1\tguide\n" {
		t.Errorf("read docs:g.md = %q", res.Text)
	}
}

func TestReadFileCaps(t *testing.T) {
	e := newEnv(t)
	var b strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	writeFile(t, e.root, "long.txt", b.String())
	res := e.call(t, "read_file", `{"path":"long.txt","limit":5000}`)
	if n := strings.Count(res.Text, "\n"); n != readMaxLines+1 {
		t.Errorf("read of 2500 lines returned %d lines; want %d + a note", n, readMaxLines)
	}
	if !strings.Contains(res.Text, "showing lines 1-2000 of 2500") || !strings.Contains(res.Text, "offset=2001") {
		t.Errorf("note = %q; want lines 1-2000 of 2500 and offset=2001", res.Text[len(res.Text)-100:])
	}
	// 256 KiB cap: 200 lines of ~1.9 KiB each are ~380 KiB.
	writeFile(t, e.root, "wide.txt", strings.Repeat(strings.Repeat("x", 1900)+"\n", 200))
	res = e.call(t, "read_file", `{"path":"wide.txt"}`)
	if len(res.Text) > readMaxBytes+200 || !strings.Contains(res.Text, "call read_file with offset=") {
		t.Errorf("wide read = %d bytes; want at most ~%d with a note how to read on", len(res.Text), readMaxBytes)
	}
	// One very long line is cut.
	writeFile(t, e.root, "oneline.txt", strings.Repeat("y", 10000))
	res = e.call(t, "read_file", `{"path":"oneline.txt"}`)
	if len(res.Text) > readMaxLineSize+100 || !strings.Contains(res.Text, "line truncated") {
		t.Errorf("long line read = %d bytes; want it cut near %d", len(res.Text), readMaxLineSize)
	}
}

func TestReadFileErrors(t *testing.T) {
	e := newEnv(t, func(o *workspace.Options) { o.MaxFileBytes = 1 << 10 })
	writeFile(t, e.root, "bin.dat", "abc\x00def")
	writeFile(t, e.root, "latin1.txt", "caf\xe9")
	writeFile(t, e.root, "big.txt", strings.Repeat("z", 2<<10))
	os.Mkdir(filepath.Join(e.root, "dir"), 0o755)
	for _, tt := range []struct{ raw, want string }{
		{`{"path":"bin.dat"}`, "binary"},
		{`{"path":"latin1.txt"}`, "binary"},
		{`{"path":"missing.txt"}`, "does not exist"},
		{`{"path":"dir"}`, "not a regular file"},
		{`{"path":"big.txt"}`, "too large"},
	} {
		res := e.call(t, "read_file", tt.raw)
		if !res.IsError || !strings.Contains(res.Text, tt.want) {
			t.Errorf("read_file %s = %+v; want an error result containing %q", tt.raw, res, tt.want)
		}
	}
}

func TestReadFileHostile(t *testing.T) {
	e := newEnv(t)
	writeFile(t, e.root, "notes.txt", "ok")
	writeFile(t, e.outside, "secret.txt", "TOPSECRET")
	symlink(t, "/etc", filepath.Join(e.root, "etc"))
	symlink(t, "../outside/secret.txt", filepath.Join(e.root, "leak"))
	for _, raw := range []string{
		`{"path":"notes.txt","PATH":"/etc/passwd"}`,
		`{"path":"notes.txt","path":"/etc/passwd"}`,
		`{"Path":"/etc/passwd"}`,
		`{"path":"notes.txt","extra":1}`,
		`{"path":7}`,
		`{}`,
	} {
		e.wantDecodeError(t, "read_file", raw)
	}
	for _, raw := range []string{
		`{"path":"../../etc/passwd"}`,
		`{"path":"%2e%2e/etc/passwd"}`,
		`{"path":"/etc/passwd"}`,
		`{"path":"etc/passwd"}`,
		`{"path":"leak"}`,
		`{"path":"sub/../notes.txt"}`,
		`{"path":""}`,
		`{"path":"a\u0000b"}`,
	} {
		e.wantRefusal(t, "read_file", raw, "limit.workspace")
	}
}

// A symlink swapped in after Prepare, before Run, is refused at run time
// and the outside content never reaches the result.
func TestReadFileSwapAfterPrepare(t *testing.T) {
	e := newEnv(t)
	secret := writeFile(t, e.outside, "secret.txt", "TOPSECRET")
	writeFile(t, e.root, "notes.txt", "ok")
	writeFile(t, e.root, "dir/a.txt", "ok")
	plans := []string{`{"path":"notes.txt"}`, `{"path":"dir/a.txt"}`}
	var prepared []tool.Plan
	for _, raw := range plans {
		prepared = append(prepared, e.mustPrepare(t, "read_file", raw))
	}
	os.Remove(filepath.Join(e.root, "notes.txt"))
	symlink(t, secret, filepath.Join(e.root, "notes.txt"))
	os.RemoveAll(filepath.Join(e.root, "dir"))
	symlink(t, "../outside", filepath.Join(e.root, "dir"))
	writeFile(t, e.outside, "a.txt", "TOPSECRET")
	for i, p := range prepared {
		res := e.run(t, p)
		if !res.IsError || strings.Contains(res.Text, "TOPSECRET") || !strings.Contains(res.Text, "refused") {
			t.Errorf("read_file %s after swap = %+v; want a refusal without the secret", plans[i], res)
		}
	}
}

// TestTextToolsRefuseBinary: read_file and edit_file read a file the same
// way (readText): a binary file is an error saying what the tool does with
// text, a missing one says how to find the path.
func TestTextToolsRefuseBinary(t *testing.T) {
	e := newEnv(t)
	writeFile(t, e.root, "bin.dat", "a\x00b")
	for _, c := range []struct{ tool, args, want string }{
		{"read_file", `{"path":"bin.dat"}`, "bin.dat looks like a binary file (it has NUL bytes or invalid UTF-8); read_file only reads text"},
		{"edit_file", `{"path":"bin.dat","old_text":"a","new_text":"c"}`, "bin.dat looks like a binary file (it has NUL bytes or invalid UTF-8); edit_file only edits text"},
		{"read_file", `{"path":"gone.txt"}`, "gone.txt does not exist; check the path with list_dir or glob"},
	} {
		if res := e.call(t, c.tool, c.args); !res.IsError || res.Text != c.want {
			t.Errorf("%s %s = %+v; want the error %q", c.tool, c.args, res, c.want)
		}
	}
}
