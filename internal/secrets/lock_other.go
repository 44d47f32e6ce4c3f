//go:build !unix

package secrets

// lockVault is a no-op where flock is missing: one process at a time.
func lockVault(string) (func(), error) { return func() {}, nil }
