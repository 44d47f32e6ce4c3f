package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// CheckWrite reports, without changing anything, whether WriteFile would
// refuse p because of where it is: a read-only root (ErrReadOnly), a
// protected location (ErrProtected), a
// symlink leading out of the root (ErrEscape), a final name that is a
// symlink (ErrSymlink) or not a regular file (ErrNotRegular). The real
// location of the deepest existing parent is checked, not just the text.
// WriteFile checks again when it runs; this is for preparing a plan.
//
// Git metadata is not refused here: a file tool's write passes the gate
// (internal/changeset), which grades it critical like any writer's.
func (w *Workspace) CheckWrite(p Path) error { return w.checkWrite(p, false) }

// checkWrite is CheckWrite; git also refuses git metadata, for the one
// writer that does not pass the gate (restoring a file checkpoint).
func (w *Workspace) checkWrite(p Path, git bool) error {
	r, err := w.check(p)
	if err != nil {
		return err
	}
	if r.readOnly {
		return readOnlyRefusal("write", p)
	}
	if err := w.allowedLexical(r, p, git); err != nil {
		return err
	}
	dir, rest := path.Dir(p.Rel), []string{path.Base(p.Rel)}
	for {
		// O_DIRECTORY: a named pipe on the way fails at once instead of
		// blocking the open.
		f, err := r.fs.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK, 0)
		if err == nil {
			real, err := fdPath(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("write %s: %w", p, err)
			}
			if err := w.allowed(r, p, filepath.Join(append([]string{real}, rest...)...), git); err != nil {
				return err
			}
			break
		}
		if isEscape(err) {
			return fmt.Errorf("path %q: %w", p.Target(), ErrEscape)
		}
		if !errors.Is(err, os.ErrNotExist) || dir == "." {
			return wrapAccess(p, err)
		}
		rest = append([]string{path.Base(dir)}, rest...)
		dir = path.Dir(dir)
	}
	fi, err := r.fs.Lstat(p.Rel)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return wrapAccess(p, err)
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("write %s: %w", p, ErrSymlink)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("write %s: %w (it is %s)", p, ErrNotRegular, kind(fi.Mode()))
	}
	if _, ok := r.prot.match(fi); ok {
		return inodeRefusal("write", p)
	}
	return nil
}

// writeFile atomically replaces (or creates) the file at p with data and
// returns the id of the checkpoint holding the old content ("" when the
// file is new). Missing parent directories are created.
//
// The checks hold against symlinks and races: after the parent directory
// is opened through the os.Root, the real location of that open directory
// (/proc/self/fd) must be inside the root and not protected; the temp file
// is created with O_EXCL|O_NOFOLLOW relative to that directory and renamed
// onto the final name, which is refused if it is a symlink.
//
// One residual window, documented rather than hidden: MkdirAll runs after
// a check of the existing parents but could, if a directory is swapped for
// a symlink in between, create empty directories inside the root at the
// symlink's in-root target. No file is written there: the check after
// opening the parent refuses it.
func (w *Workspace) writeFile(p Path, data []byte) (checkpointID string, err error) {
	r, err := w.check(p)
	if err != nil {
		return "", err
	}
	if int64(len(data)) > w.maxFile {
		return "", fmt.Errorf("write %s: %w: content is %d bytes, the limit is %d", p, ErrTooLarge, len(data), w.maxFile)
	}
	if p.Rel == "." {
		return "", fmt.Errorf("write %s: %w (it is the workspace root)", p, ErrNotRegular)
	}
	if err := w.checkWrite(p, true); err != nil {
		return "", err
	}
	if w.testHook != nil {
		w.testHook("checked")
	}
	dirRel, name := path.Dir(p.Rel), path.Base(p.Rel)
	if dirRel != "." {
		if err := r.fs.MkdirAll(dirRel, 0o755); err != nil {
			return "", wrapAccess(p, err)
		}
	}
	d, err := r.fs.OpenFile(dirRel, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return "", wrapAccess(p, err)
	}
	defer d.Close()
	realDir, err := fdPath(d)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	if err := w.allowed(r, p, filepath.Join(realDir, name), true); err != nil {
		return "", err
	}
	sc, err := d.SyscallConn()
	if err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	defer w.stampApplied(r.name)() // applied.go
	ctlErr := sc.Control(func(dirfd uintptr) {
		err = w.replace(r, int(dirfd), p, name, data, &checkpointID)
	})
	if ctlErr != nil {
		return "", fmt.Errorf("write %s: %w", p, ctlErr)
	}
	return checkpointID, err
}

// replace checkpoints the old content of name (if any) and swaps in data.
func (w *Workspace) replace(r *root, dirfd int, p Path, name string, data []byte, cpID *string) error {
	old, mode, exists, err := w.readOld(r, dirfd, p, name)
	if err != nil {
		return err
	}
	if exists {
		id, err := w.cps.save(p, old)
		if err != nil {
			return fmt.Errorf("write %s: save checkpoint: %w", p, err)
		}
		*cpID = id
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := ".homard-" + hex.EncodeToString(rnd[:]) + ".tmp"
	fd, err := unix.Openat(dirfd, tmp, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: create temp file: %w", p, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	err = func() error {
		// Locked until closed: SweepTemp never removes a temp file a
		// live writer holds (sweep.go).
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			return err
		}
		if exists {
			if err := f.Chmod(mode); err != nil {
				return err
			}
		}
		return f.Sync()
	}()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if w.testHook != nil {
			w.testHook("rename")
		}
		err = unix.Renameat(dirfd, tmp, dirfd, name)
	}
	if err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := unix.Fsync(dirfd); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", p, err)
	}
	return nil
}

// readOld reads the file being replaced, refusing a symlink (O_NOFOLLOW
// gives ELOOP), anything that is not a regular file, and a hard link to
// one of homard's files (its content would end up in a checkpoint).
func (w *Workspace) readOld(r *root, dirfd int, p Path, name string) (data []byte, mode os.FileMode, exists bool, err error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, 0, false, nil
	case errors.Is(err, unix.ELOOP):
		return nil, 0, false, fmt.Errorf("write %s: %w", p, ErrSymlink)
	case err != nil:
		return nil, 0, false, fmt.Errorf("write %s: open existing file: %w", p, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, false, fmt.Errorf("write %s: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, false, fmt.Errorf("write %s: %w (it is %s)", p, ErrNotRegular, kind(fi.Mode()))
	}
	if _, ok := r.prot.match(fi); ok {
		return nil, 0, false, inodeRefusal("write", p)
	}
	if fi.Size() > w.maxFile {
		return nil, 0, false, fmt.Errorf("write %s: %w: the existing file is %d bytes and cannot be checkpointed (limit %d)", p, ErrTooLarge, fi.Size(), w.maxFile)
	}
	data, err = io.ReadAll(io.LimitReader(f, w.maxFile+1))
	if err != nil {
		return nil, 0, false, fmt.Errorf("write %s: read existing file: %w", p, err)
	}
	if int64(len(data)) > w.maxFile {
		return nil, 0, false, fmt.Errorf("write %s: %w: the existing file grew over %d bytes", p, ErrTooLarge, w.maxFile)
	}
	return data, fi.Mode().Perm(), true, nil
}

// allowedLexical refuses by the path text alone. The real-location checks
// in allowed cover the same ground; this is a cheap first line that does
// not depend on /proc.
func (w *Workspace) allowedLexical(r *root, p Path, git bool) error {
	if git && gitElement(p.Rel) {
		return fmt.Errorf("write %s: %w: git metadata (hooks and config run code) is never written this way", p, ErrProtected)
	}
	if r.protectedRel(p.Rel) {
		return fmt.Errorf("write %s: %w: it is homard's own data; tools may not write it", p, ErrProtected)
	}
	if rule, ok := r.sens.rule(r.name, p.Rel); ok {
		return sensitiveRefusal("write", p, p.Rel, rule)
	}
	return nil
}

// allowed refuses by the real absolute location the write would reach.
func (w *Workspace) allowed(r *root, p Path, real string, git bool) error {
	rel, ok := r.relOf(real)
	if !ok {
		return fmt.Errorf("path %q: %w", p.Target(), ErrEscape)
	}
	if git && gitElement(rel) {
		return fmt.Errorf("write %s: %w: it resolves to git metadata %s, which is never written this way", p, ErrProtected, rel)
	}
	if r.protectedRel(rel) {
		return fmt.Errorf("write %s: %w: it resolves to homard's own data; tools may not write it", p, ErrProtected)
	}
	if rule, ok := r.sens.rule(r.name, rel); ok {
		return sensitiveRefusal("write", p, rel, rule)
	}
	return nil
}

// gitElement reports whether any element of rel is ".git" in any case.
func gitElement(rel string) bool {
	for _, e := range strings.Split(rel, "/") {
		if strings.EqualFold(e, ".git") {
			return true
		}
	}
	return false
}

// fdPath is the kernel's record of where an open file really is.
func fdPath(f *os.File) (string, error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return "", err
	}
	var real string
	var rerr error
	if err := sc.Control(func(fd uintptr) {
		real, rerr = fdRealPath(int(fd))
	}); err != nil {
		return "", err
	}
	if rerr != nil {
		return "", fmt.Errorf("cannot verify the real location (is /proc mounted?): %w", rerr)
	}
	if !filepath.IsAbs(real) || strings.HasSuffix(real, " (deleted)") {
		return "", fmt.Errorf("%q is gone or not on a path; try again", real)
	}
	return real, nil
}
