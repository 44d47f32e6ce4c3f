package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// homeFixture is the owner's home as a read-only root "home" (the first
// root), holding keys, homard's own home (config and data) and a project
// that is a writable root "proj" of its own.
type homeFixture struct {
	ws   *Workspace
	home string // the read-only root
	proj string // the writable root inside it
	hh   string // homard's home inside it
}

func newHomeFixture(t *testing.T) *homeFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &homeFixture{home: filepath.Join(base, "me")}
	f.proj = filepath.Join(f.home, "projects", "app")
	f.hh = filepath.Join(f.home, ".homard")
	write(t, f.home, "notes.txt", "a normal note")
	write(t, f.home, ".ssh/id_ed25519", "PRIVATE KEY")
	write(t, f.home, ".aws/credentials", "[default]\naws_secret_access_key = x")
	write(t, f.home, ".homard/config.toml", "SECRET config")
	write(t, f.home, ".homard/data/vault.key", "SECRET vault key")
	write(t, f.home, "projects/app/main.go", "package main")
	write(t, f.home, "projects/other.txt", "beside the project")
	f.ws, err = Open(Options{
		Roots: []Root{
			{Name: "home", Path: f.home, ReadOnly: true},
			{Name: "proj", Path: f.proj},
		},
		Protected:     []string{filepath.Join(f.hh, "config.toml"), filepath.Join(f.hh, "data")},
		CheckpointDir: filepath.Join(f.hh, "data", "checkpoints"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.ws.Close() })
	return f
}

// TestReadOnlyRootReads: in a read-only root holding the owner's keys and
// homard's home, the keys and homard's files are refused and a nested
// root is reached only by its own name; ordinary files read (the twins).
func TestReadOnlyRootReads(t *testing.T) {
	f := newHomeFixture(t)
	for _, c := range []struct {
		path string
		want error // nil: reads fine
	}{
		{".ssh/id_ed25519", ErrSensitive},
		{".aws/credentials", ErrSensitive},
		{".homard/config.toml", ErrProtected},
		{".homard/data/vault.key", ErrProtected},
		{"projects/app/main.go", ErrProtected},
		{"notes.txt", nil},
		{"projects/other.txt", nil},
		{filepath.Join(f.proj, "main.go"), nil}, // absolute: the inner root wins
	} {
		t.Run(c.path, func(t *testing.T) {
			p, err := f.ws.Resolve(c.path)
			if err != nil {
				t.Fatalf("Resolve(%q) = %v", c.path, err)
			}
			_, err = f.ws.ReadFile(p)
			if c.want == nil && err != nil {
				t.Errorf("ReadFile(%s) = %v; want it read", p, err)
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("ReadFile(%s) = %v; want %v", p, err, c.want)
			}
			if cerr := f.ws.CheckRead(p); (cerr == nil) != (c.want == nil) {
				t.Errorf("CheckRead(%s) = %v; want the same verdict as ReadFile (%v)", p, cerr, err)
			}
		})
	}
	p, _ := f.ws.Resolve(filepath.Join(f.proj, "main.go"))
	if p.Root != "proj" {
		t.Errorf("Resolve(%s) = %s; want it in root proj", f.proj, p)
	}
	p, _ = f.ws.Resolve("projects/app/main.go")
	if _, err := f.ws.ReadFile(p); err == nil || !strings.Contains(err.Error(), `root "proj"`) {
		t.Errorf("ReadFile(%s) = %v; want a refusal naming root proj", p, err)
	}
}

// TestReadOnlyRootListing: listings leave out homard's files and the
// nested root, and keep everything else (keys are listed; tools mark them).
func TestReadOnlyRootListing(t *testing.T) {
	f := newHomeFixture(t)
	for dir, want := range map[string][]string{
		".":        {".aws", ".homard", ".ssh", "notes.txt", "projects"},
		".homard":  {},
		"projects": {"other.txt"},
	} {
		p, err := f.ws.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := f.ws.ReadDir(p)
		if err != nil {
			t.Fatalf("ReadDir(%s) = %v", dir, err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("ReadDir(%s) = %q; want %q", dir, got, want)
		}
	}
}

// TestReadOnlyRootRefusesWrites: every way of writing to the read-only
// root is refused with ErrReadOnly; the writable root inside it takes a
// write (the twin).
func TestReadOnlyRootRefusesWrites(t *testing.T) {
	f := newHomeFixture(t)
	for _, rel := range []string{"notes.txt", "new.txt", "projects/other.txt"} {
		p, err := f.ws.Resolve(rel)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.ws.CheckWrite(p); !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), `"home" is read-only`) {
			t.Errorf("CheckWrite(%s) = %v; want ErrReadOnly naming the root", p, err)
		}
		if _, err := f.ws.writeFile(p, []byte("x")); !errors.Is(err, ErrReadOnly) {
			t.Errorf("WriteFile(%s) = %v; want ErrReadOnly", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.home, "notes.txt")); string(b) != "a normal note" {
		t.Errorf("notes.txt = %q; want it unchanged", b)
	}
	if _, err := os.Stat(filepath.Join(f.home, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("new.txt exists (%v); want nothing created", err)
	}
	cs := upper{}.file("planted.txt", "x").read(t)
	if _, err := f.ws.ApplyChanges(context.Background(), "home", cs, sinceNow(t), ApplyOptions{Approved: GradeCritical}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("ApplyChanges(home) = %v; want ErrReadOnly", err)
	}
	if _, err := os.Stat(filepath.Join(f.home, "planted.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("planted.txt exists (%v); want nothing applied", err)
	}

	p, err := f.ws.ResolveIn("proj", "main.go")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ws.writeFile(p, []byte("package app")); err != nil {
		t.Errorf("WriteFile(%s) in the writable root = %v", p, err)
	}
	if !f.ws.ReadOnly("home") || f.ws.ReadOnly("proj") {
		t.Errorf("ReadOnly(home, proj) = %v, %v; want true, false", f.ws.ReadOnly("home"), f.ws.ReadOnly("proj"))
	}
}

// TestOffLimits: a command in the read-only root must not see homard's
// files nor the nested root; the writable root hides nothing of that kind.
func TestOffLimits(t *testing.T) {
	f := newHomeFixture(t)
	got := f.ws.OffLimits("home")
	for _, want := range []string{filepath.Join(f.hh, "config.toml"), filepath.Join(f.hh, "data"), f.proj} {
		if !slices.Contains(got, want) {
			t.Errorf("OffLimits(home) = %q; want it to hold %s", got, want)
		}
	}
	if got := f.ws.OffLimits("proj"); len(got) != 0 {
		t.Errorf("OffLimits(proj) = %q; want none", got)
	}
}

// TestNestedRootsNeedReadOnlyOuter: roots may nest only inside a
// read-only root.
func TestNestedRootsNeedReadOnlyOuter(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outer, inner := filepath.Join(base, "a"), filepath.Join(base, "a", "b")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		roots []Root
		ok    bool
	}{
		{"rw inside ro", []Root{{Name: "a", Path: outer, ReadOnly: true}, {Name: "b", Path: inner}}, true},
		{"rw inside ro, inner first", []Root{{Name: "b", Path: inner}, {Name: "a", Path: outer, ReadOnly: true}}, true},
		{"ro inside rw", []Root{{Name: "a", Path: outer}, {Name: "b", Path: inner, ReadOnly: true}}, false},
		{"rw inside rw", []Root{{Name: "a", Path: outer}, {Name: "b", Path: inner}}, false},
		{"same folder twice", []Root{{Name: "a", Path: outer, ReadOnly: true}, {Name: "b", Path: outer, ReadOnly: true}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, err := Open(Options{Roots: c.roots, CheckpointDir: filepath.Join(base, "cp")})
			if err == nil {
				ws.Close()
			}
			if c.ok && err != nil {
				t.Errorf("Open = %v; want accepted", err)
			}
			if !c.ok && (err == nil || !strings.Contains(err.Error(), "read-only")) {
				t.Errorf("Open = %v; want an overlap refusal that says how to nest roots", err)
			}
		})
	}
}
