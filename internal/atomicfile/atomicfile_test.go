package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteReplacesWhole: the file holds the new bytes with the mode
// asked, its folder is made 0700 when missing, and no staged file is left.
func TestWriteReplacesWhole(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	p := filepath.Join(dir, "memory.md")
	for _, data := range []string{"first", "second, longer"} {
		if err := Write(p, []byte(data), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != data {
			t.Fatalf("after Write(%q): %q, %v", data, got, err)
		}
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v; want 0640", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v; want 0700", fi.Mode().Perm())
	}
	leftOver(t, dir, 1)
}

// TestPlaceNeverReplaces: Place puts a staged file where nothing is, and
// refuses (fs.ErrExist) where something is, which keeps its content; the
// twin Replace does replace it.
func TestPlaceNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.toml")
	s, err := Stage(p, []byte("new"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(s.Name()); string(got) != "new" {
		t.Fatalf("the staged file holds %q before it lands", got)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the path exists before Place: %v", err)
	}
	if err := s.Place(); err != nil {
		t.Fatal(err)
	}
	leftOver(t, dir, 1)
	s, err = Stage(p, []byte("other"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Discard()
	if err := s.Place(); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Place over an existing file = %v; want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "new" {
		t.Fatalf("a refused Place changed the file to %q", got)
	}
	if err := s.Replace(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "other" {
		t.Fatalf("after Replace: %q", got)
	}
	leftOver(t, dir, 1)
}

// leftOver fails unless dir holds exactly n names.
func leftOver(t *testing.T, dir string, n int) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != n {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("%s holds %q; want %d file(s), no staged one left", dir, names, n)
	}
}
