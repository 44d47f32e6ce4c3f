package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Locks, all flock(2) on files in the checkpoint directory, so they hold
// between processes and, being per open file, between goroutines too:
//   - .root-<name>.lock, exclusive: one change set at a time per root
//     (LockRoot; ApplyChanges and RecoverChanges take it).
//   - .store.lock, shared by every writer of checkpoint files while it
//     writes, exclusive (non-blocking) for removing leftovers: pruning
//     never deletes another process's in-flight files.
//   - <id>.changes/.lock, exclusive for as long as a change set is being
//     applied: recovery rolls back only journals nobody holds.

// RootLock serialises the commands that write to one root. Hold it from
// before the command runs until its change set is applied, so that no
// other change set lands in between; pass it in ApplyOptions.Lock.
type RootLock struct {
	root string
	f    *os.File
}

// Unlock releases the lock. It is safe to call more than once.
func (l *RootLock) Unlock() {
	if l != nil && l.f != nil {
		l.f.Close() // closing the only descriptor releases the flock
		l.f = nil
	}
}

// LockRoot waits for the root's lock until ctx ends.
func (w *Workspace) LockRoot(ctx context.Context, rootName string) (*RootLock, error) {
	if _, err := w.root(rootName); err != nil {
		return nil, err
	}
	f, err := lockFile(ctx, filepath.Join(w.cps.dir, ".root-"+rootName+".lock"))
	if err != nil {
		return nil, fmt.Errorf("lock root %q: %w", rootName, err)
	}
	return &RootLock{root: rootName, f: f}, nil
}

// lockFile opens (creating) path and takes an exclusive flock on it,
// polling until ctx ends.
func lockFile(ctx context.Context, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	wait := time.Millisecond
	for {
		if ok, err := tryFlock(f, unix.LOCK_EX); err != nil || ok {
			if err != nil {
				f.Close()
				return nil, err
			}
			return f, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, 100*time.Millisecond)
	}
}

// tryFlock takes a flock without blocking; ok is false when it is held.
func tryFlock(f *os.File, how int) (ok bool, err error) {
	err = withFd(f, func(fd int) error {
		for {
			err := unix.Flock(fd, how|unix.LOCK_NB)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return err
		}
	})
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// storeLock takes the store lock: shared (waiting) for a writer, or
// exclusive without waiting for removing leftovers. ok is false when it
// could not be taken; unlock is always safe to call.
func (c *checkpoints) storeLock(exclusive bool) (unlock func(), ok bool) {
	f, err := os.OpenFile(filepath.Join(c.dir, ".store.lock"), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return func() {}, false
	}
	if exclusive {
		ok, _ = tryFlock(f, unix.LOCK_EX)
	} else {
		ok = withFd(f, func(fd int) error {
			for {
				if err := unix.Flock(fd, unix.LOCK_SH); !errors.Is(err, unix.EINTR) {
					return err
				}
			}
		}) == nil
	}
	if !ok {
		f.Close()
		return func() {}, false
	}
	return func() { f.Close() }, true
}
