package workspace

import (
	"io/fs"
	"os"
)

// guardedFS is FS: an fs.FS over the os.Root in which homard's own files
// do not appear and sensitive files cannot be opened. It implements
// fs.ReadDirFS and fs.StatFS, so fs.WalkDir and fs.Glob go through the
// checks, and nothing else: fs.ReadFile falls back to Open.
type guardedFS struct {
	r         *root
	inDefault bool
}

var (
	_ fs.ReadDirFS = guardedFS{}
	_ fs.StatFS    = guardedFS{}
)

// path turns an fs.FS name into a Path of this root.
func (g guardedFS) path(op, name string) (Path, error) {
	if !fs.ValidPath(name) {
		return Path{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return Path{Root: g.r.name, Rel: name, inDefault: g.inDefault}, nil
}

// Open opens name for reading, refusing homard's own files. The file it
// returns offers Read, Stat, Close and a ReadDir that leaves protected
// entries out: not the *os.File, whose Readdir would list them.
func (g guardedFS) Open(name string) (fs.File, error) {
	p, err := g.path("open", name)
	if err != nil {
		return nil, err
	}
	f, rel, err := g.r.openRead(p, "read")
	if err != nil {
		return nil, err
	}
	return &guardedFile{f: f, r: g.r, rel: rel}, nil
}

func (g guardedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := g.path("readdir", name)
	if err != nil {
		return nil, err
	}
	return g.r.readDir(p)
}

func (g guardedFS) Stat(name string) (fs.FileInfo, error) {
	p, err := g.path("stat", name)
	if err != nil {
		return nil, err
	}
	if len(g.r.protected) == 0 {
		fi, err := g.r.fs.Stat(name)
		return fi, wrapAccess(p, err)
	}
	return g.r.stat(p, true)
}

// guardedFile is a file opened through guardedFS.
type guardedFile struct {
	f   *os.File
	r   *root
	rel string // real location relative to the root
}

var _ fs.ReadDirFile = (*guardedFile)(nil)

func (g *guardedFile) Stat() (fs.FileInfo, error) { return g.f.Stat() }
func (g *guardedFile) Read(b []byte) (int, error) { return g.f.Read(b) }
func (g *guardedFile) Close() error               { return g.f.Close() }

// ReadDir reads the directory's entries, leaving protected ones out. With
// n > 0 it keeps reading until it has an entry to return or the directory
// ends, as fs.ReadDirFile requires.
func (g *guardedFile) ReadDir(n int) ([]fs.DirEntry, error) {
	for {
		entries, err := g.f.ReadDir(n)
		entries = g.r.visible(g.rel, entries)
		if len(entries) > 0 || err != nil || n <= 0 {
			return entries, err
		}
	}
}
