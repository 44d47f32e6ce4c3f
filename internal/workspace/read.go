package workspace

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
)

// Stat describes the file at p, following symlinks inside the root.
func (w *Workspace) Stat(p Path) (fs.FileInfo, error) {
	r, err := w.check(p)
	if err != nil {
		return nil, err
	}
	fi, err := r.fs.Stat(p.Rel)
	return fi, wrapAccess(p, err)
}

// Lstat describes the file at p without following a final symlink.
func (w *Workspace) Lstat(p Path) (fs.FileInfo, error) {
	r, err := w.check(p)
	if err != nil {
		return nil, err
	}
	fi, err := r.fs.Lstat(p.Rel)
	return fi, wrapAccess(p, err)
}

// ReadFile returns the content of the regular file at p. A file over
// MaxFileBytes is refused with ErrTooLarge before it is read.
func (w *Workspace) ReadFile(p Path) ([]byte, error) {
	r, err := w.check(p)
	if err != nil {
		return nil, err
	}
	// O_NONBLOCK so that opening a named pipe cannot hang the turn; it has
	// no effect on reads of a regular file.
	f, err := r.fs.OpenFile(p.Rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, wrapAccess(p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: %w (it is %s)", p, ErrNotRegular, kind(fi.Mode()))
	}
	if fi.Size() > w.maxFile {
		return nil, fmt.Errorf("read %s: %w: %d bytes, the limit is %d", p, ErrTooLarge, fi.Size(), w.maxFile)
	}
	data, err := io.ReadAll(io.LimitReader(f, w.maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if int64(len(data)) > w.maxFile { // grew while being read
		return nil, fmt.Errorf("read %s: %w: over %d bytes", p, ErrTooLarge, w.maxFile)
	}
	return data, nil
}

// ReadDir lists the directory at p, sorted by name. Entries describe the
// names themselves: a symlink is reported as a symlink.
func (w *Workspace) ReadDir(p Path) ([]fs.DirEntry, error) {
	r, err := w.check(p)
	if err != nil {
		return nil, err
	}
	f, err := r.fs.OpenFile(p.Rel, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if pe, ok := err.(*fs.PathError); ok && pe.Err == syscall.ENOTDIR {
			return nil, fmt.Errorf("list %s: %w", p, ErrNotDir)
		}
		return nil, wrapAccess(p, err)
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", p, err)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// FS returns the named root as an fs.FS (os.Root.FS), for walking and
// globbing. It follows symlinks only inside the root; fs.WalkDir does not
// descend into symlinked directories.
func (w *Workspace) FS(rootName string) (fs.FS, error) {
	r, err := w.root(rootName)
	if err != nil {
		return nil, err
	}
	return r.fs.FS(), nil
}

// wrapAccess turns os.Root's escape error into ErrEscape and names the path.
func wrapAccess(p Path, err error) error {
	if err == nil {
		return nil
	}
	if isEscape(err) {
		return fmt.Errorf("path %q: %w", p.Target(), ErrEscape)
	}
	if pe, ok := err.(*fs.PathError); ok {
		return fmt.Errorf("%s %s: %w", strings.TrimSuffix(pe.Op, "at"), p, pe.Err)
	}
	return fmt.Errorf("%s: %w", p, err)
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}
