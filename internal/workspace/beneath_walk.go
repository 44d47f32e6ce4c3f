//go:build unix

package workspace

import (
	"errors"
	"strings"

	"golang.org/x/sys/unix"
)

// openBeneathWalk is openBeneath for kernels without openat2 (macOS): it
// opens rel one element at a time from dirfd with O_NOFOLLOW, so no
// symlink is followed anywhere on the path; an absolute rel or a ".." is
// EXDEV (openat2 would allow a ".." that stays below dirfd; change sets
// never hold one). A symlink met on the way is ELOOP, as openat2 says it;
// the last element gets the kernel's own answer to O_NOFOLLOW.
// It is weaker than openat2 in one way: each element is a separate lookup,
// so a folder renamed between two of them is followed to its new place
// (still below dirfd, still without symlinks). Callers pass O_NOFOLLOW;
// it is added anyway. It builds on Linux too so its test compares it with
// openBeneath there (TestOpenBeneathWalk).
func openBeneathWalk(dirfd int, rel string, flags int, mode uint32) (int, error) {
	if strings.HasPrefix(rel, "/") {
		return -1, unix.EXDEV
	}
	var elems []string
	for _, e := range strings.Split(rel, "/") {
		switch e {
		case "", ".":
			continue
		case "..":
			return -1, unix.EXDEV
		}
		elems = append(elems, e)
	}
	if len(elems) == 0 {
		elems = []string{"."}
	}
	cur := dirfd
	release := func() {
		if cur != dirfd {
			unix.Close(cur)
		}
	}
	defer func() { release() }()
	last := len(elems) - 1
	for i, e := range elems {
		fl, m := oPath|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(0)
		if i == last {
			fl, m = flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode
		}
		fd, err := openatRetry(cur, e, fl, m)
		if err != nil {
			if i < last && isSymlinkAt(cur, e) {
				return -1, unix.ELOOP
			}
			return -1, err
		}
		release()
		cur = fd
	}
	fd := cur
	cur = dirfd // the result is the caller's to close
	return fd, nil
}

func openatRetry(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, mode)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return fd, err
	}
}

// isSymlinkAt reports whether name in dirfd is a symlink.
func isSymlinkAt(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}
