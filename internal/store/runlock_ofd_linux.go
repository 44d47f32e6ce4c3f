package store

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// newRunLocker is the Linux run locker: OFD byte locks on <path>.runs.
func newRunLocker(path string) runLocker { return &ofdLocks{path: path} }

// ofdLocks is the Store's lock file, opened on first use. Run seq's lock
// is byte seq of the file.
type ofdLocks struct {
	path string
	once sync.Once
	f    *os.File
	err  error
}

var _ runLocker = (*ofdLocks)(nil)

func (l *ofdLocks) file() (*os.File, error) {
	l.once.Do(func() {
		l.f, l.err = os.OpenFile(l.path+".runs", os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	})
	return l.f, l.err
}

// lockRange is the byte a run's lock covers.
func lockRange(seq int64, typ int16) unix.Flock_t {
	return unix.Flock_t{Type: typ, Whence: 0, Start: seq, Len: 1}
}

func (l *ofdLocks) hold(seq int64) error {
	f, err := l.file()
	if err != nil {
		return err
	}
	lk := lockRange(seq, unix.F_WRLCK)
	return unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
}

func (l *ofdLocks) release(seq int64) {
	f, err := l.file()
	if err != nil {
		return
	}
	lk := lockRange(seq, unix.F_UNLCK)
	_ = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
}

// probe opens the file a second time: another open file description, so
// it conflicts with every holder, this process's own lock file included.
func (l *ofdLocks) probe() (func(int64) (bool, error), func(), error) {
	probe, err := os.OpenFile(l.path+".runs", os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, nil, err
	}
	free := func(seq int64) (bool, error) {
		lk := lockRange(seq, unix.F_WRLCK)
		if err := unix.FcntlFlock(probe.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
			return false, err
		}
		return lk.Type == unix.F_UNLCK, nil
	}
	return free, func() { probe.Close() }, nil
}

// close closes the lock file, which drops this process's run locks.
func (l *ofdLocks) close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}
