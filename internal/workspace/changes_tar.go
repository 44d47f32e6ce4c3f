package workspace

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// TarLimits bound what WriteUpperTar serialises. Zero fields take the
// same defaults as ReadOptions.
type TarLimits struct {
	MaxEntries int
	MaxBytes   int64
	MaxDepth   int
}

// WriteUpperTar serialises an overlay's upper directory as the change-set
// stream ReadChanges reads (archive/tar, PAX): entries in walk order,
// parents first, names relative and clean; regular files with content and
// mode; symlinks with their raw target; a second name of a regular file
// as a hard link; whiteouts (char 0:0, which overlayfs shares between
// names, so never hard links) as TypeChar 0:0; FIFOs as TypeFifo, sockets
// as TypeFifo with PAXRecords["HOMARD.kind"] = "socket", other devices
// with their numbers; every extended attribute as a SCHILY.xattr.* record
// (so user.overlay.opaque marks opaque folders). It never follows a
// symlink: the walk uses lstat, and every file is opened with O_NOFOLLOW
// relative to its already-opened folder. It stops with
// ErrChangeSetTooLarge past the limits. The sandbox calls it once every
// process of the run is gone.
func WriteUpperTar(w io.Writer, upperDir string, lim TarLimits) error {
	o := ReadOptions{MaxEntries: lim.MaxEntries, MaxBytes: lim.MaxBytes, MaxDepth: lim.MaxDepth}.withDefaults()
	top, err := unix.Open(upperDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("write upper tar: %w", err)
	}
	tw := &upperWriter{tw: tar.NewWriter(w), o: o, links: map[[2]uint64]string{}}
	err = tw.dir(top, "", 0)
	unix.Close(top)
	if err != nil {
		return fmt.Errorf("write upper tar: %w", err)
	}
	if err := tw.tw.Close(); err != nil {
		return fmt.Errorf("write upper tar: %w", err)
	}
	return nil
}

type upperWriter struct {
	tw      *tar.Writer
	o       ReadOptions
	entries int
	bytes   int64
	links   map[[2]uint64]string // (dev, ino) of regular files with nlink > 1 -> first name
}

// dir writes the entries of the open folder fd, whose name is rel ("" for
// the upper itself).
func (u *upperWriter) dir(fd int, rel string, depth int) error {
	f := os.NewFile(uintptr(dupFd(fd)), rel)
	if f == nil {
		return errors.New("dup folder descriptor")
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return err
	}
	slices.Sort(names)
	for _, n := range names {
		name := n
		if rel != "" {
			name = rel + "/" + n
		}
		if err := u.entry(fd, n, name, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (u *upperWriter) entry(dirfd int, base, name string, depth int) error {
	if u.entries++; u.entries > u.o.MaxEntries {
		return fmt.Errorf("%w: more than %d entries", ErrChangeSetTooLarge, u.o.MaxEntries)
	}
	if depth > u.o.MaxDepth {
		return fmt.Errorf("%w: %q is deeper than %d levels", ErrChangeSetTooLarge, name, u.o.MaxDepth)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	h := &tar.Header{
		Name:    name,
		Mode:    int64(st.Mode & 0o7777),
		ModTime: time.Unix(st.Mtim.Unix()),
		Format:  tar.FormatPAX,
	}
	pax, err := xattrRecords(dirfd, base)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	h.PAXRecords = pax
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		h.Typeflag, h.Name = tar.TypeDir, name+"/"
		if err := u.tw.WriteHeader(h); err != nil {
			return err
		}
		fd, err := unix.Openat(dirfd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer unix.Close(fd)
		return u.dir(fd, name, depth)
	case unix.S_IFLNK:
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dirfd, base, buf)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		h.Typeflag, h.Linkname = tar.TypeSymlink, string(buf[:n])
		return u.tw.WriteHeader(h)
	case unix.S_IFCHR, unix.S_IFBLK:
		h.Typeflag = tar.TypeChar
		if st.Mode&unix.S_IFMT == unix.S_IFBLK {
			h.Typeflag = tar.TypeBlock
		}
		h.Devmajor, h.Devminor = int64(unix.Major(uint64(st.Rdev))), int64(unix.Minor(uint64(st.Rdev))) // int32 on macOS
		return u.tw.WriteHeader(h)
	case unix.S_IFIFO, unix.S_IFSOCK:
		h.Typeflag = tar.TypeFifo
		if st.Mode&unix.S_IFMT == unix.S_IFSOCK {
			if h.PAXRecords == nil {
				h.PAXRecords = map[string]string{}
			}
			h.PAXRecords[paxKind] = "socket"
		}
		return u.tw.WriteHeader(h)
	case unix.S_IFREG:
	default:
		return fmt.Errorf("%s: unknown file type %o", name, st.Mode&unix.S_IFMT)
	}
	key := [2]uint64{uint64(st.Dev), st.Ino} // Dev is int32 on macOS
	if first, ok := u.links[key]; ok {
		h.Typeflag, h.Linkname = tar.TypeLink, first
		return u.tw.WriteHeader(h)
	}
	if st.Nlink > 1 {
		u.links[key] = name
	}
	if u.bytes += st.Size; u.bytes > u.o.MaxBytes {
		return fmt.Errorf("%w: content over %d bytes", ErrChangeSetTooLarge, u.o.MaxBytes)
	}
	fd, err := unix.Openat(dirfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	h.Typeflag, h.Size = tar.TypeReg, st.Size
	if err := u.tw.WriteHeader(h); err != nil {
		return err
	}
	// Exactly Size bytes: a file that changed size since the stat fails
	// the write rather than producing a stream that lies.
	if _, err := io.CopyN(u.tw, f, st.Size); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// xattrRecords reads a file's extended attributes, without following a
// symlink, as PAX records.
func xattrRecords(dirfd int, base string) (map[string]string, error) {
	// Llistxattr takes a path: go through /proc/self/fd so the name is
	// looked up relative to the opened folder, never by a full path.
	p := fmt.Sprintf("/proc/self/fd/%d/%s", dirfd, base)
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(p, buf)
	if errors.Is(err, unix.ERANGE) {
		if n, err = unix.Llistxattr(p, nil); err == nil {
			buf = make([]byte, n)
			n, err = unix.Llistxattr(p, buf)
		}
	}
	if errors.Is(err, unix.ENOTSUP) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out map[string]string
	for _, attr := range strings.Split(string(buf[:n]), "\x00") {
		if attr == "" {
			continue
		}
		val := make([]byte, 4096)
		m, err := unix.Lgetxattr(p, attr, val)
		if errors.Is(err, unix.ENODATA) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("xattr %s: %w", attr, err)
		}
		if out == nil {
			out = map[string]string{}
		}
		out["SCHILY.xattr."+attr] = string(val[:m])
	}
	return out, nil
}

func dupFd(fd int) int {
	nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return nfd
}
