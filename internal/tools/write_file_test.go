package tools

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/workspace"
)

func TestWriteFile(t *testing.T) {
	e := newEnv(t)
	plan := e.mustPrepare(t, "write_file", `{"path":"notes/today.md","content":"hello"}`)
	if plan.Action() != policy.ActionWrite || plan.Risk() != policy.RiskMedium || plan.ReadOnly() {
		t.Errorf("plan = %s/%s read-only %v; want write/medium", plan.Action(), plan.Risk(), plan.ReadOnly())
	}
	if got := plan.Targets(); !slices.Equal(got, []string{"notes/today.md"}) {
		t.Errorf("targets = %v; want [notes/today.md]", got)
	}
	sum := fmt.Sprintf("%x", sha256.Sum256([]byte("hello")))[:12]
	for _, want := range []string{"notes/today.md", "5 bytes", sum, "creates a new file"} {
		if !strings.Contains(plan.Display(), want) {
			t.Errorf("display %q lacks %q", plan.Display(), want)
		}
	}
	if _, err := os.Stat(filepath.Join(e.root, "notes")); !os.IsNotExist(err) {
		t.Errorf("prepare created notes/ (%v); prepare must have no side effects", err)
	}
	res := e.run(t, plan)
	if res.IsError || readFile(t, filepath.Join(e.root, "notes", "today.md")) != "hello" {
		t.Fatalf("write_file = %+v; want hello written", res)
	}

	plan = e.mustPrepare(t, "write_file", `{"path":"notes/today.md","content":"bye"}`)
	if !strings.Contains(plan.Display(), "replaces the existing file (5 bytes") {
		t.Errorf("display %q; want it to say it replaces 5 bytes", plan.Display())
	}
	res = e.run(t, plan)
	cps, _ := e.ws.Checkpoints()
	if res.IsError || len(cps) != 2 || !strings.Contains(res.Text, cps[0].ID) {
		t.Errorf("replace = %+v, checkpoints %+v; want the result to name the checkpoint", res, cps)
	}
	if got := readFile(t, filepath.Join(e.root, "notes", "today.md")); got != "bye" {
		t.Errorf("content = %q; want bye", got)
	}
	// The plan hash covers the content.
	a := e.mustPrepare(t, "write_file", `{"path":"x","content":"a"}`)
	b := e.mustPrepare(t, "write_file", `{"path":"x","content":"b"}`)
	if a.Hash() == b.Hash() {
		t.Errorf("plans with different content have the same hash")
	}
}

func TestWriteFileRefusals(t *testing.T) {
	var cfg string
	e := newEnv(t, func(o *workspace.Options) {
		cfg = filepath.Join(o.Roots[0].Path, "homard.toml")
		o.Protected = []string{cfg}
		o.MaxFileBytes = 1 << 10
	})
	os.MkdirAll(filepath.Join(e.root, ".git", "hooks"), 0o755)
	writeFile(t, e.root, "real.txt", "real")
	symlink(t, "real.txt", filepath.Join(e.root, "link.txt"))
	symlink(t, ".git/hooks", filepath.Join(e.root, "hooks"))
	for _, tt := range []struct{ raw, rule string }{
		{`{"path":"../../etc/passwd","content":"x"}`, "limit.workspace"},
		{`{"path":"/etc/passwd","content":"x"}`, "limit.workspace"},
		{`{"path":"homard.toml","content":"x"}`, "limit.protected"},
		{`{"path":"link.txt","content":"x"}`, "limit.symlink"},
		{fmt.Sprintf(`{"path":"big.txt","content":%q}`, strings.Repeat("b", 2<<10)), "limit.size"},
	} {
		e.wantRefusal(t, "write_file", tt.raw, tt.rule)
	}
	e.wantDecodeError(t, "write_file", `{"path":"a.txt","content":"x","PATH":".git/config"}`)
	e.wantDecodeError(t, "write_file", `{"path":"a.txt"}`)
	if got := readFile(t, filepath.Join(e.root, "real.txt")); got != "real" {
		t.Errorf("real.txt = %q; want unchanged", got)
	}
	// Repository metadata is not refused but graded by the gate:
	// critical, so the plan asks once in every mode (gate_test.go).
	for _, raw := range []string{
		`{"path":".git/hooks/pre-commit","content":"x"}`,
		`{"path":".git/config","content":"x"}`,
		`{"path":"hooks/pre-commit","content":"x"}`, // a symlink to .git/hooks
	} {
		plan := e.mustPrepare(t, "write_file", raw)
		if plan.Risk() != policy.RiskCritical || !strings.Contains(plan.Display(), "repository metadata") {
			t.Errorf("write_file %s: risk %s, display %q; want critical naming repository metadata", raw, plan.Risk(), plan.Display())
		}
	}
	// A parent that is a file is refused when the plan is made.
	writeFile(t, e.root, "file", "f")
	if _, err := e.prepare(t, "write_file", `{"path":"file/x","content":"x"}`); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("write under a file: prepare = %v; want an error saying file is not a folder", err)
	}
}

// The parent directory is swapped for a symlink to .git/hooks after the
// plan was approved: Run re-checks and refuses.
func TestWriteFileSwapAfterPrepare(t *testing.T) {
	e := newEnv(t)
	os.MkdirAll(filepath.Join(e.root, ".git", "hooks"), 0o755)
	os.Mkdir(filepath.Join(e.root, "scripts"), 0o755)
	writeFile(t, e.root, "notes.txt", "mine")
	secret := writeFile(t, e.outside, "target.txt", "outside")
	p1 := e.mustPrepare(t, "write_file", `{"path":"scripts/pre-commit","content":"#!/bin/sh\nevil"}`)
	p2 := e.mustPrepare(t, "write_file", `{"path":"notes.txt","content":"changed"}`)
	os.Remove(filepath.Join(e.root, "scripts"))
	symlink(t, ".git/hooks", filepath.Join(e.root, "scripts"))
	os.Remove(filepath.Join(e.root, "notes.txt"))
	symlink(t, "../outside/target.txt", filepath.Join(e.root, "notes.txt"))

	if res := e.run(t, p1); !res.IsError || !strings.Contains(res.Text, "symlink") {
		t.Errorf("write after parent swap = %+v; want a refusal naming the symlink", res)
	}
	if _, err := os.Stat(filepath.Join(e.root, ".git", "hooks", "pre-commit")); !os.IsNotExist(err) {
		t.Errorf(".git/hooks/pre-commit exists (%v); want nothing written", err)
	}
	if res := e.run(t, p2); !res.IsError || !strings.Contains(res.Text, "refused") {
		t.Errorf("write after file swap = %+v; want a refusal", res)
	}
	if got := readFile(t, secret); got != "outside" {
		t.Errorf("outside file = %q; want unchanged", got)
	}
}
