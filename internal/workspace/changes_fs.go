package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// realStat is what a path in the real root is now.
type realStat struct {
	kind   EntryKind // EntryFile, EntryDir, EntrySymlink or a special kind
	mode   fs.FileMode
	size   int64
	dev    uint64
	ino    uint64
	mtime  time.Time
	ctime  time.Time
	target string // a symlink's target
}

// statBeneath describes rel without following any symlink, the last
// element included. It returns (nil, nil) when rel does not exist, and an
// error wrapping ErrSymlink when a parent is a symlink.
func statBeneath(dirfd int, rel string) (*realStat, error) {
	fd, err := openBeneath(dirfd, rel, oPath|unix.O_NOFOLLOW, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
		return nil, fmt.Errorf("%s: a parent folder is a symlink: %w", rel, ErrSymlink)
	case errors.Is(err, unix.ENOTDIR):
		return nil, nil // a parent is a file: rel does not exist
	case err != nil:
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	s := &realStat{
		mode:  modeBits(int64(st.Mode & 0o7777)),
		size:  st.Size,
		dev:   uint64(st.Dev), // int32 on macOS
		ino:   st.Ino,
		mtime: time.Unix(st.Mtim.Unix()),
		ctime: time.Unix(st.Ctim.Unix()),
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		s.kind = EntryFile
	case unix.S_IFDIR:
		s.kind = EntryDir
	case unix.S_IFLNK:
		s.kind = EntrySymlink
		if s.target, err = readlinkFd(fd); err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
	case unix.S_IFIFO:
		s.kind = EntryFIFO
	case unix.S_IFSOCK:
		s.kind = EntrySocket
	default:
		s.kind = EntryDevice
	}
	return s, nil
}

// same reports whether two stats describe the same unchanged file.
func (s *realStat) same(o *realStat) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.kind == o.kind && s.mode == o.mode && s.size == o.size && s.dev == o.dev &&
		s.ino == o.ino && s.mtime.Equal(o.mtime) && s.ctime.Equal(o.ctime) && s.target == o.target
}

// openFileBeneath opens a regular file for reading.
func openFileBeneath(dirfd int, rel string) (*os.File, error) {
	fd, err := openBeneath(dirfd, rel, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", rel, err)
	}
	f := os.NewFile(uintptr(fd), rel)
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("open %s: %w", rel, ErrNotRegular)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// hashBeneath returns the hex SHA-256 of a regular file's content.
func hashBeneath(dirfd int, rel string) (string, error) {
	f, err := openFileBeneath(dirfd, rel)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", rel, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// listBeneath returns the names in a directory, sorted.
func listBeneath(dirfd int, rel string) ([]string, error) {
	fd, err := openBeneath(dirfd, rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", rel, err)
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", rel, err)
	}
	slices.Sort(names)
	return names, nil
}

// readBeneath reads a small regular file, up to max bytes; a missing file
// gives (nil, nil).
func readBeneath(dirfd int, rel string, max int64) ([]byte, error) {
	f, err := openFileBeneath(dirfd, rel)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("read %s: %w", rel, ErrTooLarge)
	}
	return b, nil
}

// rootFd returns a directory descriptor of the root the caller closes.
func (r *root) rootFd() (int, error) {
	fd, err := r.openPath(".")
	if err != nil {
		return -1, fmt.Errorf("open root %q: %w", r.name, err)
	}
	return fd, nil
}
