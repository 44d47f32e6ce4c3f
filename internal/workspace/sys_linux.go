package workspace

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// This file and sys_darwin.go hold the few calls that differ between
// Linux and macOS. The Linux ones are the reference; the macOS ones say
// where they are weaker.

// oPath opens a file to locate or describe it without reading it; with
// O_NOFOLLOW a final symlink is opened itself.
const oPath = unix.O_PATH

// clockCoarse is the clock file timestamps are taken from.
const clockCoarse = unix.CLOCK_REALTIME_COARSE

// beneath is how change sets reach the real root: never through a symlink
// (the owner's own included), a magic link or out of the root.
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openBeneath opens rel relative to dirfd with openat2 and the beneath
// rules; O_CLOEXEC is always added. "." opens dirfd's directory again.
func openBeneath(dirfd int, rel string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat2(dirfd, rel, &unix.OpenHow{
			Flags:   uint64(flags | unix.O_CLOEXEC),
			Mode:    uint64(mode),
			Resolve: beneath,
		})
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue // a concurrent rename raced the lookup; retry
		}
		return fd, err
	}
}

// renameNoReplace renames tmp to name inside pfd, failing with EEXIST
// when name exists.
func renameNoReplace(pfd int, tmp, name string) error {
	return unix.Renameat2(pfd, tmp, pfd, name, unix.RENAME_NOREPLACE)
}

// syncfs makes everything on fd's filesystem durable.
func syncfs(fd int) error { return unix.Syncfs(fd) }

// fdRealPath is the kernel's record of where the open file fd is.
func fdRealPath(fd int) (string, error) {
	return os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
}

// readlinkFd reads the target of the symlink fd refers to (an O_PATH
// descriptor of the link itself).
func readlinkFd(fd int) (string, error) {
	for n := 256; ; n *= 2 {
		buf := make([]byte, n)
		got, err := unix.Readlinkat(fd, "", buf)
		if err != nil {
			return "", err
		}
		if got < n {
			return string(buf[:got]), nil
		}
	}
}
