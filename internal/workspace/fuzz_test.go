package workspace

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

var resolveErrors = []error{
	ErrEmptyPath, ErrNUL, ErrControl, ErrTooLong, ErrDotDot, ErrEncoded, ErrOutside, ErrEscape,
}

// FuzzResolve checks confinement whatever the model sends: if Resolve and
// then Stat or ReadFile succeed, the file really lies under the root.
func FuzzResolve(f *testing.F) {
	base, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	rootDir := filepath.Join(base, "main")
	docsDir := filepath.Join(base, "docs")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{rootDir + "/sub/deep", docsDir, outside, rootDir + "/.git/hooks"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for _, p := range []string{rootDir + "/notes.txt", rootDir + "/sub/deep/a.txt", outside + "/secret", docsDir + "/g.md"} {
		os.WriteFile(p, []byte("x"), 0o644)
	}
	for link, target := range map[string]string{
		"etc": "/etc", "out": "../outside", "sub/up": "../..", "sub/deep/back": "../../sub",
		"loop": "loop", "self": ".", "secret": "../outside/secret", "in": "sub/deep/a.txt",
		"hooks": ".git/hooks", "dangling": "nowhere/../../x",
	} {
		os.Symlink(target, filepath.Join(rootDir, link))
	}
	ws, err := Open(Options{
		Roots:         []Root{{Name: "main", Path: rootDir}, {Name: "docs", Path: docsDir}},
		CheckpointDir: filepath.Join(base, "cp"),
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ws.Close() })
	roots := map[string]string{"main": rootDir, "docs": docsDir}

	for _, s := range []string{
		"notes.txt", "../../etc/passwd", "%2e%2e/etc/passwd", "/etc/passwd", "etc/passwd",
		"out/secret", "sub/up/outside/secret", "sub/deep/back/deep/a.txt", "self/self/in",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, in := range []string{s, rootDir + "/" + s, docsDir + s} {
			p, err := ws.Resolve(in)
			if err != nil {
				known := false
				for _, e := range resolveErrors {
					known = known || errors.Is(err, e)
				}
				if !known {
					t.Fatalf("Resolve(%q) = %v; want one of the sentinel errors", in, err)
				}
				continue
			}
			if p.Rel != path.Clean(p.Rel) || strings.HasPrefix(p.Rel, "/") || p.Rel == ".." || strings.HasPrefix(p.Rel, "../") {
				t.Fatalf("Resolve(%q).Rel = %q; want a clean relative path", in, p.Rel)
			}
			rootPath := roots[p.Root]
			full := filepath.Join(rootPath, filepath.FromSlash(p.Rel))
			_, statErr := ws.Stat(p)
			_, readErr := ws.ReadFile(p)
			if statErr != nil && readErr != nil {
				continue
			}
			real, err := filepath.EvalSymlinks(full)
			if err != nil {
				t.Fatalf("Resolve(%q) = %v opened, but EvalSymlinks(%s): %v", in, p, full, err)
			}
			if !within(rootPath, real) {
				t.Fatalf("Resolve(%q) = %v opened %s, outside root %s", in, p, real, rootPath)
			}
		}
	})
}
