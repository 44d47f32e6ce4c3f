//go:build unix && !linux

package sessionlock

import "golang.org/x/sys/unix"

// fcntlSetLock: where OFD locks are missing (macOS), classic POSIX record
// locks. They are weaker: they belong to the process, not to the open file,
// so two Runtimes in one process do not exclude each other, and closing
// any descriptor of sessions.lock in the process drops all its locks. One
// homard process holds one Runtime, so between processes — what the lock
// is for — they still exclude, and the kernel still drops them on death.
const fcntlSetLock = unix.F_SETLK
