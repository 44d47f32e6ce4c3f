package sandbox

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// writeUpper writes the overlay's upper folder to w as a PAX tar stream:
// the change set homard grades and applies (the reader lives in package
// workspace). Names are slash paths relative to the root, parents before
// children. A whiteout (character device 0/0) is written as TypeChar 0/0;
// an opaque folder carries PAXRecords["SCHILY.xattr.user.overlay.opaque"];
// a second name of an inode already written is a TypeLink; a socket is a
// TypeFifo marked PAXRecords["HOMARD.kind"] = "socket". Nothing is followed:
// symlinks are written as symlinks, and the walk never leaves upper.
// maxEntries bounds the walk (the tmpfs's inode cap bounds it too).
func writeUpper(w io.Writer, upper string, maxEntries int64) error {
	tw := tar.NewWriter(w)
	seen := map[uint64]string{} // inode → first name, for hard links
	var n int64
	err := filepath.WalkDir(upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == upper {
			return nil
		}
		if n++; maxEntries > 0 && n > maxEntries {
			return fmt.Errorf("more than %d changed entries", maxEntries)
		}
		rel, err := filepath.Rel(upper, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		hdr := &tar.Header{
			Name:    name,
			Mode:    int64(st.Mode & 0o7777),
			ModTime: time.Unix(st.Mtim.Unix()),
			Format:  tar.FormatPAX,
		}
		if xa := overlayXattrs(p); len(xa) > 0 {
			hdr.PAXRecords = xa
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
			return tw.WriteHeader(hdr)
		case unix.S_IFLNK:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
			return tw.WriteHeader(hdr)
		case unix.S_IFCHR, unix.S_IFBLK:
			hdr.Typeflag = tar.TypeChar
			if st.Mode&unix.S_IFMT == unix.S_IFBLK {
				hdr.Typeflag = tar.TypeBlock
			}
			hdr.Devmajor, hdr.Devminor = int64(unix.Major(st.Rdev)), int64(unix.Minor(st.Rdev))
			return tw.WriteHeader(hdr)
		case unix.S_IFIFO, unix.S_IFSOCK:
			hdr.Typeflag = tar.TypeFifo
			if st.Mode&unix.S_IFMT == unix.S_IFSOCK {
				if hdr.PAXRecords == nil {
					hdr.PAXRecords = map[string]string{}
				}
				hdr.PAXRecords["HOMARD.kind"] = "socket"
			}
			return tw.WriteHeader(hdr)
		case unix.S_IFREG:
			if st.Nlink > 1 {
				if first, ok := seen[st.Ino]; ok {
					hdr.Typeflag, hdr.Linkname = tar.TypeLink, first
					return tw.WriteHeader(hdr)
				}
				seen[st.Ino] = name
			}
			f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			hdr.Typeflag, hdr.Size = tar.TypeReg, st.Size
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			// The command is gone, so the size cannot change under us; a
			// short copy is an error, not a silently truncated file.
			if _, err := io.CopyN(tw, f, st.Size); err != nil {
				return err
			}
			return nil
		default:
			return fmt.Errorf("%s: unknown file type %#o", name, st.Mode&unix.S_IFMT)
		}
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// overlayXattrs returns the user.overlay.* attributes of p (opaque and the
// like) as PAX records. Other attributes a command set are not carried:
// homard never applies them.
func overlayXattrs(p string) map[string]string {
	buf := make([]byte, 1024)
	n, err := unix.Llistxattr(p, buf)
	if err != nil || n <= 0 {
		return nil
	}
	var out map[string]string
	for _, name := range strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		if !strings.HasPrefix(name, "user.overlay.") {
			continue
		}
		val := make([]byte, 256)
		m, err := unix.Lgetxattr(p, name, val)
		if errors.Is(err, unix.ERANGE) || err != nil {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out["SCHILY.xattr."+name] = string(val[:m])
	}
	return out
}
