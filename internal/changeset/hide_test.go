package changeset

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/homard/homard/internal/workspace"
)

func newHideGate(t *testing.T) (*Gate, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(workspace.Options{Roots: []workspace.Root{{Name: "main", Path: root}}, CheckpointDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return New(ws, Options{DenyPaths: []string{"private/**"}}), root
}

func mk(t *testing.T, root string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHideListsSensitiveFiles: sensitive files, sensitive folders (whole)
// and what a deny rule matches are hidden, at any depth; symlinks and
// ordinary files are not (the twins).
func TestHideListsSensitiveFiles(t *testing.T) {
	g, root := newHideGate(t)
	mk(t, root, ".env", "app/.env.local", "home/.ssh/id_ed25519", "private/notes.md", "app/main.go", "README.md")
	if err := os.Symlink(".env", filepath.Join(root, "envlink")); err != nil {
		t.Fatal(err)
	}
	got, err := g.Hide("main", root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".env", "app/.env.local", "home/.ssh", "private"} // private/** matches the folder: hidden whole
	var rels []string
	for _, p := range got {
		r, _ := filepath.Rel(root, p)
		rels = append(rels, filepath.ToSlash(r))
	}
	slices.Sort(rels)
	if !slices.Equal(rels, want) {
		t.Errorf("Hide = %q; want %q", rels, want)
	}
}

// TestHideIsIncremental: a second Hide reads no folder again; a sensitive
// file added afterwards, deep or shallow, is found by the next one, which
// reads only the folders that changed.
func TestHideIsIncremental(t *testing.T) {
	g, root := newHideGate(t)
	for d := range 20 {
		mk(t, root, fmt.Sprintf("src/p%02d/a.go", d))
	}
	time.Sleep(2 * freshness)
	if _, err := g.Hide("main", root); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Hide("main", root); err != nil {
		t.Fatal(err)
	}
	if st, _ := g.HideCost("main"); st.Read != 0 || st.Folders != 22 {
		t.Errorf("second Hide: %+v; want 22 folders visited and none read again", st)
	}
	mk(t, root, "src/p07/.env")
	got, err := g.Hide("main", root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, filepath.Join(root, "src/p07/.env")) {
		t.Errorf("Hide after adding src/p07/.env = %q; want it listed", got)
	}
	if st, _ := g.HideCost("main"); st.Read != 1 {
		t.Errorf("Hide after one change read %d folders; want 1", st.Read)
	}
	// Removing it is seen too.
	os.Remove(filepath.Join(root, "src/p07/.env"))
	if got, _ := g.Hide("main", root); slices.Contains(got, filepath.Join(root, "src/p07/.env")) {
		t.Errorf("Hide after removing src/p07/.env still lists it")
	}
}

// TestHideHugeRoot: a root past 200,000 entries (a model can create them)
// is listed, not refused; a sensitive file among them is still found.
func TestHideHugeRoot(t *testing.T) {
	g, root := newHideGate(t)
	for d := range 201 {
		dir := filepath.Join(root, "gen", fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range 1000 {
			fd, err := os.Create(filepath.Join(dir, fmt.Sprintf("f%04d", f)))
			if err != nil {
				t.Fatal(err)
			}
			fd.Close()
		}
	}
	mk(t, root, "gen/d100/.env")
	got, err := g.Hide("main", root)
	if err != nil {
		t.Fatalf("Hide of a 201,000-entry root: %v", err)
	}
	if !slices.Contains(got, filepath.Join(root, "gen/d100/.env")) {
		t.Errorf("the .env among 201,000 entries was not listed")
	}
	st, _ := g.HideCost("main")
	if st.Entries < 201000 {
		t.Errorf("HideCost = %+v; want every entry counted", st)
	}
	t.Logf("cold listing: %+v", st)
}
