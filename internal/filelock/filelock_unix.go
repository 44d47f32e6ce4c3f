//go:build unix

package filelock

import (
	"os"
	"path/filepath"
	"syscall"
)

// Lock takes an exclusive advisory lock (flock) on path, creating it 0600
// in a 0700 folder when missing, and waits for it. The returned function
// releases it (closing the descriptor releases the lock).
func Lock(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
