package workspace

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fixture is a workspace over real temp directories.
type fixture struct {
	ws      *Workspace
	root    string // default root, symlinks evaluated
	docs    string // second root "docs"
	outside string // a directory outside every root
	cpDir   string
}

func newFixture(t testing.TB, edit ...func(*Options)) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{
		root:    filepath.Join(base, "main"),
		docs:    filepath.Join(base, "docs"),
		outside: filepath.Join(base, "outside"),
		cpDir:   filepath.Join(base, "data", "checkpoints"),
	}
	for _, d := range []string{f.root, f.docs, f.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	clock := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	o := Options{
		Roots:         []Root{{Name: "main", Path: f.root}, {Name: "docs", Path: f.docs}},
		CheckpointDir: f.cpDir,
		Now: func() time.Time {
			clock = clock.Add(time.Second)
			return clock
		},
	}
	for _, e := range edit {
		e(&o)
	}
	f.ws, err = Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.ws.Close() })
	return f
}

// write creates a file (and its parents) under dir.
func write(t *testing.T, dir, rel, content string) string {
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

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (f *fixture) resolve(t *testing.T, p string) Path {
	t.Helper()
	got, err := f.ws.Resolve(p)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", p, err)
	}
	return got
}
