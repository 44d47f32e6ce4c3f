package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestReadFile(t *testing.T) {
	f := newFixture(t)
	write(t, f.root, "notes.txt", "hello\n")
	write(t, f.root, "sub/a.txt", "a")
	symlink(t, "sub/a.txt", filepath.Join(f.root, "link-in"))
	got, err := f.ws.ReadFile(f.resolve(t, "notes.txt"))
	if err != nil || string(got) != "hello\n" {
		t.Errorf("ReadFile(notes.txt) = %q, %v; want hello", got, err)
	}
	got, err = f.ws.ReadFile(f.resolve(t, "link-in"))
	if err != nil || string(got) != "a" {
		t.Errorf("ReadFile(link-in) = %q, %v; want a (symlink inside the root)", got, err)
	}
	if _, err := f.ws.ReadFile(f.resolve(t, "missing.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing.txt) = %v; want not exist", err)
	}
	if _, err := f.ws.ReadFile(f.resolve(t, "sub")); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile(sub) = %v; want ErrNotRegular", err)
	}
}

func TestReadFileSizeLimit(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxFileBytes = 10 })
	write(t, f.root, "small.txt", "0123456789")
	write(t, f.root, "big.txt", "0123456789x")
	if _, err := f.ws.ReadFile(f.resolve(t, "small.txt")); err != nil {
		t.Errorf("ReadFile(small.txt) at the limit: %v", err)
	}
	if _, err := f.ws.ReadFile(f.resolve(t, "big.txt")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile(big.txt) = %v; want ErrTooLarge", err)
	}
}

func TestReadNamedPipeDoesNotHang(t *testing.T) {
	f := newFixture(t)
	if err := unix.Mkfifo(filepath.Join(f.root, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, err := f.ws.ReadFile(f.resolve(t, "pipe")); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile(pipe) = %v; want ErrNotRegular", err)
	}
	if _, err := f.ws.ReadDir(f.resolve(t, "pipe")); !errors.Is(err, ErrNotDir) {
		t.Errorf("ReadDir(pipe) = %v; want ErrNotDir", err)
	}
	if _, err := f.ws.writeFile(f.resolve(t, "pipe/x"), []byte("x")); err == nil {
		t.Errorf("WriteFile(pipe/x) succeeded; want an error")
	}
}

// A symlink to /etc inside the workspace is refused at Resolve, and a Path
// resolved before the symlink appeared is refused when it is opened.
func TestSymlinkToEtc(t *testing.T) {
	f := newFixture(t)
	if _, err := f.ws.Resolve("etc/passwd"); err != nil {
		t.Fatalf("Resolve(etc/passwd) before the link: %v", err)
	}
	p := f.resolve(t, "etc/passwd")
	symlink(t, "/etc", filepath.Join(f.root, "etc"))
	if _, err := f.ws.Resolve("etc/passwd"); !errors.Is(err, ErrEscape) {
		t.Errorf("Resolve(etc/passwd) = %v; want ErrEscape", err)
	}
	if data, err := f.ws.ReadFile(p); !errors.Is(err, ErrEscape) {
		t.Errorf("ReadFile(etc/passwd) = %d bytes, %v; want ErrEscape", len(data), err)
	}
	if _, err := f.ws.Stat(p); !errors.Is(err, ErrEscape) {
		t.Errorf("Stat(etc/passwd) = %v; want ErrEscape", err)
	}
	if _, err := f.ws.ReadDir(f.ws.mustPath(t, "main", "etc")); !errors.Is(err, ErrEscape) {
		t.Errorf("ReadDir(etc) = %v; want ErrEscape", err)
	}
}

// mustPath builds a Path the way a plan body would carry it, without the
// Resolve-time symlink check, to exercise the open-time check.
func (w *Workspace) mustPath(t *testing.T, root, rel string) Path {
	t.Helper()
	return Path{Root: root, Rel: rel, inDefault: root == w.roots[0].name}
}

func TestSymlinkSwappedAfterResolve(t *testing.T) {
	f := newFixture(t)
	secret := write(t, f.outside, "secret.txt", "secret")
	write(t, f.root, "a.txt", "harmless")
	write(t, f.root, "dir/b.txt", "harmless")
	pa := f.resolve(t, "a.txt")
	pb := f.resolve(t, "dir/b.txt")
	// Swap the file for an (absolute) symlink and the directory for a
	// relative one, both leading outside.
	os.Remove(filepath.Join(f.root, "a.txt"))
	symlink(t, secret, filepath.Join(f.root, "a.txt"))
	os.RemoveAll(filepath.Join(f.root, "dir"))
	symlink(t, "../outside", filepath.Join(f.root, "dir"))
	write(t, f.outside, "b.txt", "outside b")

	for _, p := range []Path{pa, pb} {
		if data, err := f.ws.ReadFile(p); !errors.Is(err, ErrEscape) {
			t.Errorf("ReadFile(%v) after swap = %q, %v; want ErrEscape", p, data, err)
		}
		if _, err := f.ws.writeFile(p, []byte("pwned")); err == nil {
			t.Errorf("WriteFile(%v) after swap succeeded; want a refusal", p)
		}
	}
	if got := readString(t, secret); got != "secret" {
		t.Errorf("outside secret.txt = %q; want unchanged", got)
	}
	if got := readString(t, filepath.Join(f.outside, "b.txt")); got != "outside b" {
		t.Errorf("outside b.txt = %q; want unchanged", got)
	}
}

func TestReadDir(t *testing.T) {
	f := newFixture(t)
	write(t, f.root, "b.txt", "")
	write(t, f.root, "a/x.txt", "")
	symlink(t, "b.txt", filepath.Join(f.root, "c-link"))
	entries, err := f.ws.ReadDir(f.resolve(t, "."))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		if e.Type()&fs.ModeSymlink != 0 {
			n += "@"
		}
		names = append(names, n)
	}
	if got, want := strings.Join(names, " "), "a/ b.txt c-link@"; got != want {
		t.Errorf("ReadDir(.) = %q; want %q", got, want)
	}
	if _, err := f.ws.ReadDir(f.resolve(t, "b.txt")); !errors.Is(err, ErrNotDir) {
		t.Errorf("ReadDir(b.txt) = %v; want ErrNotDir", err)
	}
}

func TestFS(t *testing.T) {
	f := newFixture(t)
	write(t, f.docs, "guide.md", "g")
	symlink(t, f.outside, filepath.Join(f.docs, "out"))
	fsys, err := f.ws.FS("docs")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := fs.ReadFile(fsys, "guide.md"); err != nil || string(b) != "g" {
		t.Errorf("fs.ReadFile(guide.md) = %q, %v", b, err)
	}
	if _, err := fs.ReadDir(fsys, "out"); err == nil {
		t.Errorf("fs.ReadDir(out) through a symlink to outside succeeded; want an error")
	}
	if _, err := f.ws.FS("nope"); !errors.Is(err, ErrUnknownRoot) {
		t.Errorf("FS(nope) = %v; want ErrUnknownRoot", err)
	}
}
