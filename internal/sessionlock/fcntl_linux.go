package sessionlock

import "golang.org/x/sys/unix"

// fcntlSetLock takes and drops session locks: open-file-description locks,
// held by the Runtime's own open of sessions.lock.
const fcntlSetLock = unix.F_OFD_SETLK
