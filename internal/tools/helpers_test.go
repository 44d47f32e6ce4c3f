package tools

import (
	"context"
	"errors"
	"github.com/homard/homard/internal/changeset"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/workspace"
)

// env is a workspace over real temp directories and the tools over it.
type env struct {
	ws      *workspace.Workspace
	root    string // default root "main"
	docs    string // root "docs"
	outside string // outside every root
	tools   map[string]tool.Tool
	gate    *changeset.Gate // the gate the file tools write through
}

var testNow = time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))

func newEnv(t *testing.T, edit ...func(*workspace.Options)) *env {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{root: filepath.Join(base, "main"), docs: filepath.Join(base, "docs"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{e.root, e.docs, e.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	o := workspace.Options{
		Roots:         []workspace.Root{{Name: "main", Path: e.root}, {Name: "docs", Path: e.docs}},
		CheckpointDir: filepath.Join(base, "checkpoints"),
	}
	for _, f := range edit {
		f(&o)
	}
	e.ws, err = workspace.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.ws.Close() })
	e.tools = make(map[string]tool.Tool)
	e.gate = changeset.New(e.ws, changeset.Options{HoldDir: filepath.Join(base, "held")})
	for _, tl := range FileTools(e.gate, func() time.Time { return testNow }) {
		e.tools[tl.Spec().Name] = tl
	}
	return e
}

// prepare runs Decode and Prepare through the adapted tool.
func (e *env) prepare(t *testing.T, name, raw string) (tool.Plan, error) {
	t.Helper()
	tl, ok := e.tools[name]
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	params, err := tl.Decode([]byte(raw))
	if err != nil {
		return tool.Plan{}, err
	}
	return tl.Prepare(context.Background(), params)
}

// mustPrepare prepares and fails the test on any error.
func (e *env) mustPrepare(t *testing.T, name, raw string) tool.Plan {
	t.Helper()
	plan, err := e.prepare(t, name, raw)
	if err != nil {
		t.Fatalf("%s %s: prepare: %v", name, raw, err)
	}
	return plan
}

func (e *env) run(t *testing.T, plan tool.Plan) tool.Result {
	t.Helper()
	res, err := e.tools[plan.Tool()].Run(context.Background(), plan)
	if err != nil {
		t.Fatalf("%s: run: %v", plan.Tool(), err)
	}
	return res
}

// call is Decode → Prepare → Run for arguments that must be accepted.
func (e *env) call(t *testing.T, name, raw string) tool.Result {
	t.Helper()
	return e.run(t, e.mustPrepare(t, name, raw))
}

// wantRefusal checks that preparing raw is refused with rule.
func (e *env) wantRefusal(t *testing.T, name, raw, rule string) {
	t.Helper()
	_, err := e.prepare(t, name, raw)
	if rule == "args.invalid" {
		var a *tool.ArgError
		if !errors.As(err, &a) {
			t.Errorf("%s %s: prepare = %v; want an argument error", name, raw, err)
		}
		return
	}
	var r *tool.Refusal
	if !errors.As(err, &r) || r.Rule != rule {
		t.Errorf("%s %s: prepare = %v; want a refusal with rule %s", name, raw, err, rule)
	}
}

// wantDecodeError checks that strict decoding rejects raw.
func (e *env) wantDecodeError(t *testing.T, name, raw string) {
	t.Helper()
	if _, err := e.tools[name].Decode([]byte(raw)); !errors.Is(err, tool.ErrArguments) {
		t.Errorf("%s: Decode(%s) = %v; want ErrArguments", name, raw, err)
	}
}

func writeFile(t *testing.T, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
