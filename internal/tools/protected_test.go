package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/workspace"
)

// newProtectedEnv is an env whose default root holds homard's home, as when
// an owner makes ~ the workspace: the config file and the data directory
// (database, vault key, checkpoints) lie inside it, with a symlink to the
// data directory beside them. Every protected file holds "SECRET".
func newProtectedEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t, func(o *workspace.Options) {
		home := filepath.Join(o.Roots[0].Path, "homard")
		o.Protected = []string{filepath.Join(home, "config.toml"), filepath.Join(home, "data")}
		o.CheckpointDir = filepath.Join(home, "data", "checkpoints")
	})
	writeFile(t, e.root, "homard/config.toml", "SECRET = true\n")
	writeFile(t, e.root, "homard/data/homard.db", "SECRET database\n")
	writeFile(t, e.root, "homard/data/vault.key", "SECRET key\n")
	writeFile(t, e.root, "homard/notes.md", "visible notes\n")
	writeFile(t, e.root, "src/main.go", "package main // visible\n")
	symlink(t, "homard/data", filepath.Join(e.root, "datalink"))
	symlink(t, "../homard/config.toml", filepath.Join(e.root, "src", "cfg"))
	return e
}

func TestProtectedRefusedAtPrepare(t *testing.T) {
	e := newProtectedEnv(t)
	for _, p := range []string{
		"homard/config.toml", "homard/data", "homard/data/vault.key", "homard/data/missing",
		"homard/data/checkpoints", "datalink", "datalink/homard.db", "src/cfg",
		filepath.Join(e.root, "homard", "data", "homard.db"),
	} {
		e.wantRefusal(t, "read_file", fmt.Sprintf(`{"path":%q}`, p), "limit.protected")
		e.wantRefusal(t, "list_dir", fmt.Sprintf(`{"path":%q}`, p), "limit.protected")
		e.wantRefusal(t, "grep", fmt.Sprintf(`{"pattern":"SECRET","path":%q}`, p), "limit.protected")
	}
	for _, pattern := range []string{"homard/data/*", "homard/data/**", "datalink/*", "homard/config.toml", "datalink"} {
		e.wantRefusal(t, "glob", fmt.Sprintf(`{"pattern":%q}`, pattern), "limit.protected")
	}
	// The refusal says why.
	_, err := e.prepare(t, "read_file", `{"path":"datalink/vault.key"}`)
	if err == nil || !strings.Contains(err.Error(), "homard's own data; tools may not read it") {
		t.Errorf("read_file datalink/vault.key: prepare = %v; want a refusal naming homard's own data", err)
	}
}

func TestProtectedInvisibleToReads(t *testing.T) {
	e := newProtectedEnv(t)
	noSecrets := func(what, text string) {
		t.Helper()
		for _, leak := range []string{"SECRET", "config.toml", "data", "vault", "homard.db", "checkpoints"} {
			if strings.Contains(text, leak) {
				t.Errorf("%s reveals %q:\n%s", what, leak, text)
			}
		}
	}

	res := e.call(t, "list_dir", `{"path":"homard"}`)
	if res.IsError || res.Text != "homard: 1 entry (directories end in /, symlinks in @)\nnotes.md\n" {
		t.Errorf("list_dir homard = %+v; want only notes.md", res)
	}
	noSecrets("list_dir homard", strings.ReplaceAll(res.Text, "datalink", ""))

	res = e.call(t, "glob", `{"pattern":"**"}`)
	if res.IsError || res.Text != "datalink\nhomard/\nhomard/notes.md\nsrc/\nsrc/cfg\nsrc/main.go\n" {
		t.Errorf("glob ** = %+v; want the tree without homard's files", res)
	}
	noSecrets("glob **", strings.ReplaceAll(res.Text, "datalink", ""))
	res = e.call(t, "glob", `{"pattern":"homard/*"}`)
	if res.IsError || res.Text != "homard/notes.md\n" {
		t.Errorf("glob homard/* = %+v; want only homard/notes.md", res)
	}

	for _, path := range []string{".", "homard"} {
		res = e.call(t, "grep", fmt.Sprintf(`{"pattern":"SECRET|visible","path":%q}`, path))
		if res.IsError || strings.Contains(res.Text, "skipped") {
			t.Errorf("grep in %s = %+v; want matches and nothing skipped", path, res)
		}
		noSecrets("grep in "+path, res.Text)
	}
	res = e.call(t, "grep", `{"pattern":"SECRET"}`)
	if res.IsError || res.Text != "no matches for /SECRET/ in .\n" {
		t.Errorf("grep SECRET = %+v; want no matches", res)
	}

	// Everything else in the root still reads.
	res = e.call(t, "read_file", `{"path":"homard/notes.md"}`)
	if res.IsError || !strings.Contains(res.Text, "visible notes") {
		t.Errorf("read_file homard/notes.md = %+v", res)
	}
	res = e.call(t, "grep", `{"pattern":"visible","path":"src/main.go"}`)
	if res.IsError || res.Text != "src/main.go:1:package main // visible\n" {
		t.Errorf("grep in src/main.go = %+v", res)
	}
}

// A plan prepared while the path was harmless, run after its directory
// became a symlink to the data directory: Run refuses it on the opened
// file's real location.
func TestProtectedSwapAfterPrepare(t *testing.T) {
	e := newProtectedEnv(t)
	writeFile(t, e.root, "d/homard.db", "harmless\n")
	plans := []struct{ tool, args string }{
		{"read_file", `{"path":"d/homard.db"}`},
		{"list_dir", `{"path":"d"}`},
		{"grep", `{"pattern":"SECRET","path":"d"}`},
		{"grep", `{"pattern":"SECRET","path":"d/homard.db"}`},
		{"glob", `{"pattern":"d/*"}`},
	}
	var ready []func() (string, string)
	for _, p := range plans {
		plan := e.mustPrepare(t, p.tool, p.args)
		ready = append(ready, func() (string, string) {
			res := e.run(t, plan)
			return p.tool + " " + p.args, fmt.Sprintf("error=%v %s", res.IsError, res.Text)
		})
	}
	os.RemoveAll(filepath.Join(e.root, "d"))
	symlink(t, "homard/data", filepath.Join(e.root, "d"))
	for _, run := range ready {
		name, out := run()
		if !strings.HasPrefix(out, "error=true refused:") || !strings.Contains(out, "path is protected") || strings.Contains(out, "SECRET ") {
			t.Errorf("%s after swap = %s; want a protected refusal and no content", name, out)
		}
	}
}

// A root holding none of homard's files reads as before, in the same
// workspace as one that does.
func TestProtectedOtherRootUnaffected(t *testing.T) {
	e := newProtectedEnv(t)
	writeFile(t, e.docs, "guide/data.md", "data here\n")
	for tool, args := range map[string]string{
		"read_file": fmt.Sprintf(`{"path":%q}`, e.docs+"/guide/data.md"),
		"list_dir":  fmt.Sprintf(`{"path":%q}`, e.docs+"/guide"),
		"glob":      fmt.Sprintf(`{"pattern":%q}`, e.docs+"/**"),
		"grep":      fmt.Sprintf(`{"pattern":"data","path":%q}`, e.docs),
	} {
		res := e.call(t, tool, args)
		if res.IsError || !strings.Contains(res.Text, "data") {
			t.Errorf("%s %s = %+v; want data.md shown", tool, args, res)
		}
	}
}
