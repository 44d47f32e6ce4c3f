package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"github.com/homard/homard/internal/changeset"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/sandbox"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/workspace"
)

// homeEnv is the owner's (fake) home as the read-only first root "home",
// holding keys, homard's own home and a project that is the writable root
// "proj".
type homeEnv struct {
	*env
	home, proj string
}

const (
	keyCanary   = "PRIVATE-KEY-CANARY"
	awsCanary   = "AWS-CANARY"
	vaultCanary = "VAULT-CANARY"
	projCanary  = "PROJECT-CANARY"
)

func newHomeEnv(t *testing.T) *homeEnv {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &homeEnv{home: filepath.Join(base, "me")}
	h.proj = filepath.Join(h.home, "projects", "app")
	hh := filepath.Join(h.home, ".homard")
	writeFile(t, h.home, "notes.txt", "a normal note\n")
	writeFile(t, h.home, ".ssh/id_ed25519", keyCanary+"\n")
	writeFile(t, h.home, ".aws/credentials", awsCanary+"\n")
	writeFile(t, h.home, ".homard/config.toml", vaultCanary+"\n")
	writeFile(t, h.home, ".homard/data/vault.key", vaultCanary+"\n")
	writeFile(t, h.home, "projects/app/main.go", projCanary+"\n")
	ws, err := workspace.Open(workspace.Options{
		Roots: []workspace.Root{
			{Name: "home", Path: h.home, ReadOnly: true},
			{Name: "proj", Path: h.proj},
		},
		Protected:     []string{filepath.Join(hh, "config.toml"), filepath.Join(hh, "data")},
		CheckpointDir: filepath.Join(hh, "data", "checkpoints"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	h.env = &env{ws: ws, root: h.home, tools: map[string]tool.Tool{}}
	for _, tl := range FileTools(changeset.New(ws, changeset.Options{}), func() time.Time { return testNow }) {
		h.tools[tl.Spec().Name] = tl
	}
	return h
}

// TestReadOnlyRootFileTools: in a read-only root that is the owner's home,
// keys and homard's own files are refused, every change is refused with
// limit.root-read-only in any case; an ordinary file reads, the folder
// lists, and the writable project root takes a write (the twins).
func TestReadOnlyRootFileTools(t *testing.T) {
	h := newHomeEnv(t)
	for _, c := range []struct{ tool, args, rule string }{
		{"read_file", `{"path":".ssh/id_ed25519"}`, "limit.sensitive"},
		{"read_file", `{"path":".aws/credentials"}`, "limit.sensitive"},
		{"read_file", `{"path":".homard/data/vault.key"}`, "limit.protected"},
		{"read_file", `{"path":".homard/config.toml"}`, "limit.protected"},
		{"read_file", `{"path":"projects/app/main.go"}`, "limit.protected"},
		{"write_file", `{"path":"notes.txt","content":"x"}`, "limit.root-read-only"},
		{"write_file", `{"path":"new/file.txt","content":"x"}`, "limit.root-read-only"},
		{"write_file", `{"path":".ssh/authorized_keys","content":"x"}`, "limit.root-read-only"},
		{"edit_file", `{"path":"notes.txt","old_text":"normal","new_text":"odd"}`, "limit.root-read-only"},
	} {
		h.wantRefusal(t, c.tool, c.args, c.rule)
	}
	if got := readFile(t, filepath.Join(h.home, "notes.txt")); got != "a normal note\n" {
		t.Errorf("notes.txt = %q after refused writes", got)
	}

	if res := h.call(t, "read_file", `{"path":"notes.txt"}`); res.IsError || !strings.Contains(res.Text, "a normal note") {
		t.Errorf("read_file notes.txt = %+v; want it read", res)
	}
	res := h.call(t, "list_dir", `{"path":"."}`)
	for _, want := range []string{"notes.txt\n", ".ssh/  (sensitive", "projects/\n"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("list_dir . = %q; want a line %q", res.Text, want)
		}
	}
	res = h.call(t, "grep", `{"pattern":"CANARY"}`)
	if strings.Contains(res.Text, "CANARY\n") || strings.Contains(res.Text, "main.go") {
		t.Errorf("grep CANARY in the home root = %q; want no key, no homard file, no nested root", res.Text)
	}
	if res := h.call(t, "write_file", `{"path":"`+filepath.Join(h.proj, "new.go")+`","content":"package app"}`); res.IsError {
		t.Errorf("write_file in the writable root = %+v", res)
	}
	if got := readFile(t, filepath.Join(h.proj, "new.go")); got != "package app" {
		t.Errorf("proj/new.go = %q", got)
	}
}

// confinedBackend is the sandbox run_command tests use: a missing sandbox
// skips the test, but fails it under CI.
func confinedBackend(t *testing.T) sandbox.Backend {
	t.Helper()
	b, err := sandbox.Select("auto")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox backend works here, and CI must test one: %v", err)
		}
		t.Skipf("no sandbox backend works here: %v", err)
	}
	return b
}

// command prepares and runs a run_command call; a refusal is returned as
// the error.
func command(t *testing.T, rc tool.Tool, raw string) (tool.Plan, tool.Result, error) {
	t.Helper()
	params, err := rc.Decode([]byte(raw))
	if err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	plan, err := rc.Prepare(context.Background(), params)
	if err != nil {
		return tool.Plan{}, tool.Result{}, err
	}
	res, err := rc.Run(context.Background(), plan)
	if err != nil {
		t.Fatalf("run %s: %v", raw, err)
	}
	return plan, res, nil
}

// TestReadOnlyRootCommands: a command in the read-only home sees the
// keys, homard's files and the nested root hidden, cannot change the root
// (a write is refused, code runs on a read-only view); `cat` of an
// ordinary file and `ls` work (the twins).
func TestReadOnlyRootCommands(t *testing.T) {
	h := newHomeEnv(t)
	b := confinedBackend(t)
	rc := NewRunCommand(changeset.New(h.ws, changeset.Options{}), CommandOptions{Backend: func() (sandbox.Backend, error) { return b, nil }})
	for _, f := range []string{".ssh/id_ed25519", ".aws/credentials", ".homard/data/vault.key", ".homard/config.toml", "projects/app/main.go"} {
		_, res, err := command(t, rc, `{"program":"cat","args":["`+f+`"]}`)
		if err != nil {
			t.Errorf("cat %s: %v; want it to run (and see nothing)", f, err)
			continue
		}
		if strings.Contains(res.Text, "CANARY") || !res.IsError {
			t.Errorf("cat %s = %q; want it to fail and show nothing", f, res.Text)
		}
	}
	if _, res, err := command(t, rc, `{"program":"cat","args":["notes.txt"]}`); err != nil || !strings.Contains(res.Text, "a normal note") {
		t.Errorf("cat notes.txt = %+v, %v; want the note", res, err)
	}
	if _, res, err := command(t, rc, `{"program":"ls","args":["-a"]}`); err != nil || res.IsError || !strings.Contains(res.Text, "notes.txt") || !strings.Contains(res.Text, "projects") {
		t.Errorf("ls -a = %+v, %v; want the home's entries", res, err)
	}

	var r *tool.Refusal
	if _, _, err := command(t, rc, `{"program":"touch","args":["planted"]}`); !errors.As(err, &r) || r.Rule != "limit.root-read-only" {
		t.Errorf("touch planted in the read-only root: %v; want refused with limit.root-read-only", err)
	}
	// Code (a program the catalog does not know) runs on a read-only view.
	script := writeFile(t, h.home, "bin/tool.sh", "#!/bin/sh\necho ran\necho x > written.txt || echo cannot-write\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	plan, res, err := command(t, rc, `{"program":"`+script+`"}`)
	if err != nil {
		t.Fatalf("run a script in the read-only root: %v", err)
	}
	if !strings.Contains(plan.Display(), "read-only root") || !strings.Contains(res.Text, "ran") || !strings.Contains(res.Text, "cannot-write") {
		t.Errorf("script in the read-only root: card %q, result %q; want it run read-only", plan.Display(), res.Text)
	}
	if _, err := os.Stat(filepath.Join(h.home, "written.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("written.txt exists (%v); the read-only root changed", err)
	}
	// Twin: the same kind of command in the writable root changes it.
	if _, res, err := command(t, rc, `{"program":"touch","args":["made"],"cwd":"`+h.proj+`"}`); err != nil || res.IsError {
		t.Errorf("touch made in the writable root = %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(h.proj, "made")); err != nil {
		t.Errorf("touch in the writable root left no file: %v", err)
	}
}

// TestCommandsPath: a program in a folder on commands.path runs by its
// bare name, finds its siblings through PATH, and is bound to its hash
// in the template; without the folder configured it is not found.
func TestCommandsPath(t *testing.T) {
	e := newEnv(t)
	b := confinedBackend(t)
	bin := filepath.Join(e.outside, "bin")
	tool1 := writeFile(t, bin, "hello-tool", "#!/bin/sh\necho hello from the owner tool\nhello-helper\n")
	writeFile(t, bin, "hello-helper", "#!/bin/sh\necho helper found through PATH\n")
	for _, f := range []string{tool1, filepath.Join(bin, "hello-helper")} {
		if err := os.Chmod(f, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	backend := func() (sandbox.Backend, error) { return b, nil }
	rc := NewRunCommand(changeset.New(e.ws, changeset.Options{}), CommandOptions{Backend: backend, Path: []string{bin}})
	plan, res, err := command(t, rc, `{"program":"hello-tool"}`)
	if err != nil {
		t.Fatalf("hello-tool with commands.path: %v", err)
	}
	if res.IsError || !strings.Contains(res.Text, "hello from the owner tool") || !strings.Contains(res.Text, "helper found through PATH") {
		t.Errorf("hello-tool = %q; want it and its helper to run", res.Text)
	}
	sum := sha256.Sum256([]byte(readFile(t, tool1)))
	if tm, ok := plan.Template(); !ok || tm.Program != tool1 || tm.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("template = %+v; want program %s with its SHA-256", tm, tool1)
	}

	rc = NewRunCommand(changeset.New(e.ws, changeset.Options{}), CommandOptions{Backend: backend})
	var a *tool.ArgError
	if _, _, err := command(t, rc, `{"program":"hello-tool"}`); !errors.As(err, &a) || !strings.Contains(err.Error(), "not found") {
		t.Errorf("hello-tool without commands.path: %v; want not found", err)
	}
}

// TestApplyChangesRefusesReadOnlyRoot: a change set held for a read-only
// root (the root was made read-only after the command ran) is refused by
// apply_changes with limit.root-read-only; the same set held for the
// writable root gets a card (the twin).
func TestApplyChangesRefusesReadOnlyRoot(t *testing.T) {
	h := newHomeEnv(t)
	upper := t.TempDir()
	writeFile(t, upper, "planted.txt", "x\n")
	stream, err := os.CreateTemp(t.TempDir(), "changes")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if err := workspace.WriteUpperTar(stream, upper, workspace.TarLimits{MaxEntries: 10, MaxBytes: 1 << 20, MaxDepth: 8}); err != nil {
		t.Fatal(err)
	}
	holdDir := filepath.Join(t.TempDir(), "held")
	gate := changeset.New(h.ws, changeset.Options{HoldDir: holdDir})
	ac := NewApplyChanges(gate)
	for _, c := range []struct {
		root string
		rule string // "" : a plan
	}{{"home", "limit.root-read-only"}, {"proj", ""}} {
		meta, err := gate.Hold(stream, changeset.Held{Root: c.root, Writer: []string{"/bin/true"}})
		if err != nil {
			t.Fatal(err)
		}
		params, err := ac.Decode([]byte(`{"id":"` + meta.ID + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = ac.Prepare(context.Background(), params)
		var r *tool.Refusal
		switch {
		case c.rule == "" && err != nil:
			t.Errorf("apply_changes for root %s: %v; want a plan", c.root, err)
		case c.rule != "" && (!errors.As(err, &r) || r.Rule != c.rule):
			t.Errorf("apply_changes for root %s: %v; want refused with %s", c.root, err, c.rule)
		}
	}
}
