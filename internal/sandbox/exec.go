package sandbox

import (
	"os"
	"syscall"
	"time"
)

// command is a fully prepared exec: the program homard starts (the target
// itself for host, bwrap for bwrap) with its complete argv. Outside Linux
// nothing is ever executed (exec_other.go).
type command struct {
	path   string
	argv   []string // argv[0] included
	env    []string
	dir    string
	stdin  []byte
	cred   *syscall.Credential
	limits Limits
	// cgroup, when it asks for a controller, puts the child in a fresh
	// cgroup holding those limits while it is stopped at exec (see
	// startWithLimits); the cgroup is removed when the run ends.
	cgroup    cgroupLimits
	timeout   time.Duration
	maxOutput int
	// extraFiles become the child's fds 3, 4, ... (see exec.Cmd.ExtraFiles).
	extraFiles []*os.File
	// ns creates namespaces for the child; the zero value creates none.
	ns namespaces
}
