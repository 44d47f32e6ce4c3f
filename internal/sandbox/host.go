package sandbox

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// Host runs programs directly on the machine: argv-only exec, a fixed cwd, an
// environment of exactly Spec.Env, its own process group killed on timeout,
// capped output and rlimits. It does not confine file or network access; it
// is only selected when the operator configures it explicitly.
type Host struct {
	// RunAs, if set, runs the child under these credentials (homard must be
	// root). RLIMIT_NPROC is only enforced for a non-root uid; for a root
	// child Limits.Processes becomes a pids cgroup instead (see Limits).
	// Setting any Limits
	// on a child of another uid needs CAP_SYS_RESOURCE (absent from Docker's
	// default set); without it such a run fails to start.
	RunAs *syscall.Credential
}

// NewHost returns a host backend running children as homard's own user.
func NewHost() *Host { return &Host{} }

// Name implements Backend.
func (*Host) Name() string { return "host" }

// Available implements Backend.
func (*Host) Available() error {
	if runtime.GOOS != "linux" {
		return needsLinux("host")
	}
	return nil
}

// Run implements Backend.
func (h *Host) Run(ctx context.Context, spec Spec) (Result, error) {
	spec, err := normalize(spec)
	if err != nil {
		return Result{}, err
	}
	if fi, err := os.Stat(spec.Dir); err != nil || !fi.IsDir() {
		return Result{}, fmt.Errorf("%w: working directory %q is not a directory", ErrInvalidSpec, spec.Dir)
	}
	uid := os.Getuid()
	if h.RunAs != nil {
		uid = int(h.RunAs.Uid)
	}
	limits, cg := splitLimits(spec.Limits, uid, spec.Mode)
	return execute(ctx, command{
		path:      spec.Path,
		argv:      append([]string{spec.Path}, spec.Args...),
		env:       spec.Env,
		dir:       spec.Dir,
		stdin:     spec.Stdin,
		cred:      h.RunAs,
		limits:    limits,
		cgroup:    cg,
		timeout:   spec.Timeout,
		maxOutput: spec.MaxOutput,
	})
}
