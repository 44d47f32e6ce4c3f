//go:build unix && !linux

package store

// newRunLocker is the run locker where OFD byte-range locks are missing:
// flock(2) on one file per run (runlock_flock.go says how it is weaker).
func newRunLocker(path string) runLocker { return newFlockLocks(path) }
