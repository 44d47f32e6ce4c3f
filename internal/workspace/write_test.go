package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileCreatesAndReplaces(t *testing.T) {
	f := newFixture(t)
	p := f.resolve(t, "notes/today.txt")
	id, err := f.ws.writeFile(p, []byte("one"))
	if err != nil || id != "" {
		t.Fatalf("WriteFile(new) = %q, %v; want no checkpoint, no error", id, err)
	}
	full := filepath.Join(f.root, "notes", "today.txt")
	if got := readString(t, full); got != "one" {
		t.Fatalf("content = %q; want one", got)
	}
	if err := os.Chmod(full, 0o600); err != nil {
		t.Fatal(err)
	}
	id, err = f.ws.writeFile(p, []byte("two"))
	if err != nil || id == "" {
		t.Fatalf("WriteFile(replace) = %q, %v; want a checkpoint id", id, err)
	}
	if got := readString(t, full); got != "two" {
		t.Errorf("content = %q; want two", got)
	}
	fi, _ := os.Stat(full)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after replace = %v; want 0600 kept", fi.Mode().Perm())
	}
	cps, err := f.ws.Checkpoints()
	if err != nil || len(cps) != 1 || cps[0].ID != id || cps[0].Target != "notes/today.txt" || cps[0].Size != 3 {
		t.Errorf("Checkpoints() = %+v, %v; want one for notes/today.txt of 3 bytes", cps, err)
	}
	// Writing into another root.
	if _, err := f.ws.writeFile(f.resolve(t, f.docs+"/g.md"), []byte("g")); err != nil {
		t.Errorf("WriteFile(docs:g.md): %v", err)
	}
	if got := readString(t, filepath.Join(f.docs, "g.md")); got != "g" {
		t.Errorf("docs/g.md = %q; want g", got)
	}
}

func TestWriteFileLeavesNoTempFiles(t *testing.T) {
	f := newFixture(t)
	p := f.resolve(t, "a.txt")
	for i := range 5 {
		if _, err := f.ws.writeFile(p, []byte(strings.Repeat("x", i))); err != nil {
			t.Fatal(err)
		}
	}
	// A failing write cleans up as well: here the final name turns into a
	// non-empty directory just before the rename.
	f.ws.testHook = func(point string) {
		if point == "rename" {
			write(t, f.root, "d/x", "")
		}
	}
	if _, err := f.ws.writeFile(f.resolve(t, "d"), []byte("x")); err == nil {
		t.Errorf("WriteFile(d) onto a directory succeeded; want an error")
	}
	entries, _ := os.ReadDir(f.root)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "a.txt d" {
		t.Errorf("root holds %q; want only a.txt d (no temp files)", got)
	}
	cpEntries, _ := os.ReadDir(f.cpDir)
	for _, e := range cpEntries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("checkpoint dir holds temp file %s", e.Name())
		}
	}
}

func TestWriteFileLimits(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxFileBytes = 4 })
	if _, err := f.ws.writeFile(f.resolve(t, "a"), []byte("12345")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("WriteFile(5 bytes, limit 4) = %v; want ErrTooLarge", err)
	}
	big := write(t, f.root, "big", "123456")
	if _, err := f.ws.writeFile(f.resolve(t, "big"), []byte("1")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("replacing a file that cannot be checkpointed = %v; want ErrTooLarge", err)
	}
	if got := readString(t, big); got != "123456" {
		t.Errorf("big = %q; want unchanged", got)
	}
	if _, err := f.ws.writeFile(f.resolve(t, "."), []byte("1")); !errors.Is(err, ErrNotRegular) {
		t.Errorf("WriteFile(.) = %v; want ErrNotRegular", err)
	}
}

func TestWriteFileProtected(t *testing.T) {
	var cfg, data string
	f := newFixture(t, func(o *Options) {
		cfg = filepath.Join(o.Roots[0].Path, "homard", "config.toml")
		data = filepath.Join(o.Roots[0].Path, "homard", "data")
		o.Protected = []string{cfg, data}
		o.CheckpointDir = filepath.Join(o.Roots[0].Path, "cps")
	})
	write(t, f.root, "homard/config.toml", "safe = true")
	os.MkdirAll(filepath.Join(f.root, ".git", "hooks"), 0o755)
	write(t, f.root, ".git/config", "[core]")
	symlink(t, "homard", filepath.Join(f.root, "cfglink"))
	symlink(t, ".git/hooks", filepath.Join(f.root, "hooks"))
	symlink(t, ".git", filepath.Join(f.root, "g"))
	tests := []struct {
		path string
		want error
	}{
		{".git/config", ErrProtected},
		{".git/hooks/pre-commit", ErrProtected},
		{".GIT/Hooks/pre-commit", ErrProtected},
		{".git/HOOKS", ErrProtected},
		{"sub/.git/config", ErrProtected},
		{".git/modules/x/hooks/post-checkout", ErrProtected},
		{".git", ErrProtected}, // a .git file can point git at other hooks
		{"homard/config.toml", ErrProtected},
		{"homard/data/homard.db", ErrProtected},
		{"homard/data", ErrProtected},
		{"cps/0000000000000001-00000000.json", ErrProtected},
		{cfg, ErrProtected},
		// Through symlinks: only the real location shows the protection.
		{"cfglink/config.toml", ErrProtected},
		{"hooks/pre-commit", ErrProtected},
		{"g/config", ErrProtected},
		{"hooks/new/dir/file", ErrProtected},
	}
	for _, tt := range tests {
		p := f.resolve(t, tt.path)
		// Git metadata is the gate's to grade (critical), not
		// CheckWrite's to refuse; restoring a file checkpoint, the one
		// writer outside the gate, still refuses it.
		wantCheck := tt.want
		if real, err := f.ws.Real(p); err == nil && gitElement(real.Rel) && real.Rel != ".git" {
			wantCheck = nil
		}
		if err := f.ws.CheckWrite(p); wantCheck == nil && err != nil || wantCheck != nil && err == nil {
			t.Errorf("CheckWrite(%q) = %v; want %v", tt.path, err, wantCheck)
		}
		if _, err := f.ws.writeFile(p, []byte("#!/bin/sh\nevil")); !errors.Is(err, tt.want) {
			t.Errorf("WriteFile(%q) = %v; want %v", tt.path, err, tt.want)
		}
	}
	if got := readString(t, filepath.Join(f.root, ".git", "config")); got != "[core]" {
		t.Errorf(".git/config = %q; want unchanged", got)
	}
	if got := readString(t, filepath.Join(f.root, "homard", "config.toml")); got != "safe = true" {
		t.Errorf("config.toml = %q; want unchanged", got)
	}
	if entries, _ := os.ReadDir(filepath.Join(f.root, ".git", "hooks")); len(entries) != 0 {
		t.Errorf(".git/hooks holds %d entries; want none", len(entries))
	}
	// Ordinary files next to protected ones are fine.
	for _, ok := range []string{"homard/notes.md", "gitnotes/config", "x.git/y"} {
		if _, err := f.ws.writeFile(f.resolve(t, ok), []byte("ok")); err != nil {
			t.Errorf("WriteFile(%q): %v; want success", ok, err)
		}
	}
}

func TestWriteFileRefusesFinalSymlink(t *testing.T) {
	f := newFixture(t)
	target := write(t, f.root, "real.txt", "real")
	symlink(t, "real.txt", filepath.Join(f.root, "link.txt"))
	p := f.resolve(t, "link.txt")
	if err := f.ws.CheckWrite(p); !errors.Is(err, ErrSymlink) {
		t.Errorf("CheckWrite(link.txt) = %v; want ErrSymlink", err)
	}
	if _, err := f.ws.writeFile(p, []byte("changed")); !errors.Is(err, ErrSymlink) {
		t.Errorf("WriteFile(link.txt) = %v; want ErrSymlink", err)
	}
	if got := readString(t, target); got != "real" {
		t.Errorf("real.txt = %q; want unchanged", got)
	}
	if fi, _ := os.Lstat(filepath.Join(f.root, "link.txt")); fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.txt is no longer a symlink")
	}
}

// The final-name check inside WriteFile itself (O_NOFOLLOW), not only the
// pre-check: the symlink appears after CheckWrite passed.
func TestWriteFileSymlinkAppearsAfterCheck(t *testing.T) {
	f := newFixture(t)
	os.MkdirAll(filepath.Join(f.root, ".git", "hooks"), 0o755)
	write(t, f.root, "pre-commit", "harmless")
	p := f.resolve(t, "pre-commit")
	f.ws.testHook = func(point string) {
		if point == "checked" {
			os.Remove(filepath.Join(f.root, "pre-commit"))
			symlink(t, ".git/hooks/pre-commit", filepath.Join(f.root, "pre-commit"))
		}
	}
	if _, err := f.ws.writeFile(p, []byte("evil")); !errors.Is(err, ErrSymlink) {
		t.Errorf("WriteFile after swap = %v; want ErrSymlink", err)
	}
	if _, err := os.Stat(filepath.Join(f.root, ".git", "hooks", "pre-commit")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".git/hooks/pre-commit exists (%v); want nothing written", err)
	}
}

// The parent directory is swapped for a symlink to .git/hooks (or to a
// directory outside the root) after every check on the path text and the
// pre-check passed; the check of the opened directory's real location
// must refuse.
func TestWriteFileParentSwappedAfterCheck(t *testing.T) {
	tests := []struct {
		name   string
		target func(f *fixture) string
		want   error
	}{
		{"git hooks", func(f *fixture) string { return ".git/hooks" }, ErrProtected},
		{"protected", func(f *fixture) string { return "private" }, ErrProtected},
		{"outside", func(f *fixture) string { return "../outside" }, ErrEscape},
		{"outside absolute", func(f *fixture) string { return f.outside }, ErrEscape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) {
				o.Protected = []string{filepath.Join(o.Roots[0].Path, "private")}
			})
			os.MkdirAll(filepath.Join(f.root, ".git", "hooks"), 0o755)
			os.Mkdir(filepath.Join(f.root, "private"), 0o755)
			os.Mkdir(filepath.Join(f.root, "tools"), 0o755)
			p := f.resolve(t, "tools/pre-commit")
			if err := f.ws.CheckWrite(p); err != nil {
				t.Fatalf("CheckWrite before swap: %v", err)
			}
			real := tt.target(f)
			f.ws.testHook = func(point string) {
				if point == "checked" {
					os.Remove(filepath.Join(f.root, "tools"))
					symlink(t, real, filepath.Join(f.root, "tools"))
				}
			}
			_, err := f.ws.writeFile(p, []byte("evil"))
			if err == nil {
				t.Fatalf("WriteFile(tools/pre-commit) after swap succeeded; want a refusal")
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("WriteFile after swap = %v; want %v", err, tt.want)
			}
			dir := real
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(f.root, dir)
			}
			if _, err := os.Stat(filepath.Join(dir, "pre-commit")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s/pre-commit exists (%v); want nothing written", dir, err)
			}
		})
	}
}

// Relative symlink to .git/hooks under a path Resolve already accepted and
// which existed at check time: the parent swap happens between Resolve and
// WriteFile, so the pre-check itself refuses.
func TestWriteFileParentSwappedAfterResolve(t *testing.T) {
	f := newFixture(t)
	os.MkdirAll(filepath.Join(f.root, ".git", "hooks"), 0o755)
	os.Mkdir(filepath.Join(f.root, "tools"), 0o755)
	p := f.resolve(t, "tools/pre-commit")
	os.Remove(filepath.Join(f.root, "tools"))
	symlink(t, ".git/hooks", filepath.Join(f.root, "tools"))
	if _, err := f.ws.writeFile(p, []byte("evil")); !errors.Is(err, ErrProtected) {
		t.Errorf("WriteFile = %v; want ErrProtected", err)
	}
	if _, err := os.Stat(filepath.Join(f.root, ".git", "hooks", "pre-commit")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".git/hooks/pre-commit exists (%v); want nothing written", err)
	}
}
