package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveAccepts(t *testing.T) {
	f := newFixture(t)
	write(t, f.root, "notes.txt", "hi")
	write(t, f.root, "sub/deep/a.txt", "a")
	symlink(t, "sub", filepath.Join(f.root, "insub"))
	symlink(t, "missing", filepath.Join(f.root, "dangling"))
	tests := []struct {
		in, root, rel, target string
	}{
		{"notes.txt", "main", "notes.txt", "notes.txt"},
		{"./notes.txt", "main", "notes.txt", "notes.txt"},
		{"sub//deep/./a.txt", "main", "sub/deep/a.txt", "sub/deep/a.txt"},
		{"sub/deep/", "main", "sub/deep", "sub/deep"},
		{".", "main", ".", "."},
		{"new/dir/file.txt", "main", "new/dir/file.txt", "new/dir/file.txt"},
		{"insub/deep/a.txt", "main", "insub/deep/a.txt", "insub/deep/a.txt"},
		{"dangling", "main", "dangling", "dangling"},
		{"a\\..\\b", "main", "a\\..\\b", "a\\..\\b"}, // backslash is a literal character on Linux
		{"100%.txt", "main", "100%.txt", "100%.txt"},
		{f.root + "/notes.txt", "main", "notes.txt", "notes.txt"},
		{f.root, "main", ".", "."},
		{f.docs + "/guide.md", "docs", "guide.md", "docs:guide.md"},
		{f.docs + "/", "docs", ".", "docs:."},
	}
	for _, tt := range tests {
		got, err := f.ws.Resolve(tt.in)
		if err != nil {
			t.Errorf("Resolve(%q): %v; want %s:%s", tt.in, err, tt.root, tt.rel)
			continue
		}
		if got.Root != tt.root || got.Rel != tt.rel || got.Target() != tt.target {
			t.Errorf("Resolve(%q) = {%s %s} target %q; want {%s %s} target %q",
				tt.in, got.Root, got.Rel, got.Target(), tt.root, tt.rel, tt.target)
		}
	}
}

func TestResolveRefuses(t *testing.T) {
	f := newFixture(t)
	write(t, f.outside, "secret.txt", "secret")
	symlink(t, "/etc", filepath.Join(f.root, "etc"))
	symlink(t, "../outside", filepath.Join(f.root, "out"))
	symlink(t, "../outside/secret.txt", filepath.Join(f.root, "secret-link"))
	symlink(t, "../../../../../../nowhere", filepath.Join(f.root, "dangling-out"))
	tests := []struct {
		in   string
		want error
	}{
		{"", ErrEmptyPath},
		{"notes\x00.txt", ErrNUL},
		{"notes\n.txt", ErrControl},
		{"a\x1b[2Jb", ErrControl},
		{strings.Repeat("a/", 3000), ErrTooLong},
		{"../../etc/passwd", ErrDotDot},
		{"..", ErrDotDot},
		{"sub/../notes.txt", ErrDotDot}, // stays inside, still refused
		{"sub/..", ErrDotDot},
		{f.root + "/../outside/secret.txt", ErrDotDot},
		{"%2e%2e/etc/passwd", ErrEncoded},
		{"%2E%2E/etc/passwd", ErrEncoded},
		{"..%2fetc%2Fpasswd", ErrEncoded},
		{"..%5Cetc", ErrEncoded},
		{"a%00b", ErrEncoded},
		{"/etc/passwd", ErrOutside},
		{"/", ErrOutside},
		{f.outside + "/secret.txt", ErrOutside},
		{f.root + "x/notes.txt", ErrOutside}, // shares a prefix, not a parent
		{"etc/passwd", ErrEscape},
		{"etc", ErrEscape},
		{"out/secret.txt", ErrEscape},
		{"out/new.txt", ErrEscape}, // does not exist, still escapes
		{"secret-link", ErrEscape},
		{"dangling-out", ErrEscape},
	}
	for _, tt := range tests {
		got, err := f.ws.Resolve(tt.in)
		if !errors.Is(err, tt.want) {
			t.Errorf("Resolve(%.60q) = %+v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestResolveIn(t *testing.T) {
	f := newFixture(t)
	p, err := f.ws.ResolveIn("docs", "a/b.md")
	if err != nil || p.Target() != "docs:a/b.md" {
		t.Fatalf("ResolveIn(docs, a/b.md) = %v, %v; want docs:a/b.md", p, err)
	}
	p, err = f.ws.ResolveIn("main", "a/b.md")
	if err != nil || p.Target() != "a/b.md" {
		t.Fatalf("ResolveIn(main, a/b.md) = %v, %v; want a/b.md", p, err)
	}
	for _, tt := range []struct {
		root, rel string
		want      error
	}{
		{"nope", "a", ErrUnknownRoot},
		{"main", "../x", ErrDotDot},
		{"main", "/etc/passwd", ErrOutside},
		{"main", "a//b", ErrOutside},
		{"main", "a/./b", ErrOutside},
		{"main", "", ErrEmptyPath},
	} {
		if _, err := f.ws.ResolveIn(tt.root, tt.rel); !errors.Is(err, tt.want) {
			t.Errorf("ResolveIn(%q, %q) = %v; want %v", tt.root, tt.rel, err, tt.want)
		}
	}
}

func TestHandMadePathIsChecked(t *testing.T) {
	f := newFixture(t)
	write(t, f.outside, "secret.txt", "secret")
	for _, p := range []Path{
		{Root: "main", Rel: "../outside/secret.txt"},
		{Root: "main", Rel: f.outside + "/secret.txt"},
		{Root: "nope", Rel: "x"},
	} {
		if _, err := f.ws.ReadFile(p); err == nil {
			t.Errorf("ReadFile(%+v) succeeded; want a refusal", p)
		}
		if _, err := f.ws.writeFile(p, []byte("x")); err == nil {
			t.Errorf("WriteFile(%+v) succeeded; want a refusal", p)
		}
	}
	if got := readString(t, filepath.Join(f.outside, "secret.txt")); got != "secret" {
		t.Errorf("outside file changed to %q", got)
	}
}

func TestDisplay(t *testing.T) {
	f := newFixture(t)
	for _, in := range []string{"a/b.txt", f.docs + "/c.md"} {
		p := f.resolve(t, in)
		back := f.resolve(t, f.ws.Display(p))
		if back != p {
			t.Errorf("Resolve(Display(%v)) = %v; want the same path", p, back)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	cp := filepath.Join(dir, "cp")
	os.Mkdir(filepath.Join(dir, "a"), 0o755)
	os.Mkdir(filepath.Join(dir, "a", "b"), 0o755)
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"no roots", Options{CheckpointDir: cp}, "no roots"},
		{"no checkpoint dir", Options{Roots: []Root{{Name: "main", Path: dir}}}, "checkpoint directory"},
		{"missing root", Options{Roots: []Root{{Name: "main", Path: filepath.Join(dir, "gone")}}, CheckpointDir: cp}, `root "main"`},
		{"bad name", Options{Roots: []Root{{Name: "a:b", Path: dir}}, CheckpointDir: cp}, "invalid root name"},
		{"duplicate", Options{Roots: []Root{{Name: "a", Path: filepath.Join(dir, "a")}, {Name: "a", Path: filepath.Join(dir, "a", "b")}}, CheckpointDir: cp}, "twice"},
		{"overlap", Options{Roots: []Root{{Name: "a", Path: filepath.Join(dir, "a")}, {Name: "b", Path: filepath.Join(dir, "a", "b")}}, CheckpointDir: cp}, "overlap"},
		{"limits", Options{Roots: []Root{{Name: "main", Path: dir}}, CheckpointDir: cp, MaxFileBytes: 100, MaxCheckpointBytes: 10}, "below the file size limit"},
	}
	for _, tt := range tests {
		ws, err := Open(tt.o)
		if err == nil {
			ws.Close()
			t.Errorf("%s: Open succeeded; want an error containing %q", tt.name, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Open error %q; want it to contain %q", tt.name, err, tt.want)
		}
	}
}

// A root whose configured path lies lexically inside another root's
// configured path (through a symlink) gets the absolute paths under it.
func TestResolveLongestRootWins(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	os.MkdirAll(filepath.Join(base, "real-a"), 0o755)
	os.MkdirAll(filepath.Join(base, "real-b"), 0o755)
	symlink(t, "real-a", filepath.Join(base, "ws"))
	symlink(t, "../real-b", filepath.Join(base, "real-a", "b"))
	ws, err := Open(Options{
		Roots:         []Root{{Name: "b", Path: filepath.Join(base, "ws", "b")}, {Name: "a", Path: filepath.Join(base, "ws")}},
		CheckpointDir: filepath.Join(base, "cp"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	p, err := ws.Resolve(filepath.Join(base, "ws", "b", "x.txt"))
	if err != nil || p.Root != "b" || p.Rel != "x.txt" {
		t.Errorf("Resolve(ws/b/x.txt) = %+v, %v; want b:x.txt", p, err)
	}
}
