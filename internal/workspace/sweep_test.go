package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSweepTemp: only WriteFile's own temp files, old enough and not
// locked by a writer, are removed; everything else that looks similar
// stays, and the walk stays out of .git and never follows a symlink.
func TestSweepTemp(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	f := newFixture(t, func(o *Options) { o.Now = func() time.Time { return now } })
	old, young := now.Add(-time.Hour), now.Add(-10*time.Second)
	mk := func(dir, rel string, mtime time.Time) string {
		p := write(t, dir, rel, "partial")
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const stray = ".homard-0123456789abcdef.tmp"
	removed := []string{
		mk(f.root, "sub/"+stray, old),
		mk(f.root, stray, old),
		mk(f.docs, "deep/er/"+stray, old),
	}
	kept := []string{
		mk(f.root, "young/"+stray, young),                          // another process may be writing it
		mk(f.root, "locked/"+stray, old),                           // a writer holds its lock
		mk(f.root, ".homard-0123456789abcdeg.tmp", old),            // not hex
		mk(f.root, ".homard-0123456789abcdef.tmp.bak", old),        // not the pattern
		mk(f.root, ".homard-0000000000000001-1a2b3c4d-0.tmp", old), // a change set's (RecoverChanges' business)
		mk(f.root, "notes.tmp", old),
		mk(f.root, ".git/"+stray, old),
	}
	lockedFile, err := os.Open(kept[1])
	if err != nil {
		t.Fatal(err)
	}
	defer lockedFile.Close()
	if err := unix.Flock(int(lockedFile.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	target := mk(f.outside, stray, old)
	symlink(t, target, filepath.Join(f.root, ".homard-fedcba9876543210.tmp")) // a symlink is not a temp file

	sw, err := f.ws.SweepTemp(SweepOptions{})
	if err != nil {
		t.Fatalf("SweepTemp: %v", err)
	}
	wantTargets := []string{stray, "sub/" + stray, "docs:deep/er/" + stray}
	slices.Sort(wantTargets)
	slices.Sort(sw.Removed)
	if !slices.Equal(sw.Removed, wantTargets) || sw.Left != 2 || sw.Truncated {
		t.Errorf("SweepTemp = %+v; want removed %v, 2 left (young, locked), not truncated", sw, wantTargets)
	}
	for _, p := range removed {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s still exists after the sweep (err %v)", p, err)
		}
	}
	for _, p := range append(kept, target, filepath.Join(f.root, ".homard-fedcba9876543210.tmp")) {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}

// TestSweepTempBounded: the walk stops after MaxEntries entries per root
// and says so.
func TestSweepTempBounded(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	f := newFixture(t, func(o *Options) { o.Now = func() time.Time { return now } })
	for i := range 20 {
		write(t, f.root, filepath.Join("many", string(rune('a'+i))), "x")
	}
	sw, err := f.ws.SweepTemp(SweepOptions{MaxEntries: 5})
	if err != nil || !sw.Truncated {
		t.Errorf("SweepTemp over 20 files with MaxEntries 5 = %+v, %v; want Truncated", sw, err)
	}
}

// TestWriteFileLeavesNoTemp: the twin of the sweep — an ordinary write
// leaves no temp file for anyone to sweep.
func TestWriteFileLeavesNoTemp(t *testing.T) {
	f := newFixture(t)
	p, err := f.ws.Resolve("a/b.md")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := f.ws.writeFile(p, []byte("hello")); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(filepath.Join(f.root, "a"))
	if err != nil || len(entries) != 1 {
		t.Errorf("folder after three writes holds %v, %v; want only b.md", entries, err)
	}
}

// BenchmarkSweepTemp is the start-up cost of the sweep over a root of
// 10,000 files in 100 folders with nothing to remove.
func BenchmarkSweepTemp(b *testing.B) {
	f := newFixture(b)
	for d := range 100 {
		dir := filepath.Join(f.root, "d", strconv.Itoa(d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for i := range 100 {
			if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".go"), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if sw, err := f.ws.SweepTemp(SweepOptions{}); err != nil || len(sw.Removed) != 0 {
			b.Fatal(sw, err)
		}
	}
}
