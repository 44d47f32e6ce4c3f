//go:build !linux

package memtrim

// AfterStart does nothing: paging out the executable's mappings is Linux
// only.
func AfterStart() (Result, error) { return Result{}, nil }
