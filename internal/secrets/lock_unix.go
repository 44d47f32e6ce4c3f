//go:build unix

package secrets

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockVault takes an exclusive advisory lock on path+".lock" (created
// 0600), so that two processes (serve refreshing an MCP login while the
// CLI stores a secret) do not interleave their read-modify-write of the
// vault file and lose one write. The returned function releases it.
func lockVault(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("lock vault: %w", err)
	}
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock vault: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock vault: %w", err)
	}
	return func() { f.Close() }, nil // closing the descriptor releases the lock
}
