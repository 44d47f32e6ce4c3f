// Package sessionlock keeps two turns from running in one session at once
// (each would build on history without the other's turn), across the
// processes of one home and, on a shared database, across machines.
//
// On one machine the lock is an open-file-description byte lock (fcntl
// F_OFD_SETLK) on one byte of data/sessions.lock chosen by the session
// id's SHA-256: one file for every session, opened once, dropped by the
// kernel when the process dies. On a shared database (PostgreSQL, issue
// 27) the store's lock is taken too — a lock the database drops when the
// process's session ends — so a replica on another machine is excluded
// as well. Locks of one Locker do not exclude each other (a channel
// serialises its own turns; the gateway answers 409).
package sessionlock

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// ErrBusy is returned when a turn already runs in the session in another
// process.
var ErrBusy = errors.New("a turn already runs in this session")

// Shared is a lock every process on the database sees (the store's
// TryLock); ok is false when another process holds name.
type Shared interface {
	TryLock(name string) (unlock func(), ok bool, err error)
}

// Locker takes session locks for one process. The zero value is not
// usable: use New.
type Locker struct {
	path   string
	shared Shared

	once sync.Once
	f    *os.File
	err  error
}

// New returns the locks of the home whose data folder is dataDir, and
// shared's when the database is shared (nil: one machine).
func New(dataDir string, shared Shared) *Locker {
	return &Locker{path: filepath.Join(dataDir, "sessions.lock"), shared: shared}
}

// Lock takes session's lock; the error wraps ErrBusy when another process
// holds it. Call unlock when the turn has ended.
func (l *Locker) Lock(session string) (unlock func(), err error) {
	l.once.Do(func() { l.f, l.err = os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, 0o600) })
	if l.err != nil {
		return nil, fmt.Errorf("session lock: %w", l.err)
	}
	sum := sha256.Sum256([]byte(session))
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: int64(binary.BigEndian.Uint64(sum[:]) >> 8), Len: 1}
	if err := unix.FcntlFlock(l.f.Fd(), fcntlSetLock, &lk); err != nil {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("session lock: %w", err)
	}
	unlockFile := func() {
		un := lk
		un.Type = unix.F_UNLCK
		_ = unix.FcntlFlock(l.f.Fd(), fcntlSetLock, &un)
	}
	if l.shared == nil {
		return unlockFile, nil
	}
	unlockShared, ok, err := l.shared.TryLock("session:" + session)
	switch {
	case err != nil:
		unlockFile()
		return nil, fmt.Errorf("session lock in the database: %w", err)
	case !ok:
		unlockFile()
		return nil, ErrBusy
	}
	return func() { unlockShared(); unlockFile() }, nil
}

// Close closes the lock file, dropping this process's file locks.
func (l *Locker) Close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}
