package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListDir(t *testing.T) {
	e := newEnv(t)
	writeFile(t, e.root, "b.txt", "")
	writeFile(t, e.root, "a/x.txt", "")
	symlink(t, "a", filepath.Join(e.root, "c"))
	writeFile(t, e.root, "bad\nname", "")
	plan := e.mustPrepare(t, "list_dir", `{}`)
	if got := plan.Targets(); len(got) != 1 || got[0] != "." {
		t.Errorf("targets = %v; want [.]", got)
	}
	res := e.run(t, plan)
	want := ".: 4 entries (directories end in /, symlinks in @)\na/\nb.txt\n\"bad\\nname\"\nc@\n"
	if res.IsError || res.Text != want || !res.Untrusted {
		t.Errorf("list_dir = %+v; want untrusted %q", res, want)
	}
	if res := e.call(t, "list_dir", `{"path":"a"}`); !strings.Contains(res.Text, "\nx.txt\n") {
		t.Errorf("list_dir a = %q; want x.txt", res.Text)
	}
	if res := e.call(t, "list_dir", `{"path":"b.txt"}`); !res.IsError || !strings.Contains(res.Text, "not a directory") {
		t.Errorf("list_dir b.txt = %+v; want a not-a-directory error", res)
	}
	if res := e.call(t, "list_dir", `{"path":"nope"}`); !res.IsError || !strings.Contains(res.Text, "does not exist") {
		t.Errorf("list_dir nope = %+v; want a does-not-exist error", res)
	}
	e.wantRefusal(t, "list_dir", `{"path":"/etc"}`, "limit.workspace")
	e.wantRefusal(t, "list_dir", `{"path":".."}`, "limit.workspace")
	e.wantDecodeError(t, "list_dir", `{"path":".","Path":"/etc"}`)
}

func TestListDirCap(t *testing.T) {
	e := newEnv(t)
	for i := range listMaxEntries + 5 {
		writeFile(t, e.root, fmt.Sprintf("many/f%04d", i), "")
	}
	res := e.call(t, "list_dir", `{"path":"many"}`)
	lines := strings.Split(strings.TrimSuffix(res.Text, "\n"), "\n")
	if len(lines) != listMaxEntries+2 || !strings.Contains(lines[len(lines)-1], "5 more entries") {
		t.Errorf("list of %d entries gave %d lines ending %q; want %d entries, a header and a note",
			listMaxEntries+5, len(lines), lines[len(lines)-1], listMaxEntries)
	}
}

func TestListDirSwapAfterPrepare(t *testing.T) {
	e := newEnv(t)
	os.Mkdir(filepath.Join(e.root, "d"), 0o755)
	writeFile(t, e.outside, "private-name", "")
	plan := e.mustPrepare(t, "list_dir", `{"path":"d"}`)
	os.Remove(filepath.Join(e.root, "d"))
	symlink(t, "../outside", filepath.Join(e.root, "d"))
	if res := e.run(t, plan); !res.IsError || strings.Contains(res.Text, "private-name") {
		t.Errorf("list_dir after swap = %+v; want a refusal without outside names", res)
	}
}
