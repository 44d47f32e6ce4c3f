package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// protectedFixture is a workspace whose default root holds homard's home:
// the config file and the data directory (database, vault key,
// checkpoints), with symlinks of every kind leading into it.
func protectedFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, func(o *Options) {
		home := filepath.Join(o.Roots[0].Path, "homard")
		o.Protected = []string{filepath.Join(home, "config.toml"), filepath.Join(home, "data")}
		o.CheckpointDir = filepath.Join(home, "data", "checkpoints")
	})
	write(t, f.root, "homard/config.toml", "SECRET config")
	write(t, f.root, "homard/data/homard.db", "SECRET database")
	write(t, f.root, "homard/data/vault.key", "SECRET key")
	write(t, f.root, "homard/notes.md", "visible notes")
	write(t, f.root, "notes.txt", "visible")
	write(t, f.root, ".git/config", "[core]")
	symlink(t, "homard/data", filepath.Join(f.root, "datalink"))
	symlink(t, "homard/config.toml", filepath.Join(f.root, "cfglink"))
	symlink(t, "homard/data/missing", filepath.Join(f.root, "dangling"))
	os.Mkdir(filepath.Join(f.root, "sub"), 0o755)
	symlink(t, "../homard/data/vault.key", filepath.Join(f.root, "sub", "keylink"))
	symlink(t, "../datalink/homard.db", filepath.Join(f.root, "sub", "chain"))
	// A symlink inside the data directory leading back out: reaching
	// notes.txt this way would still show what the data directory holds.
	symlink(t, "../../notes.txt", filepath.Join(f.root, "homard", "data", "back"))
	return f
}

// protectedPaths are refused by every read, whether they exist or not.
var protectedPaths = []string{
	"homard/config.toml",
	"homard/data",
	"homard/data/homard.db",
	"homard/data/vault.key",
	"homard/data/missing",
	"homard/data/missing/deeper",
	"homard/data/checkpoints",
	"homard/data/back",
	"datalink",
	"datalink/homard.db",
	"datalink/missing",
	"datalink/back",
	"cfglink",
	"dangling",
	"sub/keylink",
	"sub/chain",
	"sub/../homard/data", // Resolve refuses "..": built by hand below
}

func TestReadsRefuseProtected(t *testing.T) {
	f := protectedFixture(t)
	for _, rel := range protectedPaths {
		p := f.ws.mustPath(t, "main", rel)
		if strings.Contains(rel, "..") {
			// checkRel refuses it before any protection check.
			if _, err := f.ws.ReadFile(p); !errors.Is(err, ErrDotDot) {
				t.Errorf("ReadFile(%q) = %v; want ErrDotDot", rel, err)
			}
			continue
		}
		if err := f.ws.CheckRead(p); !errors.Is(err, ErrProtected) {
			t.Errorf("CheckRead(%q) = %v; want ErrProtected", rel, err)
		}
		if data, err := f.ws.ReadFile(p); !errors.Is(err, ErrProtected) {
			t.Errorf("ReadFile(%q) = %q, %v; want ErrProtected", rel, data, err)
		} else if !strings.Contains(err.Error(), "homard's own data; tools may not read it") {
			t.Errorf("ReadFile(%q) error %q does not say why", rel, err)
		}
		if entries, err := f.ws.ReadDir(p); !errors.Is(err, ErrProtected) {
			t.Errorf("ReadDir(%q) = %d entries, %v; want ErrProtected", rel, len(entries), err)
		}
		if fi, err := f.ws.Stat(p); !errors.Is(err, ErrProtected) {
			t.Errorf("Stat(%q) = %v, %v; want ErrProtected", rel, fi, err)
		}
		if fi, err := f.ws.Lstat(p); !errors.Is(err, ErrProtected) {
			t.Errorf("Lstat(%q) = %v, %v; want ErrProtected", rel, fi, err)
		}
	}
	// The absolute form of a protected path is refused the same way.
	abs := f.resolve(t, filepath.Join(f.root, "homard", "data", "vault.key"))
	if _, err := f.ws.ReadFile(abs); !errors.Is(err, ErrProtected) {
		t.Errorf("ReadFile(absolute vault.key) = %v; want ErrProtected", err)
	}
}

func TestReadsAllowedBesideProtected(t *testing.T) {
	f := protectedFixture(t)
	for rel, want := range map[string]string{
		"notes.txt":       "visible",
		"homard/notes.md": "visible notes",
		".git/config":     "[core]", // git metadata is write-protected only
	} {
		p := f.resolve(t, rel)
		if err := f.ws.CheckRead(p); err != nil {
			t.Errorf("CheckRead(%q) = %v; want nil", rel, err)
		}
		if got, err := f.ws.ReadFile(p); err != nil || string(got) != want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", rel, got, err, want)
		}
		if fi, err := f.ws.Stat(p); err != nil || fi.Name() != filepath.Base(rel) || fi.Size() != int64(len(want)) {
			t.Errorf("Stat(%q) = %v, %v; want %s of %d bytes", rel, fi, err, filepath.Base(rel), len(want))
		}
	}
	// A missing file beside the protected ones is reported as missing.
	if _, err := f.ws.ReadFile(f.resolve(t, "homard/missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(homard/missing) = %v; want fs.ErrNotExist", err)
	}
	// A symlink to an ordinary file is followed; Lstat describes the link.
	symlink(t, "homard/notes.md", filepath.Join(f.root, "noteslink"))
	p := f.resolve(t, "noteslink")
	if fi, err := f.ws.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Name() != "noteslink" {
		t.Errorf("Stat(noteslink) = %v, %v; want the regular file, named noteslink", fi, err)
	}
	if fi, err := f.ws.Lstat(p); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(noteslink) = %v, %v; want the symlink", fi, err)
	}
	// Writes next to protected files still work; into them they do not.
	if _, err := f.ws.writeFile(f.resolve(t, "homard/new.md"), []byte("x")); err != nil {
		t.Errorf("WriteFile(homard/new.md) = %v", err)
	}
	if _, err := f.ws.writeFile(f.resolve(t, "datalink/evil"), []byte("x")); !errors.Is(err, ErrProtected) {
		t.Errorf("WriteFile(datalink/evil) = %v; want ErrProtected", err)
	}
}

func names(entries []fs.DirEntry) string {
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.Type()&fs.ModeSymlink != 0 {
			n += "@"
		} else if e.IsDir() {
			n += "/"
		}
		out = append(out, n)
	}
	return strings.Join(out, " ")
}

func TestReadDirHidesProtected(t *testing.T) {
	f := protectedFixture(t)
	for rel, want := range map[string]string{
		".":      ".git/ cfglink@ dangling@ datalink@ homard/ notes.txt sub/",
		"homard": "notes.md",
		"sub":    "chain@ keylink@",
	} {
		entries, err := f.ws.ReadDir(f.resolve(t, rel))
		if err != nil {
			t.Errorf("ReadDir(%q): %v", rel, err)
			continue
		}
		if got := names(entries); got != want {
			t.Errorf("ReadDir(%q) = %q; want %q", rel, got, want)
		}
	}
}

func TestFSHidesProtected(t *testing.T) {
	f := protectedFixture(t)
	fsys, err := f.ws.FS("main")
	if err != nil {
		t.Fatal(err)
	}
	var walked []string
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Errorf("walk %s: %v", p, err)
			return nil
		}
		walked = append(walked, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".", ".git", ".git/config", "cfglink", "dangling", "datalink", "homard", "homard/notes.md", "notes.txt", "sub", "sub/chain", "sub/keylink"}
	if !slices.Equal(walked, want) {
		t.Errorf("WalkDir visited %q; want %q", walked, want)
	}
	for _, rel := range protectedPaths {
		if strings.Contains(rel, "..") {
			continue
		}
		if data, err := fs.ReadFile(fsys, rel); err == nil {
			t.Errorf("fs.ReadFile(%q) = %q; want an error", rel, data)
		} else if !errors.Is(err, ErrProtected) {
			t.Errorf("fs.ReadFile(%q) = %v; want ErrProtected", rel, err)
		}
		if _, err := fs.Stat(fsys, rel); !errors.Is(err, ErrProtected) {
			t.Errorf("fs.Stat(%q) = %v; want ErrProtected", rel, err)
		}
		if _, err := fs.ReadDir(fsys, rel); !errors.Is(err, ErrProtected) {
			t.Errorf("fs.ReadDir(%q) = %v; want ErrProtected", rel, err)
		}
	}
	for _, pattern := range []string{"homard/*", "*/*", "datalink/*"} {
		got, err := fs.Glob(fsys, pattern)
		if err != nil {
			t.Errorf("fs.Glob(%q): %v", pattern, err)
		}
		for _, g := range got {
			if strings.HasPrefix(g, "homard/data") || g == "homard/config.toml" || strings.HasPrefix(g, "datalink/") {
				t.Errorf("fs.Glob(%q) yields %q", pattern, g)
			}
		}
	}
	// An opened directory's own ReadDir filters as well, also n at a time.
	d, err := fsys.Open("homard")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var got []string
	for {
		entries, err := d.(fs.ReadDirFile).ReadDir(1)
		for _, e := range entries {
			got = append(got, e.Name())
		}
		if err != nil {
			break
		}
	}
	if !slices.Equal(got, []string{"notes.md"}) {
		t.Errorf("Open(homard).ReadDir(1)... = %q; want [notes.md]", got)
	}
}

// fstest checks the guarded FS is a consistent fs.FS: what ReadDir lists
// can be opened and stat'ed, Open(dir).ReadDir agrees with ReadDir, and
// the protected files are in neither.
func TestFSConsistent(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		o.Protected = []string{filepath.Join(o.Roots[1].Path, "private")}
	})
	write(t, f.docs, "guide.md", "g")
	write(t, f.docs, "a/b.md", "b")
	write(t, f.docs, "private/key", "SECRET")
	fsys, err := f.ws.FS("docs")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fsys.(guardedFS); !ok {
		t.Fatalf("FS(docs) is %T; want the guarded FS", fsys)
	}
	if err := fstest.TestFS(fsys, "guide.md", "a/b.md"); err != nil {
		t.Error(err)
	}
}

// The checks are on the real location of what was opened: a directory
// swapped for a symlink into the data directory after CheckRead passed is
// still refused.
func TestReadSwappedAfterCheck(t *testing.T) {
	f := protectedFixture(t)
	write(t, f.root, "tools/homard.db", "harmless")
	p := f.resolve(t, "tools/homard.db")
	dir := f.resolve(t, "tools")
	if err := f.ws.CheckRead(p); err != nil {
		t.Fatalf("CheckRead before swap: %v", err)
	}
	os.RemoveAll(filepath.Join(f.root, "tools"))
	symlink(t, "homard/data", filepath.Join(f.root, "tools"))
	if data, err := f.ws.ReadFile(p); !errors.Is(err, ErrProtected) {
		t.Errorf("ReadFile after swap = %q, %v; want ErrProtected", data, err)
	}
	if _, err := f.ws.ReadDir(dir); !errors.Is(err, ErrProtected) {
		t.Errorf("ReadDir after swap = %v; want ErrProtected", err)
	}
	// The check on the opened file alone (as after a race with guard):
	// openRead's descriptor check refuses even a path guard never saw.
	r := f.ws.roots[0]
	file, err := r.fs.Open("tools/homard.db")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if _, err := r.checkOpened(file, p, "read", true); !errors.Is(err, ErrProtected) {
		t.Errorf("checkOpened(tools/homard.db) = %v; want ErrProtected", err)
	}
}

func TestNoProtectedInsideRoot(t *testing.T) {
	f := newFixture(t)
	write(t, f.root, "a/b.txt", "b")
	if len(f.ws.roots[0].protected) != 0 {
		t.Fatalf("root main holds protected %q; want none (checkpoints live outside it)", f.ws.roots[0].protected)
	}
	fsys, err := f.ws.FS("main")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := fs.ReadFile(fsys, "a/b.txt"); err != nil || string(b) != "b" {
		t.Errorf("fs.ReadFile(a/b.txt) = %q, %v", b, err)
	}
	p := f.resolve(t, "a/b.txt")
	if err := f.ws.CheckRead(p); err != nil {
		t.Errorf("CheckRead(a/b.txt) = %v", err)
	}
	if got, err := f.ws.ReadFile(p); err != nil || string(got) != "b" {
		t.Errorf("ReadFile(a/b.txt) = %q, %v", got, err)
	}
}

// The XDG layout puts the default workspace inside the data directory: a
// protected directory that contains a root does not protect the root, but
// the protected paths beside it stay out of reach, and a root that is
// itself protected is wholly refused.
func TestRootInsideProtected(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "homard")
	wsDir := filepath.Join(data, "workspace")
	write(t, wsDir, "a.txt", "a")
	write(t, data, "homard.db", "SECRET")
	ws, err := Open(Options{
		Roots:         []Root{{Name: "main", Path: wsDir}, {Name: "data", Path: data}},
		CheckpointDir: filepath.Join(data, "checkpoints"),
		Protected:     []string{data},
	})
	if err == nil {
		ws.Close()
		t.Fatalf("Open with overlapping roots succeeded")
	}
	ws, err = Open(Options{
		Roots:         []Root{{Name: "main", Path: wsDir}},
		CheckpointDir: filepath.Join(data, "checkpoints"),
		Protected:     []string{data},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	p, err := ws.Resolve("a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ws.ReadFile(p); err != nil || string(got) != "a" {
		t.Errorf("ReadFile(a.txt) = %q, %v; want a", got, err)
	}
	if _, err := ws.writeFile(p, []byte("b")); err != nil {
		t.Errorf("WriteFile(a.txt) = %v; want success", err)
	}
	if pr := ws.roots[0].protected; len(pr) != 0 {
		t.Errorf("root main holds protected %q; want none: the data directory around it protects only what is beside it", pr)
	}

	whole, err := Open(Options{
		Roots:         []Root{{Name: "main", Path: data}},
		CheckpointDir: filepath.Join(base, "cps"),
		Protected:     []string{data},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	for _, rel := range []string{".", "homard.db", "workspace/a.txt"} {
		p, err := whole.Resolve(rel)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := whole.ReadDir(p); !errors.Is(err, ErrProtected) {
			t.Errorf("ReadDir(%q) in a protected root = %v; want ErrProtected", rel, err)
		}
		if _, err := whole.ReadFile(p); !errors.Is(err, ErrProtected) {
			t.Errorf("ReadFile(%q) in a protected root = %v; want ErrProtected", rel, err)
		}
		if rel == "." {
			continue // WriteFile refuses the root itself for another reason
		}
		if _, err := whole.writeFile(p, []byte("x")); !errors.Is(err, ErrProtected) {
			t.Errorf("WriteFile(%q) in a protected root = %v; want ErrProtected", rel, err)
		}
	}
}

func TestProtectedIn(t *testing.T) {
	r := &root{path: "/home/u/link", real: "/home/u/real"}
	got := protectedIn(r, []string{
		"/home/u/link/.config/homard/config.toml", // configured form
		"/home/u/real/.local/share/homard",        // real form
		"/home/u/real",                            // the root itself
		"/home/u",                                 // contains the root: not applied
		"/elsewhere/data",                         // outside
		"/home/u/realx/data",                      // a sibling with a common prefix
	})
	want := []string{".config/homard/config.toml", ".local/share/homard", "."}
	if !slices.Equal(got, want) {
		t.Errorf("protectedIn = %q; want %q", got, want)
	}
}

// BenchmarkReadFile compares a read in a root holding no protected path
// (no check at all) with one in a root holding homard's home (guard walk
// plus one readlink of /proc/self/fd).
func BenchmarkReadFile(b *testing.B) {
	for _, bc := range []struct {
		name      string
		protected bool
	}{{"plain", false}, {"protected-root", true}} {
		b.Run(bc.name, func(b *testing.B) {
			base := b.TempDir()
			o := Options{Roots: []Root{{Name: "main", Path: base}}, CheckpointDir: filepath.Join(b.TempDir(), "cp")}
			if bc.protected {
				o.Protected = []string{filepath.Join(base, "homard", "data")}
			}
			if err := os.MkdirAll(filepath.Join(base, "notes"), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(base, "notes", "small.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			ws, err := Open(o)
			if err != nil {
				b.Fatal(err)
			}
			defer ws.Close()
			p, err := ws.Resolve("notes/small.txt")
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := ws.CheckRead(p); err != nil {
					b.Fatal(err)
				}
				if _, err := ws.ReadFile(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
