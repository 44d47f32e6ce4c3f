package workspace

import (
	"bytes"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// macOS versions of sys_linux.go's calls. homard's command sandbox needs
// Linux, so change sets (the only users of openBeneath, syncfs and
// renameNoReplace) are never produced here; these keep the package
// building and the file tools working, and fail closed where macOS lacks
// the Linux call.

// oPath: macOS has no O_PATH. A plain non-blocking read-only open locates
// a file, but it is weaker: it needs read permission, it really opens what
// it names (a device node's driver sees the open), and with O_NOFOLLOW a
// final symlink fails with ELOOP instead of opening the link itself, so a
// path reached through such a link is refused rather than described.
const oPath = unix.O_RDONLY | unix.O_NONBLOCK

// clockCoarse: macOS timestamps files from the ordinary realtime clock.
const clockCoarse = unix.CLOCK_REALTIME

// openBeneath: no openat2 on macOS; the O_NOFOLLOW walk instead.
func openBeneath(dirfd int, rel string, flags int, mode uint32) (int, error) {
	return openBeneathWalk(dirfd, rel, flags, mode)
}

// renameNoReplace uses renameatx_np(RENAME_EXCL), as atomic as Linux's
// RENAME_NOREPLACE.
func renameNoReplace(pfd int, tmp, name string) error {
	return unix.RenameatxNp(pfd, tmp, pfd, name, unix.RENAME_EXCL)
}

// syncfs: macOS has no syncfs; sync(2) flushes every file system, which is
// more than needed and, unlike syncfs, reports no error.
func syncfs(int) error {
	unix.Sync()
	return nil
}

// fdRealPath asks the kernel where fd is with fcntl(F_GETPATH).
func fdRealPath(fd int) (string, error) {
	buf := make([]byte, unix.PathMax)
	_, err := unix.FcntlInt(uintptr(fd), unix.F_GETPATH, int(uintptr(unsafe.Pointer(&buf[0]))))
	runtime.KeepAlive(buf)
	if err != nil {
		return "", &os.PathError{Op: "fcntl F_GETPATH", Path: "", Err: err}
	}
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i]
	}
	return string(buf), nil
}

// readlinkFd: macOS cannot read a link through a descriptor; fds opened
// with oPath are never links (see oPath), so this reads the link at the
// descriptor's path and fails if that is not one.
func readlinkFd(fd int) (string, error) {
	p, err := fdRealPath(fd)
	if err != nil {
		return "", err
	}
	return os.Readlink(p)
}
