//go:build unix

package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// flockLocks holds run locks where OFD byte-range locks are missing (macOS
// and the BSDs): one file per running run, <database>.runs.d/<seq>, locked
// with flock(2). A flock belongs to the open file description, as an OFD
// lock does, so a second open (the probe) conflicts with this Store's own
// locks and the kernel drops them when the process dies. It is weaker than
// the Linux locker in two ways: it costs a file create and unlink per run,
// and on a network file system some kernels emulate flock with per-process
// fcntl locks, where a process's own probe would not see its own runs. Keep
// HOMARD_HOME on a local disk. It builds on Linux too so that the same tests
// exercise it there (TestOrphanedRuns).
type flockLocks struct {
	dir string

	mu   sync.Mutex // guards held
	held map[int64]*os.File
}

var _ runLocker = (*flockLocks)(nil)

func newFlockLocks(path string) *flockLocks {
	return &flockLocks{dir: path + ".runs.d", held: map[int64]*os.File{}}
}

func (l *flockLocks) name(seq int64) string {
	return filepath.Join(l.dir, strconv.FormatInt(seq, 10))
}

func (l *flockLocks) hold(seq int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.held[seq]; ok {
		return nil
	}
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(l.name(seq), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return err
	}
	l.held[seq] = f
	return nil
}

// release unlinks the run's file before it closes it, so no probe can
// find a file that is about to be free; the run's row has already left
// "running" (or rolled back), so a probe would not ask about it anyway.
func (l *flockLocks) release(seq int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, ok := l.held[seq]
	if !ok {
		return
	}
	delete(l.held, seq)
	_ = os.Remove(f.Name())
	_ = f.Close()
}

// probe needs no shared handle: each run has its own file, opened afresh.
// A missing file means no live process holds the run (a holder creates it
// before its row commits); a free lock means its holder is gone, and its
// file is removed.
func (l *flockLocks) probe() (func(int64) (bool, error), func(), error) {
	free := func(seq int64) (bool, error) {
		f, err := os.Open(l.name(seq))
		if errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		defer f.Close()
		switch err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); {
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		case err != nil:
			return false, err
		}
		_ = os.Remove(f.Name())
		return true, nil
	}
	return free, func() {}, nil
}

// close closes every run file, which drops the locks; the files stay, so
// another process finds those runs orphaned.
func (l *flockLocks) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for seq, f := range l.held {
		errs = append(errs, f.Close())
		delete(l.held, seq)
	}
	return errors.Join(errs...)
}
