package workspace

import (
	"archive/tar"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// upperEntry is one entry of an upper directory built in memory.
type upperEntry struct {
	name    string
	typ     byte
	mode    int64
	content string
	link    string // symlink target or hard link source
	opaque  bool
	pax     map[string]string
	major   int64
}

// upper builds change-set streams as the sandbox writes them. Missing
// parent folders are added (mode 0755), as overlayfs copies them up.
type upper []upperEntry

func (u upper) file(name, content string) upper {
	return append(u, upperEntry{name: name, typ: tar.TypeReg, mode: 0o644, content: content})
}

func (u upper) fileMode(name, content string, mode int64) upper {
	return append(u, upperEntry{name: name, typ: tar.TypeReg, mode: mode, content: content})
}

func (u upper) dir(name string) upper {
	return append(u, upperEntry{name: name, typ: tar.TypeDir, mode: 0o755})
}

func (u upper) opaqueDir(name string) upper {
	return append(u, upperEntry{name: name, typ: tar.TypeDir, mode: 0o755, opaque: true})
}

func (u upper) symlink(name, target string) upper {
	return append(u, upperEntry{name: name, typ: tar.TypeSymlink, mode: 0o777, link: target})
}

func (u upper) hardlink(name, of string) upper {
	return append(u, upperEntry{name: name, typ: tar.TypeLink, mode: 0o644, link: of})
}

func (u upper) whiteout(name string) upper {
	return append(u, upperEntry{name: name, typ: tar.TypeChar})
}

func (u upper) special(name string, typ byte, major int64, pax map[string]string) upper {
	return append(u, upperEntry{name: name, typ: typ, mode: 0o644, major: major, pax: pax})
}

// stream writes the tar stream.
func (u upper) stream(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	done := map[string]bool{}
	var emit func(e upperEntry)
	emit = func(e upperEntry) {
		if d := path.Dir(e.name); d != "." && !done[d] {
			emit(upperEntry{name: d, typ: tar.TypeDir, mode: 0o755})
		}
		done[e.name] = true
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, ModTime: time.Unix(1700000000, 0),
			Format: tar.FormatPAX, Linkname: e.link, PAXRecords: e.pax, Devmajor: e.major}
		if e.typ == tar.TypeDir {
			h.Name += "/"
		}
		if e.opaque {
			h.PAXRecords = map[string]string{paxOpaque: "y", "SCHILY.xattr.user.overlay.origin": "x"}
		}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(e.content))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("write %s: %v", e.name, err)
		}
		if e.typ == tar.TypeReg {
			tw.Write([]byte(e.content))
		}
	}
	for _, e := range u {
		if !done[e.name] {
			emit(e)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// read parses the stream.
func (u upper) read(t testing.TB) *ChangeSet {
	t.Helper()
	cs, err := ReadChanges(bytes.NewReader(u.stream(t)), ReadOptions{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatalf("ReadChanges: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// snapshot describes every entry under dir, for comparing trees.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "symlink -> " + target
		case fi.IsDir():
			out[rel] = fmt.Sprintf("dir %04o", fi.Mode().Perm())
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			out[rel] = fmt.Sprintf("file %04o %q", fi.Mode().Perm(), b)
		default:
			out[rel] = fi.Mode().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diffSnapshots lists the differences between two snapshots.
func diffSnapshots(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, fmt.Sprintf("%s: %q -> %q", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			out = append(out, fmt.Sprintf("%s: (none) -> %q", k, v))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// looseObject returns the id and zlib-compressed loose object of a git
// object of the given type.
func looseObject(typ, body string) (string, string) {
	raw := fmt.Sprintf("%s %d\x00%s", typ, len(body), body)
	sum := sha1.Sum([]byte(raw))
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte(raw))
	zw.Close()
	return hex.EncodeToString(sum[:]), z.String()
}

// commit makes a loose commit object with the given parents.
func commit(msg string, parents ...string) (string, string) {
	body := "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
	for _, p := range parents {
		body += "parent " + p + "\n"
	}
	body += "author a <a@b> 1700000000 +0000\ncommitter a <a@b> 1700000000 +0000\n\n" + msg + "\n"
	return looseObject("commit", body)
}

// objectPath is where a loose object lives under a git folder.
func objectPath(gitdir, id string) string { return gitdir + "/objects/" + id[:2] + "/" + id[2:] }

// writeRepo makes a minimal existing repository at dir (relative to root):
// .git with HEAD on main, a hook, a config, and main at commit base.
func writeRepo(t *testing.T, root, dir, config string) (base string) {
	t.Helper()
	g := path.Join(dir, ".git")
	id, obj := commit("base")
	write(t, root, g+"/HEAD", "ref: refs/heads/main\n")
	write(t, root, g+"/config", config)
	write(t, root, g+"/hooks/pre-commit.sample", "#!/bin/sh\n")
	write(t, root, g+"/refs/heads/main", id+"\n")
	write(t, root, objectPath(g, id), obj)
	write(t, root, g+"/index", "old index")
	return id
}

// applyAll applies with everything approved.
func applyAll(t testing.TB, f *fixture, cs *ChangeSet, since time.Time, approved Grade, o GradeOptions) (Applied, error) {
	t.Helper()
	return f.ws.ApplyChanges(context.Background(), "main", cs, since, ApplyOptions{Grade: o, Approved: approved})
}

// sinceNow is a run start after the fixture's files were written.
func sinceNow(t testing.TB) time.Time {
	t.Helper()
	return RunStart() // the fixture's file times fall before it
}
