package workspace

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// editTree is a root with a bit of everything a command changes.
func editTree(t *testing.T, root string) {
	t.Helper()
	write(t, root, "a.txt", "old a\n")
	write(t, root, "gone.txt", "gone\n")
	write(t, root, "mode.sh", "#!/bin/sh\n")
	write(t, root, "olddir/x", "x\n")
	write(t, root, "olddir/sub/y", "y\n")
	write(t, root, "keep/k", "k\n")
	write(t, root, "keep/stale", "stale\n")
	write(t, root, "typechange", "a file that becomes a folder\n")
	symlink(t, "a.txt", filepath.Join(root, "link"))
	if err := os.Chmod(filepath.Join(root, "a.txt"), 0o664); err != nil {
		t.Fatal(err)
	}
}

// editUpper edits, creates, deletes, renames a folder, changes a mode,
// replaces a folder's content and a file's type, and retargets a symlink.
func editUpper() upper {
	return upper{}.
		fileMode("a.txt", "new a\n", 0o664).
		file("new/deep/n.txt", "n\n").
		whiteout("gone.txt").
		fileMode("mode.sh", "#!/bin/sh\n", 0o755).
		whiteout("olddir").
		file("newdir/x", "x\n").
		file("newdir/sub/y", "y\n").
		opaqueDir("keep").
		file("keep/k", "k2\n").
		dir("typechange").
		file("typechange/f", "f\n").
		symlink("link", "new/deep/n.txt").
		hardlink("new/copy.txt", "new/deep/n.txt").
		fileMode("odd", "x", 0o4777)
}

func TestApplyAndRollback(t *testing.T) {
	f := newFixture(t)
	editTree(t, f.root)
	before := snapshot(t, f.root)
	since := sinceNow(t)
	cs := editUpper().read(t)
	res, err := applyAll(t, f, cs, since, GradeCritical, GradeOptions{RunsCode: true})
	if err != nil {
		t.Fatalf("ApplyChanges: %v\n%s", err, strings.Join(res.Graded.Paths(), "\n"))
	}
	after := snapshot(t, f.root)
	want := map[string]string{
		"a.txt":          `file 0664 "new a\n"`,
		"new/deep/n.txt": `file 0644 "n\n"`,
		"new/copy.txt":   `file 0644 "n\n"`,
		"gone.txt":       "",
		"mode.sh":        `file 0755 "#!/bin/sh\n"`,
		"olddir":         "",
		"olddir/x":       "",
		"newdir/x":       `file 0644 "x\n"`,
		"newdir/sub/y":   `file 0644 "y\n"`,
		"keep/k":         `file 0644 "k2\n"`,
		"keep/stale":     "",
		"typechange":     "dir 0755",
		"typechange/f":   `file 0644 "f\n"`,
		"link":           "symlink -> new/deep/n.txt",
		"odd":            `file 0755 "x"`, // no setuid, no group/other write
	}
	for rel, w := range want {
		if after[rel] != w {
			t.Errorf("after apply %s = %q; want %q", rel, after[rel], w)
		}
	}
	if res.CheckpointID == "" {
		t.Fatal("ApplyChanges returned no checkpoint id")
	}
	cps, err := f.ws.Checkpoints()
	if err != nil || len(cps) != 1 || cps[0].Kind != KindChanges || !cps[0].Pinned {
		t.Fatalf("Checkpoints() = %+v, %v; want one pinned change-set checkpoint", cps, err)
	}
	pv, err := f.ws.RollbackPreview(res.CheckpointID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`remove file "new/deep/n.txt"`, `restore file "a.txt"`, `recreate file "olddir/sub/y"`, `recreate file "keep/stale"`} {
		if !strings.Contains(pv.String(), s) {
			t.Errorf("preview does not list %s:\n%s", s, pv)
		}
	}
	if err := f.ws.RollbackCheckpoint(res.CheckpointID, "00000000"); !errors.Is(err, ErrHashMismatch) {
		t.Errorf("Rollback with a wrong hash = %v; want ErrHashMismatch", err)
	}
	if err := f.ws.RollbackCheckpoint(res.CheckpointID, pv.SavedSHA256()[:12]); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	if d := diffSnapshots(before, snapshot(t, f.root)); d != "" {
		t.Errorf("rollback did not restore the tree exactly:\n%s", d)
	}
	if err := f.ws.RollbackCheckpoint(res.CheckpointID, pv.SavedSHA256()); err == nil {
		t.Error("a second Rollback succeeded; want an error saying it was rolled back")
	}
	if cps, _ := f.ws.Checkpoints(); len(cps) != 1 || cps[0].Pinned {
		t.Errorf("after rollback the checkpoint is %+v; want it kept and unpinned", cps)
	}
}

// TestApplyRefusals: nothing is applied above the approved grade, with
// a different digest, or with a conflict; refused entries are skipped
// only under a critical approval.
func TestApplyRefusals(t *testing.T) {
	attack := upper{}.file("ok.txt", "fine").file(".vscode/settings.json", "{}").special("pipe", tar.TypeFifo, 0, nil)
	cases := []struct {
		name     string
		up       upper
		approved Grade
		digest   string
		edit     func(t *testing.T, root string) // after since: a conflict
		wantErr  error
		applied  []string // must exist afterwards
	}{
		{name: "critical approved as medium", up: attack, approved: GradeMedium, wantErr: ErrNotApproved},
		{name: "different digest", up: upper{}.file("ok.txt", "fine"), approved: GradeCritical, digest: "0123", wantErr: ErrNotApproved},
		{name: "conflict", up: upper{}.file("a.txt", "mine"), approved: GradeCritical, wantErr: ErrConflict,
			edit: func(t *testing.T, root string) { write(t, root, "a.txt", "the owner's edit") }},
		{name: "conflict by creation", up: upper{}.file("b.txt", "mine"), approved: GradeCritical, wantErr: ErrConflict,
			edit: func(t *testing.T, root string) { write(t, root, "b.txt", "the owner's new file") }},
		{name: "twin: critical approved, pipe skipped", up: attack, approved: GradeCritical, applied: []string{"ok.txt", ".vscode/settings.json"}},
		{name: "twin: medium approved", up: upper{}.file("ok.txt", "fine"), approved: GradeMedium, applied: []string{"ok.txt"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			write(t, f.root, "a.txt", "a")
			since := sinceNow(t)
			if tc.edit != nil {
				tc.edit(t, f.root)
			}
			before := snapshot(t, f.root)
			cs := tc.up.read(t)
			res, err := f.ws.ApplyChanges(context.Background(), "main", cs, since, ApplyOptions{Approved: tc.approved, Digest: tc.digest, Grade: GradeOptions{RunsCode: true}})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("ApplyChanges = %v; want %v", err, tc.wantErr)
				}
				if d := diffSnapshots(before, snapshot(t, f.root)); d != "" {
					t.Errorf("a refused change set changed the tree:\n%s", d)
				}
				return
			}
			if err != nil {
				t.Fatalf("ApplyChanges: %v", err)
			}
			for _, rel := range tc.applied {
				if _, err := os.Lstat(filepath.Join(f.root, rel)); err != nil {
					t.Errorf("%s not applied: %v", rel, err)
				}
			}
			if _, err := os.Lstat(filepath.Join(f.root, "pipe")); err == nil {
				t.Error("the FIFO was created")
			}
			if tc.approved == GradeCritical && len(res.Skipped) != 1 {
				t.Errorf("Skipped = %v; want the FIFO", res.Skipped)
			}
		})
	}
}

// TestApplyNeverFollowsSymlinks: the owner's symlink to a folder outside
// the root is replaced, never written through.
func TestApplyNeverFollowsSymlinks(t *testing.T) {
	f := newFixture(t)
	symlink(t, f.outside, filepath.Join(f.root, "out"))
	since := sinceNow(t)
	cs := upper{}.dir("out").file("out/x", "x").read(t)
	g, err := f.ws.Grade("main", cs, GradeOptions{RunsCode: true})
	if err != nil {
		t.Fatal(err)
	}
	if g.Grade != GradeCritical {
		t.Errorf("grade = %s; want critical (it replaces the owner's symlink leading out)", g.Grade)
	}
	if _, err := applyAll(t, f, cs, since, GradeCritical, GradeOptions{RunsCode: true}); err != nil {
		t.Fatalf("ApplyChanges: %v", err)
	}
	if got := snapshot(t, f.outside); len(got) != 1 {
		t.Errorf("the folder outside the root changed: %v", got)
	}
	if fi, err := os.Lstat(filepath.Join(f.root, "out")); err != nil || !fi.IsDir() {
		t.Errorf("out is %v, %v; want a real folder in the root", fi, err)
	}
}

// TestRollbackConflict: a file the owner changed after the command is
// left alone and named; the rest is restored.
func TestRollbackConflict(t *testing.T) {
	f := newFixture(t)
	write(t, f.root, "a.txt", "a")
	since := sinceNow(t)
	res, err := applyAll(t, f, upper{}.file("a.txt", "b").file("n.txt", "n").read(t), since, GradeMedium, GradeOptions{RunsCode: true})
	if err != nil {
		t.Fatal(err)
	}
	write(t, f.root, "n.txt", "the owner's edit")
	pv, _ := f.ws.RollbackPreview(res.CheckpointID)
	err = f.ws.RollbackCheckpoint(res.CheckpointID, pv.SavedSHA256())
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), `"n.txt"`) {
		t.Errorf("Rollback = %v; want ErrConflict naming n.txt", err)
	}
	if got := readString(t, filepath.Join(f.root, "a.txt")); got != "a" {
		t.Errorf("a.txt = %q; want it restored to %q", got, "a")
	}
	if got := readString(t, filepath.Join(f.root, "n.txt")); got != "the owner's edit" {
		t.Errorf("n.txt = %q; want the owner's edit kept", got)
	}
}

// TestRecoverAfterCrash stops ApplyChanges after step k as a crash would
// and checks that RecoverChanges leaves the tree as before, with no temp
// files, and that the checkpoint held the old content meanwhile.
func TestRecoverAfterCrash(t *testing.T) {
	for _, k := range []int{0, 3, 7, 12, 1000} { // 1000: no crash
		t.Run(fmt.Sprintf("stop after step %d", k), func(t *testing.T) {
			f := newFixture(t)
			editTree(t, f.root)
			before := snapshot(t, f.root)
			since := sinceNow(t)
			crash := errors.New("simulated crash")
			f.ws.changesHook = func(i int) error {
				if i == k {
					return crash
				}
				return nil
			}
			_, err := applyAll(t, f, editUpper().read(t), since, GradeCritical, GradeOptions{RunsCode: true})
			f.ws.changesHook = nil
			if k == 1000 {
				if err != nil {
					t.Fatalf("ApplyChanges: %v", err)
				}
			} else if !errors.Is(err, crash) {
				t.Fatalf("ApplyChanges = %v; want the simulated crash", err)
			}
			if k != 1000 {
				// Mid-crash: the checkpoint is listed with its content.
				cps, _ := f.ws.Checkpoints()
				if len(cps) != 1 || !cps[0].Pinned {
					t.Fatalf("after the crash Checkpoints() = %+v; want the pinned change set", cps)
				}
				saved, _ := os.ReadDir(f.ws.cps.setDir(cps[0].ID))
				if len(saved) < 2 {
					t.Errorf("the change set folder holds %d entries; want the saved old content", len(saved))
				}
			}
			rec, err := f.ws.RecoverChanges(context.Background())
			if err != nil {
				t.Fatalf("RecoverChanges: %v", err)
			}
			if k == 1000 {
				if len(rec.RolledBack) != 0 {
					t.Errorf("RecoverChanges rolled back a completed change set: %+v", rec)
				}
				return
			}
			if len(rec.RolledBack) != 1 || len(rec.Conflicts) != 0 {
				t.Errorf("RecoverChanges = %+v; want one change set rolled back", rec)
			}
			if d := diffSnapshots(before, snapshot(t, f.root)); d != "" {
				t.Errorf("after recovery the tree differs from before:\n%s", d)
			}
			if cps, _ := f.ws.Checkpoints(); len(cps) != 0 {
				t.Errorf("after recovery Checkpoints() = %+v; want none", cps)
			}
		})
	}
}

// TestRecoverSkipsInFlight: a change set whose lock is held is another
// process's, applying right now; a folder without a journal whose lock is
// free is a leftover.
func TestRecoverSkipsInFlight(t *testing.T) {
	f := newFixture(t)
	busy := filepath.Join(f.cpDir, "00000000000000aa-00000000"+changesDirSuffix)
	left := filepath.Join(f.cpDir, "00000000000000bb-00000000"+changesDirSuffix)
	for _, d := range []string{busy, left} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	lk, err := lockFile(context.Background(), filepath.Join(busy, ".lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	rec, err := f.ws.RecoverChanges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Busy) != 1 || rec.Removed != 1 {
		t.Errorf("RecoverChanges = %+v; want one busy, one removed", rec)
	}
	if _, err := os.Stat(busy); err != nil {
		t.Errorf("the in-flight folder was removed: %v", err)
	}
}

// TestLockRootSerialises: a second LockRoot waits for the first.
func TestLockRootSerialises(t *testing.T) {
	f := newFixture(t)
	first, err := f.ws.LockRoot(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.ws.LockRoot(ctx, "main"); !errors.Is(err, context.Canceled) {
		t.Errorf("LockRoot while held = %v; want it to wait until ctx ends", err)
	}
	if l, err := f.ws.LockRoot(ctx, "docs"); err != nil {
		t.Errorf("LockRoot of another root = %v; want it free", err)
	} else {
		l.Unlock()
	}
	first.Unlock()
	second, err := f.ws.LockRoot(context.Background(), "main")
	if err != nil {
		t.Fatalf("LockRoot after Unlock: %v", err)
	}
	second.Unlock()
}

func TestReadChangesRejectsMalformed(t *testing.T) {
	hdr := func(name string, typ byte, link string) []byte {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		tw.WriteHeader(&tar.Header{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: time.Unix(0, 0)})
		tw.WriteHeader(&tar.Header{Name: "f", Typeflag: tar.TypeReg, Mode: 0o644, ModTime: time.Unix(0, 0)})
		tw.WriteHeader(&tar.Header{Name: name, Typeflag: typ, Mode: 0o644, Linkname: link, ModTime: time.Unix(0, 0)})
		tw.Close()
		return buf.Bytes()
	}
	cases := []struct {
		name   string
		stream []byte
		opts   ReadOptions
		want   error
	}{
		{"absolute", hdr("/etc/passwd", tar.TypeReg, ""), ReadOptions{}, ErrBadChangeStream},
		{"dot-dot", hdr("../x", tar.TypeReg, ""), ReadOptions{}, ErrBadChangeStream},
		{"unclean", hdr("d//x", tar.TypeReg, ""), ReadOptions{}, ErrBadChangeStream},
		{"missing parent", hdr("e/x", tar.TypeReg, ""), ReadOptions{}, ErrBadChangeStream},
		{"under a file", hdr("f/x", tar.TypeReg, ""), ReadOptions{}, ErrBadChangeStream},
		{"duplicate", hdr("f", tar.TypeReg, ""), ReadOptions{}, ErrBadChangeStream},
		{"hard link to nothing", hdr("g", tar.TypeLink, "nope"), ReadOptions{}, ErrBadChangeStream},
		{"hard link to a folder", hdr("g", tar.TypeLink, "d"), ReadOptions{}, ErrBadChangeStream},
		{"too many entries", hdr("d/x", tar.TypeReg, ""), ReadOptions{MaxEntries: 2}, ErrChangeSetTooLarge},
		{"too deep", hdr("d/x", tar.TypeReg, ""), ReadOptions{MaxDepth: 1}, ErrChangeSetTooLarge},
		{"not tar", []byte("hello"), ReadOptions{}, ErrBadChangeStream},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.SpoolDir = t.TempDir()
			cs, err := ReadChanges(bytes.NewReader(tc.stream), tc.opts)
			if !errors.Is(err, tc.want) {
				t.Errorf("ReadChanges = %v; want %v", err, tc.want)
			}
			cs.Close()
		})
	}
	// Twin: the same shape, well formed.
	cs, err := ReadChanges(bytes.NewReader(hdr("d/x", tar.TypeReg, "")), ReadOptions{SpoolDir: t.TempDir()})
	if err != nil || len(cs.Entries) != 3 {
		t.Errorf("ReadChanges(well formed) = %v, %v; want 3 entries", cs, err)
	}
	cs.Close()
}
