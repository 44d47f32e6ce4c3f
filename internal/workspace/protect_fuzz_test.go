package workspace

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// FuzzProtectedRead checks that homard's own files stay invisible whatever
// path the model sends: when a read succeeds, what it reached is not
// protected, and no listing names a protected file.
func FuzzProtectedRead(f *testing.F) {
	base, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	rootDir := filepath.Join(base, "main")
	home := filepath.Join(rootDir, "homard")
	data := filepath.Join(home, "data")
	cfg := filepath.Join(home, "config.toml")
	for _, d := range []string{data + "/checkpoints", rootDir + "/sub/deep", filepath.Join(base, "docs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for p, content := range map[string]string{
		cfg: "SECRET", data + "/homard.db": "SECRET", data + "/vault.key": "SECRET",
		home + "/notes.md": "ok", rootDir + "/notes.txt": "ok", rootDir + "/sub/deep/a.txt": "ok",
	} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"datalink": "homard/data", "cfglink": "homard/config.toml", "dangling": "homard/data/missing",
		"sub/keylink": "../homard/data/vault.key", "sub/up": "..", "sub/deep/home": "../../homard",
		"homard/data/back": "../../notes.txt", "loop": "loop", "self": ".",
	} {
		if err := os.Symlink(target, filepath.Join(rootDir, link)); err != nil {
			f.Fatal(err)
		}
	}
	ws, err := Open(Options{
		Roots:         []Root{{Name: "main", Path: rootDir}, {Name: "docs", Path: filepath.Join(base, "docs")}},
		CheckpointDir: data + "/checkpoints",
		Protected:     []string{cfg, data},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ws.Close() })
	protected := func(real string) bool { return within(data, real) || real == cfg }
	// reached is where the path really leads; ok is false when it does not
	// exist whole.
	reached := func(rel string, follow bool) (string, bool) {
		full := filepath.Join(rootDir, filepath.FromSlash(rel))
		if !follow {
			dir, err := filepath.EvalSymlinks(filepath.Dir(full))
			return filepath.Join(dir, filepath.Base(full)), err == nil
		}
		real, err := filepath.EvalSymlinks(full)
		return real, err == nil
	}

	for _, s := range []string{
		"notes.txt", "homard/notes.md", "homard", ".", "homard/data/vault.key", "datalink/homard.db",
		"cfglink", "dangling", "sub/keylink", "sub/up/datalink", "sub/deep/home/data", "sub/deep/home/config.toml",
		"self/self/homard/data", "datalink/back", "sub/up/homard/data/checkpoints", "loop",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ws.Resolve(s)
		if err != nil || p.Root != "main" {
			return
		}
		if data, err := ws.ReadFile(p); err == nil {
			if bytes.Contains(data, []byte("SECRET")) {
				t.Fatalf("ReadFile(%q) read a protected file: %q", s, data)
			}
			if real, ok := reached(p.Rel, true); ok && protected(real) {
				t.Fatalf("ReadFile(%q) succeeded on protected %s", s, real)
			}
		} else if errors.Is(err, ErrProtected) {
			if err := ws.CheckRead(p); !errors.Is(err, ErrProtected) {
				t.Fatalf("ReadFile(%q) is refused as protected but CheckRead says %v", s, err)
			}
		}
		for _, follow := range []bool{true, false} {
			stat := ws.Lstat
			if follow {
				stat = ws.Stat
			}
			if _, err := stat(p); err == nil {
				if real, ok := reached(p.Rel, follow); ok && protected(real) {
					t.Fatalf("Stat(%q, follow=%v) succeeded on protected %s", s, follow, real)
				}
			}
		}
		entries, err := ws.ReadDir(p)
		if err != nil {
			return
		}
		real, ok := reached(p.Rel, true)
		if ok && protected(real) {
			t.Fatalf("ReadDir(%q) succeeded on protected %s", s, real)
		}
		for _, e := range entries {
			if ok && protected(filepath.Join(real, e.Name())) {
				t.Fatalf("ReadDir(%q) lists protected %s", s, e.Name())
			}
		}
		fsys, _ := ws.FS("main")
		if list, err := fs.ReadDir(fsys, p.Rel); err != nil || len(list) != len(entries) {
			t.Fatalf("fs.ReadDir(%q) = %d entries, %v; ReadDir gave %d", p.Rel, len(list), err, len(entries))
		}
	})
}
