package workspace

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
)

// Stat describes the file at p, following symlinks inside the root.
// homard's own files are refused with ErrProtected.
func (w *Workspace) Stat(p Path) (fs.FileInfo, error) { return w.stat(p, true) }

// Lstat describes the file at p without following a final symlink.
// homard's own files are refused with ErrProtected, and so is a symlink
// leading to them: describing it would confirm where it leads.
func (w *Workspace) Lstat(p Path) (fs.FileInfo, error) { return w.stat(p, false) }

// stat is Stat (follow) or Lstat: through the os.Root when the root holds
// no protected path, else with root.stat's checked walk.
func (w *Workspace) stat(p Path, follow bool) (fs.FileInfo, error) {
	r, err := w.check(p)
	if err != nil {
		return nil, err
	}
	if len(r.protected) == 0 {
		stat := r.fs.Lstat
		if follow {
			stat = r.fs.Stat
		}
		fi, err := stat(p.Rel)
		return fi, wrapAccess(p, err)
	}
	return r.stat(p, follow)
}

// stat is Stat (follow) or Lstat in a root holding protected paths. Each
// step opens the name with O_PATH (no final symlink followed, nothing read)
// and checks the descriptor's real location before describing it; a
// symlink to follow is read through that same descriptor and its target
// taken from the link's real directory, as os.Root would.
func (r *root) stat(p Path, follow bool) (fs.FileInfo, error) {
	if err := r.guard(p, "stat"); err != nil {
		return nil, err
	}
	rel := p.Rel
	for links := 0; ; links++ {
		f, err := r.fs.OpenFile(rel, oPath, 0)
		if err != nil {
			return nil, r.openFailed(p, "stat", err)
		}
		fi, relReal, target, err := describe(r, f, p, follow)
		f.Close()
		if err != nil {
			return nil, err
		}
		if target == "" {
			return namedInfo{fi, path.Base(p.Rel)}, nil
		}
		if links == maxLinks {
			return nil, fmt.Errorf("stat %s: %w", p, syscall.ELOOP)
		}
		if strings.HasPrefix(target, "/") {
			return nil, fmt.Errorf("path %q: %w", p.Target(), ErrEscape)
		}
		// Not cleaned: os.Root resolves each ".." after the element
		// before it, as the kernel does.
		rel = path.Dir(relReal) + "/" + target
	}
}

// describe checks where the O_PATH file f really is and describes it; for
// a symlink to follow it also returns the link's target.
func describe(r *root, f *os.File, p Path, follow bool) (fi fs.FileInfo, rel, target string, err error) {
	if rel, err = r.checkOpened(f, p, "stat", false); err != nil {
		return nil, "", "", err
	}
	if fi, err = f.Stat(); err != nil {
		return nil, "", "", fmt.Errorf("stat %s: %w", p, err)
	}
	if follow && fi.Mode()&fs.ModeSymlink != 0 {
		err = withFd(f, func(fd int) (err error) {
			target, err = readlinkFd(fd)
			return err
		})
		if err != nil {
			return nil, "", "", fmt.Errorf("stat %s: %w", p, err)
		}
	}
	return fi, rel, target, nil
}

// namedInfo keeps the name of the path asked for when Stat followed a
// symlink, as os.Root.Stat does.
type namedInfo struct {
	fs.FileInfo
	name string
}

func (n namedInfo) Name() string { return n.name }

// ReadFile returns the content of the regular file at p. A file over
// MaxFileBytes is refused with ErrTooLarge before it is read; homard's own
// files with ErrProtected.
func (w *Workspace) ReadFile(p Path) ([]byte, error) {
	r, err := w.check(p)
	if err != nil {
		return nil, err
	}
	f, _, err := r.openRead(p, "read")
	if err != nil {
		return nil, err
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

// openRead opens p for reading and refuses it unless guard (in a root
// holding protected paths) and the opened file's real location allow it:
// not homard's, not sensitive, not a hard link to homard's files; rel is
// that location relative to the root. O_NONBLOCK so that opening a named
// pipe cannot hang the turn; it has no effect on reads of a regular file.
func (r *root) openRead(p Path, op string) (f *os.File, rel string, err error) {
	if err := r.guard(p, op); err != nil {
		return nil, "", err
	}
	f, err = r.fs.OpenFile(p.Rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, "", r.openFailed(p, op, err)
	}
	if rel, err = r.checkOpened(f, p, op, true); err != nil {
		f.Close()
		return nil, "", err
	}
	return f, rel, nil
}

// ReadDir lists the directory at p, sorted by name. Entries describe the
// names themselves: a symlink is reported as a symlink. homard's own files
// are left out; listing one of them is refused with ErrProtected. Sensitive
// entries are listed (the caller marks them with Sensitive); listing a
// sensitive folder is refused with ErrSensitive.
func (w *Workspace) ReadDir(p Path) ([]fs.DirEntry, error) {
	r, err := w.check(p)
	if err != nil {
		return nil, err
	}
	return r.readDir(p)
}

func (r *root) readDir(p Path) ([]fs.DirEntry, error) {
	if err := r.guard(p, "list"); err != nil {
		return nil, err
	}
	f, err := r.fs.OpenFile(p.Rel, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, r.openFailed(p, "list", err)
	}
	defer f.Close()
	relDir, err := r.checkOpened(f, p, "list", true)
	if err != nil {
		return nil, err
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", p, err)
	}
	entries = r.visible(relDir, entries)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// FS returns the named root as an fs.FS, for walking and globbing. It
// follows symlinks only inside the root; fs.WalkDir does not descend into
// symlinked directories. homard's own files are invisible through it:
// ReadDir (and ReadDir on an opened directory) leaves them out, and Open
// and Stat refuse them with ErrProtected, judged by the real location of
// the opened file. Sensitive files are listed but Open refuses them (and a
// sensitive folder's listing) with ErrSensitive, as it refuses a hard link
// to homard's files.
func (w *Workspace) FS(rootName string) (fs.FS, error) {
	r, err := w.root(rootName)
	if err != nil {
		return nil, err
	}
	return guardedFS{r: r, inDefault: r == w.roots[0]}, nil
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
