//go:build !linux

package sandbox

import "context"

// namespaces mirrors exec_linux.go's; there are no Linux namespaces
// outside Linux.
type namespaces struct{}

// cgroupLimits mirrors cgroup_linux.go's; there are no cgroups outside
// Linux.
type cgroupLimits struct {
	pidsMax        uint64
	memoryMax      uint64
	memoryRequired bool
}

// execute fails closed outside Linux: no backend can confine a program
// here, and the host backend is not offered either.
func execute(context.Context, command) (Result, error) {
	return Result{}, needsLinux("")
}

// TreeMemoryCheck reports that the tree memory limit needs Linux cgroups.
func TreeMemoryCheck() error { return needsLinux("") }
