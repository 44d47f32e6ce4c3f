//go:build !unix

package filelock

// Lock is a no-op where flock does not exist: a caller's in-process
// mutex still serialises its writes within one process.
func Lock(string) (func(), error) { return func() {}, nil }
