//go:build !unix

package memory

// lockFile is a no-op where flock does not exist: the in-process mutex
// still serialises writes within one process.
func lockFile(dir string) (func(), error) { return func() {}, nil }
