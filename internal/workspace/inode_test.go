package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestHardLinkToProtected: a hard link inside a root to one of homard's
// files (config, database, its -wal created after Open, vault key) is
// refused by every read and write, although its path is ordinary. Twin: a
// file with a second link elsewhere that is not homard's reads and writes.
func TestHardLinkToProtected(t *testing.T) {
	var home string
	f := newFixture(t, func(o *Options) {
		home = filepath.Join(filepath.Dir(o.Roots[0].Path), "outside", "homard")
		o.Protected = []string{filepath.Join(home, "config.toml"), filepath.Join(home, "data")}
	})
	cfg := write(t, home, "config.toml", "SECRET config")
	key := write(t, home, "data/vault.key", "SECRET key")
	// The fixture opened the workspace before these files existed: make a
	// second workspace that saw them at Open, and keep f for the later case.
	ws, err := Open(Options{
		Roots:         []Root{{Name: "main", Path: f.root}},
		Protected:     []string{filepath.Join(home, "config.toml"), filepath.Join(home, "data")},
		CheckpointDir: filepath.Join(t.TempDir(), "cp"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	link := func(target, rel string) {
		t.Helper()
		if err := os.Link(target, filepath.Join(f.root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	link(cfg, "cfg.txt")
	link(key, "notes.txt")
	// Created after both workspaces were opened: found by path.
	wal := write(t, home, "data/homard.db-wal", "SECRET wal")
	link(wal, "wal.txt")
	other := write(t, f.outside, "shared.txt", "shared")
	link(other, "shared.txt")

	for _, w := range []*Workspace{ws, f.ws} {
		for _, rel := range []string{"cfg.txt", "notes.txt", "wal.txt"} {
			p := Path{Root: "main", Rel: rel, inDefault: true}
			if data, err := w.ReadFile(p); !errors.Is(err, ErrProtected) {
				t.Errorf("ReadFile(%s) = %q, %v; want ErrProtected", rel, data, err)
			}
			if err := w.CheckWrite(p); !errors.Is(err, ErrProtected) {
				t.Errorf("CheckWrite(%s) = %v; want ErrProtected", rel, err)
			}
			if _, err := w.writeFile(p, []byte("x")); !errors.Is(err, ErrProtected) {
				t.Errorf("WriteFile(%s) = %v; want ErrProtected", rel, err)
			}
		}
		p := Path{Root: "main", Rel: "shared.txt", inDefault: true}
		if data, err := w.ReadFile(p); err != nil || string(data) != "shared" {
			t.Errorf("ReadFile(shared.txt) = %q, %v; want its content: its other link is not homard's", data, err)
		}
	}
	for name, want := range map[string]string{cfg: "SECRET config", key: "SECRET key", wal: "SECRET wal"} {
		if got := readString(t, name); got != want {
			t.Errorf("%s now holds %q; want %q", name, got, want)
		}
	}
	if _, err := ws.writeFile(Path{Root: "main", Rel: "shared.txt", inDefault: true}, []byte("new")); err != nil {
		t.Errorf("WriteFile(shared.txt) = %v; want success", err)
	}
}

// TestReal: Real resolves symlinks inside the root, for files that exist
// and for new files under a symlinked folder; a real path is itself.
func TestReal(t *testing.T) {
	f := newFixture(t)
	write(t, f.root, "notes/a.md", "a")
	write(t, f.root, "secrets/x", "x")
	symlink(t, "../secrets/x", filepath.Join(f.root, "notes", "link"))
	symlink(t, "../secrets", filepath.Join(f.root, "notes", "dir"))
	symlink(t, f.outside, filepath.Join(f.root, "notes", "out"))
	for _, c := range []struct{ rel, want string }{
		{"notes/a.md", "notes/a.md"},
		{"notes/new.md", "notes/new.md"},
		{"notes/link", "secrets/x"},
		{"notes/dir/x", "secrets/x"},
		{"notes/dir/new/deeper", "secrets/new/deeper"},
		{".", "."},
	} {
		got, err := f.ws.Real(Path{Root: "main", Rel: c.rel, inDefault: true})
		if err != nil || got.Rel != c.want || got.Target() != c.want {
			t.Errorf("Real(%s) = %+v, %v; want %s", c.rel, got, err, c.want)
		}
	}
	got, err := f.ws.Real(Path{Root: "docs", Rel: "a/b"})
	if err != nil || got.Target() != "docs:a/b" {
		t.Errorf("Real(docs:a/b) = %v, %v; want docs:a/b", got, err)
	}
	if got, err := f.ws.Real(Path{Root: "main", Rel: "notes/out/x", inDefault: true}); !errors.Is(err, ErrEscape) {
		t.Errorf("Real(notes/out/x) = %v, %v; want ErrEscape", got, err)
	}
}
