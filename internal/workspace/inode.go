package workspace

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
)

// maxProtectedScan bounds how many entries Open visits under the protected
// directories to learn their files' inodes.
const maxProtectedScan = 20000

// devIno identifies a file independently of its names.
type devIno struct{ dev, ino uint64 }

// protectedFiles knows homard's own files by (device, inode), so a hard
// link to one of them inside a root (which no path check can see: the link
// is an ordinary name in an ordinary folder) is refused too. The inodes of
// the files that exist at Open are collected then; a file with more than
// one link that matches none of them is compared again with the protected
// paths as they are now, which covers files created after Open (a new
// -wal, a vault written later).
type protectedFiles struct {
	paths []string // absolute protected paths, files or folders

	mu    sync.Mutex // guards known
	known map[devIno]string
}

// newProtectedFiles collects the inodes of the files under paths, leaving
// out the roots (the XDG layout puts the default workspace inside the data
// directory: its files are the owner's, not homard's).
func newProtectedFiles(paths []string, roots []*root) *protectedFiles {
	pf := &protectedFiles{paths: paths, known: map[devIno]string{}}
	visits := 0
	for _, p := range paths {
		filepath.WalkDir(p, func(name string, d fs.DirEntry, err error) error {
			if visits++; err != nil || visits > maxProtectedScan {
				return filepath.SkipDir
			}
			if d.IsDir() && slices.ContainsFunc(roots, func(r *root) bool { return name == r.path || name == r.real }) {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				pf.add(name, nil)
			}
			return nil
		})
	}
	return pf
}

// add records the file at name; st is its status when the caller has it.
func (pf *protectedFiles) add(name string, st *syscall.Stat_t) (devIno, bool) {
	if st == nil {
		fi, err := os.Lstat(name)
		if err != nil || !fi.Mode().IsRegular() {
			return devIno{}, false
		}
		st, _ = fi.Sys().(*syscall.Stat_t)
		if st == nil {
			return devIno{}, false
		}
	}
	k := devIno{uint64(st.Dev), st.Ino}
	pf.mu.Lock()
	pf.known[k] = name
	pf.mu.Unlock()
	return k, true
}

// match returns the protected file fi is, if any. fi describes an opened
// regular file (its Sys must be a *syscall.Stat_t; anything else matches
// nothing).
func (pf *protectedFiles) match(fi fs.FileInfo) (string, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() {
		return "", false
	}
	k := devIno{uint64(st.Dev), st.Ino}
	pf.mu.Lock()
	name, found := pf.known[k]
	pf.mu.Unlock()
	if found || st.Nlink <= 1 {
		return name, found
	}
	// Another name for this file exists: compare with the protected files
	// as they are now (a protected file and every file directly in a
	// protected folder).
	for _, p := range pf.paths {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		names := []string{p}
		if fi.IsDir() {
			entries, err := os.ReadDir(p)
			if err != nil {
				continue
			}
			names = names[:0]
			for _, e := range entries {
				if e.Type().IsRegular() {
					names = append(names, filepath.Join(p, e.Name()))
				}
			}
		}
		for _, n := range names {
			if got, ok := pf.add(n, nil); ok && got == k {
				return n, true
			}
		}
	}
	return "", false
}

// inodeRefusal is the error for a hard link to one of homard's files.
func inodeRefusal(op string, p Path) error {
	return fmt.Errorf("%s %s: %w: it is another name (a hard link) for one of homard's own files; tools may not read or write it", op, p, ErrProtected)
}
