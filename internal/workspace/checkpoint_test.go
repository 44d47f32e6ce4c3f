package workspace

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckpointPruningByCount(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxCheckpoints = 3 })
	p := f.resolve(t, "a.txt")
	var ids []string
	for i := range 6 {
		id, err := f.ws.writeFile(p, fmt.Appendf(nil, "v%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if id != "" {
			ids = append(ids, id)
		}
	}
	cps, err := f.ws.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cp := range cps {
		got = append(got, cp.ID)
	}
	want := []string{ids[4], ids[3], ids[2]} // newest first
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Checkpoints() = %v; want the 3 newest %v", got, want)
	}
	if !cps[0].Time.After(cps[1].Time) {
		t.Errorf("newest checkpoint time %v is not after %v", cps[0].Time, cps[1].Time)
	}
	entries, _ := os.ReadDir(f.cpDir)
	var files []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".lock") && e.Name() != appliedDir {
			files = append(files, e.Name())
		}
	}
	if len(files) != 6 {
		t.Errorf("checkpoint dir holds %d files; want 6 (3 × metadata + content)", len(files))
	}
}

func TestCheckpointPruningByBytes(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxFileBytes = 10; o.MaxCheckpointBytes = 25 })
	p := f.resolve(t, "a.txt")
	for _, c := range []string{"0123456789", "abcdefghij", "ABCDEFGHIJ", "klmnopqrst", "x"} {
		if _, err := f.ws.writeFile(p, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	// Saved: 0123456789, abcdefghij, ABCDEFGHIJ, klmnopqrst (10 bytes each);
	// 25 bytes keep the newest two.
	cps, err := f.ws.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, cp := range cps {
		total += cp.Size
	}
	if len(cps) != 2 || total > 25 {
		t.Fatalf("Checkpoints() = %d checkpoints, %d bytes; want 2 within 25 bytes", len(cps), total)
	}
	pv, err := f.ws.RollbackPreview(cps[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pv.Diff, "+klmnopqrst") {
		t.Errorf("newest checkpoint preview diff = %q; want it to restore klmnopqrst", pv.Diff)
	}
}

func TestRollback(t *testing.T) {
	f := newFixture(t)
	p := f.resolve(t, "notes.md")
	full := filepath.Join(f.root, "notes.md")
	f.ws.writeFile(p, []byte("line 1\nline 2\nline 3\n"))
	id, err := f.ws.writeFile(p, []byte("line 1\nline two\nline 3\n"))
	if err != nil || id == "" {
		t.Fatalf("WriteFile = %q, %v", id, err)
	}
	pv, err := f.ws.RollbackPreview(id)
	if err != nil {
		t.Fatal(err)
	}
	if !pv.Exists || pv.Same || pv.CurrentSize != 23 || pv.Checkpoint.Size != 21 {
		t.Errorf("preview = %+v; want an existing, different 23-byte file and 21 saved bytes", pv)
	}
	if !strings.Contains(pv.Diff, "-line two\n+line 2\n") {
		t.Errorf("preview diff = %q; want -line two / +line 2", pv.Diff)
	}
	if s := pv.String(); !strings.Contains(s, pv.SavedSHA256()[:12]) || !strings.Contains(s, "notes.md") {
		t.Errorf("preview text = %q; want the target and the hash to confirm with", s)
	}

	for _, bad := range []string{"", "0000000000", pv.SavedSHA256()[:7], pv.CurrentSHA256} {
		if err := f.ws.RollbackCheckpoint(id, bad); !errors.Is(err, ErrHashMismatch) {
			t.Errorf("Rollback(%q) = %v; want ErrHashMismatch", bad, err)
		}
	}
	if got := readString(t, full); got != "line 1\nline two\nline 3\n" {
		t.Fatalf("content after refused rollbacks = %q; want unchanged", got)
	}
	if err := f.ws.RollbackCheckpoint(id, strings.ToUpper(pv.SavedSHA256()[:8])); err != nil {
		t.Fatalf("Rollback with an 8-digit prefix: %v", err)
	}
	if got := readString(t, full); got != "line 1\nline 2\nline 3\n" {
		t.Errorf("content after rollback = %q; want the saved one", got)
	}
	cps, _ := f.ws.Checkpoints()
	if len(cps) != 2 || cps[0].SHA256 != pv.CurrentSHA256 {
		t.Errorf("after rollback the newest checkpoint = %+v; want the pre-rollback content (%s)", cps, pv.CurrentSHA256)
	}
}

func TestRollbackRecreatesMissingFile(t *testing.T) {
	f := newFixture(t)
	p := f.resolve(t, "gone.txt")
	f.ws.writeFile(p, []byte("old"))
	id, _ := f.ws.writeFile(p, []byte("new"))
	os.Remove(filepath.Join(f.root, "gone.txt"))
	pv, err := f.ws.RollbackPreview(id)
	if err != nil || pv.Exists {
		t.Fatalf("RollbackPreview = %+v, %v; want Exists false", pv, err)
	}
	if err := f.ws.RollbackCheckpoint(id, pv.SavedSHA256()); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(f.root, "gone.txt")); got != "old" {
		t.Errorf("content = %q; want old", got)
	}
}

func TestRollbackRefusals(t *testing.T) {
	f := newFixture(t)
	p := f.resolve(t, "a.txt")
	f.ws.writeFile(p, []byte("old"))
	id, _ := f.ws.writeFile(p, []byte("new"))
	cps, _ := f.ws.Checkpoints()
	hash := cps[0].SHA256
	for _, bad := range []string{"../../etc/passwd", "0000000000000000-00000000", id + ".json", ""} {
		if _, err := f.ws.RollbackPreview(bad); !errors.Is(err, ErrCheckpointNotFound) {
			t.Errorf("RollbackPreview(%q) = %v; want ErrCheckpointNotFound", bad, err)
		}
		if err := f.ws.RollbackCheckpoint(bad, hash); !errors.Is(err, ErrCheckpointNotFound) {
			t.Errorf("Rollback(%q) = %v; want ErrCheckpointNotFound", bad, err)
		}
	}
	// Content changed on disk: the recorded hash no longer matches.
	if err := os.WriteFile(filepath.Join(f.cpDir, id+".blob"), []byte("tampered"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.ws.RollbackCheckpoint(id, hash); !errors.Is(err, ErrCheckpointCorrupt) {
		t.Errorf("Rollback(tampered) = %v; want ErrCheckpointCorrupt", err)
	}
	if got := readString(t, filepath.Join(f.root, "a.txt")); got != "new" {
		t.Errorf("a.txt = %q; want unchanged", got)
	}
}

func TestDiff(t *testing.T) {
	tests := []struct {
		cur, saved, want string
	}{
		{"a\nb\nc\n", "a\nB\nc\n", "@@ -1,2 +1,2 @@\n a\n-b\n+B\n c\n"},
		{"", "x\n", "@@ -1,0 +1,1 @@\n+x\n"},
		{"a\n", "a\nb\n", "@@ -1,1 +1,2 @@\n a\n+b\n"},
		{"a\x00", "b", "binary content: no line diff shown\n"},
	}
	for _, tt := range tests {
		if got := diff([]byte(tt.cur), []byte(tt.saved)); got != tt.want {
			t.Errorf("diff(%q, %q) = %q; want %q", tt.cur, tt.saved, got, tt.want)
		}
	}
	long := diff(nil, []byte(strings.Repeat("x\n", 100)))
	if n := strings.Count(long, "\n"); n > diffMaxLines+3 {
		t.Errorf("diff of 100 lines has %d lines; want it cut near %d", n, diffMaxLines)
	}
}

// An id is never a path: metadata planted next to the checkpoint
// directory cannot be reached with "../".
func TestRollbackIDIsNotAPath(t *testing.T) {
	f := newFixture(t)
	planted := filepath.Dir(f.cpDir)
	content := []byte("planted")
	sum := fmt.Sprintf("%x", sha256.Sum256(content))
	meta := fmt.Sprintf(`{"id":"../evil","root":"main","rel":"evil.txt","target":"evil.txt","size":7,"sha256":%q}`, sum)
	os.WriteFile(filepath.Join(planted, "evil.json"), []byte(meta), 0o600)
	os.WriteFile(filepath.Join(planted, "evil.blob"), content, 0o600)
	if err := f.ws.RollbackCheckpoint("../evil", sum); !errors.Is(err, ErrCheckpointNotFound) {
		t.Errorf("Rollback(../evil) = %v; want ErrCheckpointNotFound", err)
	}
	if _, err := os.Stat(filepath.Join(f.root, "evil.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("evil.txt exists (%v); want nothing written", err)
	}
}
