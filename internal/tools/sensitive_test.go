package tools

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/policy"
)

const envCanary = "TOKEN=envCANARY"

// TestSensitiveFileTools: every file tool refuses a sensitive file
// (limit.sensitive) whether named directly, through a symlink or through a
// symlinked folder; list_dir and glob show such names marked; grep skips
// them and says so. Twin: the ordinary file next to .env works with every
// tool.
func TestSensitiveFileTools(t *testing.T) {
	e := newEnv(t)
	writeFile(t, e.root, ".env", envCanary+"\n")
	writeFile(t, e.root, "app/.ssh/id_ed25519", envCanary+"\n")
	writeFile(t, e.root, "notes.txt", "ordinary TOKEN notes\n")
	if err := os.Symlink(".env", filepath.Join(e.root, "readme.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("app/.ssh", filepath.Join(e.root, "keys")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tool, args string }{
		{"read_file", `{"path":".env"}`},
		{"read_file", `{"path":".Env"}`},
		{"read_file", `{"path":"readme.txt"}`},
		{"read_file", `{"path":"keys/id_ed25519"}`},
		{"list_dir", `{"path":"app/.ssh"}`},
		{"list_dir", `{"path":"keys"}`},
		{"grep", `{"pattern":"TOKEN","path":".env"}`},
		{"grep", `{"pattern":"TOKEN","path":"keys"}`},
		{"write_file", `{"path":".env","content":"x"}`},
		{"write_file", `{"path":".env.local","content":"x"}`},
		{"write_file", `{"path":"keys/new","content":"x"}`},
		{"edit_file", `{"path":".env","old_text":"TOKEN","new_text":"x"}`},
		{"glob", `{"pattern":"keys/*"}`},
	} {
		e.wantRefusal(t, c.tool, c.args, "limit.sensitive")
	}
	if got := readFile(t, filepath.Join(e.root, ".env")); got != envCanary+"\n" {
		t.Errorf(".env = %q after refused writes", got)
	}

	res := e.call(t, "list_dir", `{"path":"."}`)
	for _, want := range []string{".env  (sensitive", "readme.txt@  (sensitive", "keys@  (sensitive", "notes.txt\n", "app/\n"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("list_dir . = %q; want a line %q", res.Text, want)
		}
	}
	res = e.call(t, "glob", `{"pattern":"**"}`)
	for _, want := range []string{".env  (sensitive", "app/.ssh/  (sensitive", "notes.txt\n"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("glob ** = %q; want a line %q", res.Text, want)
		}
	}
	res = e.call(t, "grep", `{"pattern":"TOKEN"}`)
	if res.IsError || strings.Contains(res.Text, "CANARY") || !strings.Contains(res.Text, "notes.txt:1:") ||
		!strings.Contains(res.Text, "[not searched: 2 files or folders that hold credentials") {
		t.Errorf("grep TOKEN = %+v; want notes.txt only and a note on the 2 sensitive entries (.env, app/.ssh)", res)
	}

	// Twin: the ordinary file next to .env.
	if res := e.call(t, "read_file", `{"path":"notes.txt"}`); res.IsError || !strings.Contains(res.Text, "ordinary") {
		t.Errorf("read_file notes.txt = %+v", res)
	}
	if res := e.call(t, "edit_file", `{"path":"notes.txt","old_text":"ordinary","new_text":"plain"}`); res.IsError {
		t.Errorf("edit_file notes.txt = %+v", res)
	}
	if res := e.call(t, "write_file", `{"path":"app/notes.md","content":"beside .ssh"}`); res.IsError {
		t.Errorf("write_file app/notes.md = %+v", res)
	}
}

// TestTargetsAreRealPaths: a Plan's targets name where a path really
// leads, so a deny rule on secrets/** catches a symlink into secrets/, and
// a grant for notes/** does not cover a symlink in notes/ leading out of
// it. Twins: a real file in notes/ is covered by the grant and not denied.
func TestTargetsAreRealPaths(t *testing.T) {
	e := newEnv(t)
	writeFile(t, e.root, "notes/a.md", "a\n")
	writeFile(t, e.root, "secrets/pw.txt", "hunter2\n")
	writeFile(t, e.root, "other/file.txt", "other\n")
	for link, target := range map[string]string{
		"notes/pw":     "../secrets/pw.txt",
		"notes/vault":  "../secrets",
		"notes/linked": "../other/file.txt",
	} {
		if err := os.Symlink(target, filepath.Join(e.root, link)); err != nil {
			t.Fatal(err)
		}
	}
	deny := policy.Rule{ID: "no-secrets", Tool: "read_file", Path: "secrets/**", Effect: policy.Deny}
	grant := approval.Grant{Tool: "read_file", Patterns: approval.Patterns([]string{"notes/a.md"})}
	for _, c := range []struct {
		path        string
		wantTargets []string
		denied      bool
		granted     bool
	}{
		{"notes/a.md", []string{"notes/a.md"}, false, true},
		{"notes/pw", []string{"notes/pw", "secrets/pw.txt"}, true, false},
		{"notes/vault/pw.txt", []string{"notes/vault/pw.txt", "secrets/pw.txt"}, true, false},
		{"notes/linked", []string{"notes/linked", "other/file.txt"}, false, false},
	} {
		plan := e.mustPrepare(t, "read_file", `{"path":"`+c.path+`"}`)
		got := plan.Targets()
		if !slices.Equal(got, c.wantTargets) {
			t.Errorf("read_file %s: Targets = %q; want %q", c.path, got, c.wantTargets)
		}
		if d := deny.Matches("read_file", got); d != c.denied {
			t.Errorf("read_file %s: deny secrets/** matches = %v; want %v", c.path, d, c.denied)
		}
		if g := grant.Covers(got); g != c.granted {
			t.Errorf("read_file %s: grant %q covers = %v; want %v", c.path, grant.Patterns, g, c.granted)
		}
	}
	// Run reads where the plan said: the real file.
	if res := e.call(t, "read_file", `{"path":"notes/linked"}`); res.IsError || !strings.Contains(res.Text, "other") {
		t.Errorf("read_file notes/linked = %+v", res)
	}
	// A write through a symlinked folder names the real location too.
	plan := e.mustPrepare(t, "write_file", `{"path":"notes/vault/new.txt","content":"x"}`)
	if got := plan.Targets(); !slices.Equal(got, []string{"notes/vault/new.txt", "secrets/new.txt"}) {
		t.Errorf("write_file notes/vault/new.txt: Targets = %q", got)
	}
	if !strings.Contains(plan.Display(), "(→ secrets/new.txt)") {
		t.Errorf("write_file display %q does not show where the path leads", plan.Display())
	}
}
