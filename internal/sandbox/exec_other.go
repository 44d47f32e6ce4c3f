//go:build !linux

package sandbox

import (
	"context"
	"syscall"
	"time"
)

// command mirrors exec_linux.go's so the portable code compiles; outside
// Linux nothing is ever executed.
type command struct {
	path      string
	argv      []string
	env       []string
	dir       string
	stdin     []byte
	cred      *syscall.Credential
	limits    Limits
	cgroup    cgroupLimits
	timeout   time.Duration
	maxOutput int
}

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
