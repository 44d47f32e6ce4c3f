package tools

import (
	"github.com/homard/homard/internal/policy"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEditFile(t *testing.T) {
	e := newEnv(t)
	p := writeFile(t, e.root, "main.go", "package main\n\nfunc a() {}\n\nfunc b() {}\n")
	plan := e.mustPrepare(t, "edit_file", `{"path":"main.go","old_text":"func b() {}","new_text":"func b() { a() }"}`)
	if !strings.Contains(plan.Display(), "func b() { a() }") {
		t.Errorf("display %q; want the new text shown", plan.Display())
	}
	res := e.run(t, plan)
	if res.IsError || !strings.Contains(res.Text, "line 5") || !strings.Contains(res.Text, "checkpoint") {
		t.Errorf("edit_file = %+v; want success at line 5 naming the checkpoint", res)
	}
	if got := readFile(t, p); got != "package main\n\nfunc a() {}\n\nfunc b() { a() }\n" {
		t.Errorf("content = %q", got)
	}
	// Deleting text.
	if res := e.call(t, "edit_file", `{"path":"main.go","old_text":"\nfunc a() {}\n","new_text":""}`); res.IsError {
		t.Errorf("delete = %+v", res)
	}
	if got := readFile(t, p); got != "package main\n\nfunc b() { a() }\n" {
		t.Errorf("content after delete = %q", got)
	}
}

func TestEditFileFailures(t *testing.T) {
	e := newEnv(t)
	p := writeFile(t, e.root, "f.txt", "x = 1\nx = 1\naaa\n")
	writeFile(t, e.root, "bin", "\x00\x01")
	for _, tt := range []struct{ raw, want string }{
		{`{"path":"f.txt","old_text":"y = 2","new_text":"y = 3"}`, "not found"},
		{`{"path":"f.txt","old_text":"x = 1","new_text":"x = 2"}`, "found 2 times"},
		{`{"path":"f.txt","old_text":"aa","new_text":"b"}`, "found 2 times"}, // overlapping
		{`{"path":"f.txt","old_text":"","new_text":"b"}`, "old_text is empty"},
		{`{"path":"f.txt","old_text":"aaa","new_text":"aaa"}`, "the same"},
		{`{"path":"missing.txt","old_text":"a","new_text":"b"}`, "does not exist"},
		{`{"path":"bin","old_text":"a","new_text":"b"}`, "binary"},
	} {
		res := e.call(t, "edit_file", tt.raw)
		if !res.IsError || !strings.Contains(res.Text, tt.want) {
			t.Errorf("edit_file %s = %+v; want an error result containing %q", tt.raw, res, tt.want)
		}
	}
	if got := readFile(t, p); got != "x = 1\nx = 1\naaa\n" {
		t.Errorf("content after failed edits = %q; want unchanged", got)
	}
	e.wantRefusal(t, "edit_file", `{"path":"../../etc/passwd","old_text":"root","new_text":"toor"}`, "limit.workspace")
	if plan := e.mustPrepare(t, "edit_file", `{"path":".git/config","old_text":"a","new_text":"b"}`); plan.Risk() != policy.RiskCritical {
		t.Errorf("edit_file .git/config: risk %s; want critical (the gate holds repository metadata)", plan.Risk())
	}
	e.wantDecodeError(t, "edit_file", `{"path":"f.txt","old_text":"a","new_text":"b","Old_Text":"c"}`)
}

func TestEditFileSwapAfterPrepare(t *testing.T) {
	e := newEnv(t)
	secret := writeFile(t, e.outside, "conf", "key = secret")
	writeFile(t, e.root, "conf", "key = mine")
	plan := e.mustPrepare(t, "edit_file", `{"path":"conf","old_text":"key","new_text":"KEY"}`)
	os.Remove(filepath.Join(e.root, "conf"))
	symlink(t, secret, filepath.Join(e.root, "conf"))
	res := e.run(t, plan)
	if !res.IsError || strings.Contains(res.Text, "secret") {
		t.Errorf("edit after swap = %+v; want a refusal that leaks nothing", res)
	}
	if got := readFile(t, secret); got != "key = secret" {
		t.Errorf("outside file = %q; want unchanged", got)
	}
}
