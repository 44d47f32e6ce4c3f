package app

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ErrSessionBusy is returned when a turn already runs in the session in
// another process on the same home (`homard serve`, `homard chat`,
// `homard run`).
var ErrSessionBusy = errors.New("a turn already runs in this session")

// LockSession takes the session's turn lock so two processes on one home
// never run turns in one session at once (each would build on history
// without the other's turn). The lock is an open-file-description byte
// lock (fcntl F_OFD_SETLK) on one byte of data/sessions.lock chosen by the
// session id's SHA-256: one file for every session, opened once per
// Runtime, dropped by the kernel if the process dies. Locks of one Runtime
// do not exclude each other (a channel serialises its own turns; the
// gateway answers 409). Call unlock when the turn has ended.
func (r *Runtime) LockSession(session string) (unlock func(), err error) {
	f, err := r.sessionLockFile()
	if err != nil {
		return nil, fmt.Errorf("session lock: %w", err)
	}
	sum := sha256.Sum256([]byte(session))
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: int64(binary.BigEndian.Uint64(sum[:]) >> 8), Len: 1}
	if err := unix.FcntlFlock(f.Fd(), fcntlSetLock, &lk); err != nil {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			var who string
			if si, ok := r.RunningServe(); ok {
				who = fmt.Sprintf(" (homard serve, pid %d, runs turns on this home: http://%s)", si.PID, si.Addr)
			}
			return nil, fmt.Errorf("session %s: %w%s; wait for it to finish or use another --session", session, ErrSessionBusy, who)
		}
		return nil, fmt.Errorf("session lock: %w", err)
	}
	return func() {
		un := lk
		un.Type = unix.F_UNLCK
		_ = unix.FcntlFlock(f.Fd(), fcntlSetLock, &un)
	}, nil
}

// sessionLockFile opens data/sessions.lock once.
func (r *Runtime) sessionLockFile() (*os.File, error) {
	r.lockOnce.Do(func() {
		r.lockFile, r.lockErr = os.OpenFile(filepath.Join(r.Paths.DataDir, "sessions.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	})
	return r.lockFile, r.lockErr
}
