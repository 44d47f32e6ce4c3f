package workspace

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runOnOverlay mounts an overlay of root in a new user and mount namespace,
// runs script in the merged view and returns the upper directory. It
// skips when the machine cannot, and fails under CI=true.
func runOnOverlay(t *testing.T, root, script string) string {
	t.Helper()
	base := t.TempDir()
	up, work, merged := filepath.Join(base, "upper"), filepath.Join(base, "work"), filepath.Join(base, "merged")
	for _, d := range []string{up, work, merged} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	full := "set -e\nmount -t overlay overlay -o lowerdir=" + root + ",upperdir=" + up + ",workdir=" + work +
		",userxattr,metacopy=off,index=off,redirect_dir=nofollow " + merged + "\ncd " + merged + "\n" + script +
		"\ncd /\numount " + merged + "\n"
	out, err := exec.Command("unshare", "-Urm", "sh", "-c", full).CombinedOutput()
	if err != nil {
		msg := "cannot run a command on an overlay (unshare -Urm, overlayfs in a user namespace): " + err.Error() + "\n" + string(out)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return up
}

// TestRealOverlay reads what a real overlayfs upper holds after ordinary
// commands (deletions are whiteouts, a recreated folder is opaque, a
// renamed folder is a whiteout plus a copy) and applies it.
func TestRealOverlay(t *testing.T) {
	f := newFixture(t)
	editTree(t, f.root)
	writeRepo(t, f.root, ".", "")
	write(t, f.root, "e/x", "x\n")
	write(t, f.root, "ren/r", "r\n")
	write(t, f.root, "hardsrc", "h\n")
	since := sinceNow(t)
	up := runOnOverlay(t, f.root, strings.Join([]string{
		"rm gone.txt",
		"rm -rf olddir && mkdir olddir && echo new > olddir/n",
		"echo more >> e/x",
		"mv ren ren2",
		"ln -s a.txt l2",
		"mkfifo pipe",
		"ln hardsrc hard2",
		"echo evil > .git/hooks/pre-commit",
		"chmod 755 mode.sh",
	}, "\n"))
	var buf bytes.Buffer
	if err := WriteUpperTar(&buf, up, TarLimits{}); err != nil {
		t.Fatalf("WriteUpperTar: %v", err)
	}
	cs, err := ReadChanges(&buf, ReadOptions{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatalf("ReadChanges: %v", err)
	}
	defer cs.Close()
	if e, ok := cs.Entry("olddir"); !ok || !e.Opaque {
		t.Errorf("olddir entry = %+v, %v; want an opaque folder", e, ok)
	}
	if e, ok := cs.Entry("gone.txt"); !ok || e.Kind != EntryWhiteout {
		t.Errorf("gone.txt entry = %+v, %v; want a whiteout", e, ok)
	}
	g, err := f.ws.Grade("main", cs, GradeOptions{RunsCode: true, Since: since})
	if err != nil {
		t.Fatalf("Grade: %v", err)
	}
	got := g.Paths()
	for _, want := range []string{
		`delete file "gone.txt"`,
		`delete file "olddir/x"`, `delete file "olddir/sub/y"`, `delete folder "olddir/sub"`,
		`create file "olddir/n"`,
		`modify file "e/x"`,
		`delete file "ren/r"`, `delete folder "ren"`, `create folder "ren2"`, `create file "ren2/r"`,
		`create symlink "l2" -> "a.txt"`,
		`create named pipe "pipe"`,
		`create file "hard2"`,
		`modify file "mode.sh"`,
	} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("changes do not include %s:\n  %s", want, strings.Join(got, "\n  "))
		}
	}
	if g.Grade != GradeCritical || !slices.ContainsFunc(g.Reasons, func(r Reason) bool { return slices.Contains(r.Paths, ".git/hooks/pre-commit") }) {
		t.Errorf("grade %s, reasons %v; want critical naming .git/hooks/pre-commit", g.Grade, g.Reasons)
	}
	if len(g.Conflicts) != 0 {
		t.Errorf("conflicts %v; want none", g.Conflicts)
	}
	res, err := applyAll(t, f, cs, since, GradeCritical, GradeOptions{RunsCode: true})
	if err != nil {
		t.Fatalf("ApplyChanges: %v", err)
	}
	after := snapshot(t, f.root)
	for rel, want := range map[string]string{
		"gone.txt": "", "olddir/x": "", "olddir/n": `file 0644 "new\n"`, "e/x": `file 0644 "x\nmore\n"`,
		"ren": "", "ren2/r": `file 0644 "r\n"`, "l2": "symlink -> a.txt", "pipe": "", "hard2": `file 0644 "h\n"`,
		"mode.sh": `file 0755 "#!/bin/sh\n"`, ".git/hooks/pre-commit": `file 0644 "evil\n"`,
	} {
		if after[rel] != want {
			t.Errorf("after apply %s = %q; want %q", rel, after[rel], want)
		}
	}
	if len(res.Skipped) != 1 {
		t.Errorf("Skipped = %v; want the pipe", res.Skipped)
	}
}

// TestUpperTarRoundTrip: what WriteUpperTar writes, ReadChanges reads,
// with hard links, symlinks, xattrs and a FIFO, without following links.
func TestUpperTarRoundTrip(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	write(t, dir, "a/b.txt", "b")
	write(t, outside, "secret", "s")
	symlink(t, filepath.Join(outside, "secret"), filepath.Join(dir, "a/abs"))
	symlink(t, outside, filepath.Join(dir, "out"))
	if err := os.Link(filepath.Join(dir, "a/b.txt"), filepath.Join(dir, "c")); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("mkfifo", filepath.Join(dir, "p")).Run(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteUpperTar(&buf, dir, TarLimits{}); err != nil {
		t.Fatalf("WriteUpperTar: %v", err)
	}
	cs, err := ReadChanges(&buf, ReadOptions{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatalf("ReadChanges: %v", err)
	}
	defer cs.Close()
	var got []string
	for _, e := range cs.Entries {
		got = append(got, e.Rel+" "+e.Kind.String()+" "+e.Target+e.LinkOf)
	}
	want := []string{"a folder ", "a/abs symlink " + filepath.Join(outside, "secret"), "a/b.txt file ", "c file a/b.txt", "out symlink " + outside, "p named pipe "}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if e, _ := cs.Entry("c"); e.Size != 1 {
		t.Errorf("hard link size %d; want 1", e.Size)
	}
	var small bytes.Buffer
	if err := WriteUpperTar(&small, dir, TarLimits{MaxEntries: 2}); err == nil {
		t.Error("WriteUpperTar over MaxEntries succeeded")
	}
}
