package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxLinks bounds the symlinks one resolution follows, like the kernel's
// MAXSYMLINKS.
const maxLinks = 40

// protectedIn works out, once at Open, which protected paths lie inside
// root r, as clean slash paths relative to r.real. protected holds each
// protected path twice: as configured and with symlinks evaluated; both are
// matched against both the configured and the real root path. A protected
// path equal to the root gives "."; one that strictly contains the root is
// left out (see Options.Protected).
func protectedIn(r *root, protected []string) []string {
	var out []string
	for _, pr := range protected {
		for _, base := range []string{r.path, r.real} {
			if !within(base, pr) {
				continue
			}
			rel, err := filepath.Rel(base, pr)
			if err != nil {
				continue
			}
			if rel = filepath.ToSlash(rel); !slices.Contains(out, rel) {
				out = append(out, rel)
			}
		}
	}
	return out
}

// protectedRel reports whether rel (clean, slash-separated, relative to the
// root) is a protected location or lies under one.
func (r *root) protectedRel(rel string) bool {
	for _, pr := range r.protected {
		if pr == "." || rel == pr || strings.HasPrefix(rel, pr+"/") {
			return true
		}
	}
	return false
}

// relOf turns a real absolute location into a slash path relative to the
// root; ok is false when it is not inside the root.
func (r *root) relOf(real string) (rel string, ok bool) {
	if !within(r.real, real) {
		return "", false
	}
	rel, err := filepath.Rel(r.real, real)
	if err != nil {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// readRefusal is the error for a read of homard's own files. op names the
// operation ("read", "list", "stat").
func readRefusal(op string, p Path) error {
	return fmt.Errorf("%s %s: %w: it is homard's own data; tools may not read it", op, p, ErrProtected)
}

// CheckRead reports, without reading anything, whether a read of p would be
// refused because of where it is: homard's own files or anything under them
// (ErrProtected), a symlink leading out of the root (ErrEscape), or a
// sensitive file, judged by the path as written and by its real location
// (ErrSensitive). Git metadata is readable. ReadFile, ReadDir and the FS
// apply the same checks and check the opened file again; this is for
// preparing a plan.
func (w *Workspace) CheckRead(p Path) error {
	r, err := w.check(p)
	if err != nil {
		return err
	}
	if err := r.guard(p, "read"); err != nil {
		return err
	}
	return r.checkSensitive(p, "read")
}

// checkSensitive refuses p when it is sensitive as written or once its
// symlinks are resolved. A path that leaves the root is left for the
// operation to refuse.
func (r *root) checkSensitive(p Path, op string) error {
	if rule, ok := r.sens.rule(r.name, p.Rel); ok {
		return sensitiveRefusal(op, p, p.Rel, rule)
	}
	real, err := r.reach(p.Rel, nil)
	if err != nil {
		return nil
	}
	if rule, ok := r.sens.rule(r.name, real); ok {
		return sensitiveRefusal(op, p, real, rule)
	}
	return nil
}

// Real returns p with every symlink inside its root resolved: the real
// location, relative to the root, that an operation on p reaches now; for
// a path that does not exist yet, the real location of its deepest
// existing parent followed by the rest. Policy rules and grants are
// matched against it as well as against p, so a symlink cannot widen a
// grant or slip past a deny rule. A symlink leading out of the root is
// ErrEscape.
func (w *Workspace) Real(p Path) (Path, error) {
	r, err := w.check(p)
	if err != nil {
		return Path{}, err
	}
	real, err := r.reach(p.Rel, nil)
	if err != nil {
		if errors.Is(err, ErrEscape) {
			return Path{}, fmt.Errorf("path %q: %w", p.Target(), ErrEscape)
		}
		return Path{}, fmt.Errorf("resolve %s: %w", p, err)
	}
	return Path{Root: p.Root, Rel: real, inDefault: p.inDefault}, nil
}

// guard is the check before a read in a root holding protected paths: the
// path text, then every real location the path passes through on its way
// (following symlinks inside the root) and the one it ends at; for a path
// that does not exist, the deepest location it reaches. So a symlink to
// homard's files, and one inside them leading back out, are both refused.
// Other failures are left for the read itself to report.
func (r *root) guard(p Path, op string) error {
	if len(r.protected) == 0 {
		return nil
	}
	if r.protectedRel(p.Rel) {
		return r.refuseRead(op, p, p.Rel)
	}
	loc, err := r.reach(p.Rel, r.protectedRel)
	switch {
	case errors.Is(err, ErrEscape):
		return fmt.Errorf("path %q: %w", p.Target(), ErrEscape)
	case err == nil && r.protectedRel(loc):
		return r.refuseRead(op, p, loc)
	}
	return nil
}

// checkOpened refuses a file opened for reading whose real location
// (/proc/self/fd) is protected, and returns that location relative to the
// root. When content is true (the caller reads the file or lists the
// folder, not just describes it) it also refuses a sensitive real
// location and a hard link to one of homard's files.
func (r *root) checkOpened(f *os.File, p Path, op string, content bool) (rel string, err error) {
	real, err := fdPath(f)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", op, p, err)
	}
	rel, ok := r.relOf(real)
	if !ok {
		return "", fmt.Errorf("path %q: %w", p.Target(), ErrEscape)
	}
	if r.protectedRel(rel) {
		return "", r.refuseRead(op, p, rel)
	}
	if !content {
		return rel, nil
	}
	if rule, ok := r.sens.rule(r.name, rel); ok {
		return "", sensitiveRefusal(op, p, rel, rule)
	}
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", op, p, err)
	}
	if _, ok := r.prot.match(fi); ok {
		return "", inodeRefusal(op, p)
	}
	return rel, nil
}

// openFailed reports a failed open for reading. In a root holding protected
// paths, a path that now leads into one (the tree changed since guard ran)
// is refused as protected rather than reported as missing or unreadable,
// so that nothing about homard's own files, not even which names are
// absent, shows through.
func (r *root) openFailed(p Path, op string, err error) error {
	if !isEscape(err) {
		if gerr := r.guard(p, op); errors.Is(gerr, ErrProtected) {
			return gerr
		}
	}
	if op == "list" && errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("list %s: %w", p, ErrNotDir)
	}
	return wrapAccess(p, err)
}

// visible drops the entries of the directory at relDir (relative to the
// root, real location) that are protected.
func (r *root) visible(relDir string, entries []fs.DirEntry) []fs.DirEntry {
	if len(r.protected) == 0 {
		return entries
	}
	return slices.DeleteFunc(entries, func(e fs.DirEntry) bool {
		return r.protectedRel(path.Join(relDir, e.Name()))
	})
}

// reach follows rel inside the root one element at a time, as os.Root
// does (symlinks inside the root are followed, ".." is taken after the
// element before it is resolved), and returns the real location it ends at,
// relative to the root: the first location stop accepts (guard passes
// protectedRel; nil stops nowhere), else the file itself when it exists,
// else the first missing element joined with the rest of the path. It
// decides about paths that could not be opened, and gives Real; an opened
// file's location comes from its descriptor. Each step opens one name
// relative to the directory reached so far, with O_PATH|O_NOFOLLOW, so it
// reads nothing and cannot leave the root; an absolute symlink or a ".."
// above the root is ErrEscape, as os.Root has it.
func (r *root) reach(rel string, stop func(string) bool) (string, error) {
	dir, err := r.openPath(".")
	if err != nil {
		return "", err
	}
	defer func() { unix.Close(dir) }()
	cur, todo, links := ".", elements(rel), 0
	for len(todo) > 0 {
		e := todo[0]
		todo = todo[1:]
		switch e {
		case "", ".":
			continue
		case "..":
			if cur == "." {
				return "", ErrEscape
			}
			cur = path.Dir(cur)
			up, err := r.openPath(cur)
			if err != nil {
				return cur, nil
			}
			unix.Close(dir)
			dir = up
			continue
		}
		next := path.Join(cur, e)
		if stop != nil && stop(next) {
			return next, nil
		}
		fd, err := unix.Openat(dir, e, oPath|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return rest(next, todo)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return rest(next, todo)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			unix.Close(dir)
			dir, cur = fd, next
		case unix.S_IFLNK:
			target, err := readlinkFd(fd)
			unix.Close(fd)
			if links++; err != nil || links > maxLinks {
				return rest(next, todo)
			}
			if strings.HasPrefix(target, "/") {
				return "", ErrEscape
			}
			todo = append(strings.Split(target, "/"), todo...)
		default:
			unix.Close(fd)
			if len(todo) > 0 {
				return rest(next, todo) // not a directory: the walk ends here
			}
			cur = next
		}
	}
	return cur, nil
}

// rest is where a walk that stopped at next would go on: next joined with
// the elements not taken yet. A ".." that climbs above the root is
// ErrEscape.
func rest(next string, todo []string) (string, error) {
	p := path.Join(append([]string{next}, todo...)...)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", ErrEscape
	}
	return p, nil
}

// openPath opens rel through the os.Root as an O_PATH directory descriptor
// the caller owns and closes.
func (r *root) openPath(rel string) (int, error) {
	f, err := r.fs.OpenFile(rel, oPath|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, err
	}
	defer f.Close()
	fd := -1
	err = withFd(f, func(old int) (err error) {
		fd, err = unix.FcntlInt(uintptr(old), unix.F_DUPFD_CLOEXEC, 0)
		return err
	})
	return fd, err
}

// withFd runs fn with f's descriptor.
func withFd(f *os.File, fn func(fd int) error) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := sc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
