package sandbox

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// helperArg is argv[1] of a re-executed homard that must act as the
// landlock helper instead of running its CLI.
const helperArg = "__homard-sandbox-landlock"

// helperHooked records that this binary's main called MaybeRunHelper, so a
// re-exec of /proc/self/exe with helperArg reaches the helper. It is a
// package variable rather than configuration because it describes the
// running binary itself: a binary that does not call MaybeRunHelper (a test
// binary of another package, say) would run its own main with helperArg, so
// Landlock.Available refuses there.
var helperHooked atomic.Bool

// Landlock runs each child through a short-lived helper: homard re-executes
// itself (/proc/self/exe) in new user and network namespaces; the helper
// confines itself with Landlock and a seccomp filter, sets no_new_privs and
// execs the program with the exact argv and environment. homard itself is
// never restricted.
//
// What the child can reach:
//
//   - Files: read and execute under /usr, /bin, /sbin, /lib, /lib32, /lib64,
//     /libx32; read the same minimal /etc entries bwrap shows (ld.so cache,
//     alternatives, localtime, passwd, group, nsswitch.conf); read its own
//     /proc/self; read /dev/zero, /dev/random, /dev/urandom; read and write
//     /dev/null and everything under Spec.Root. Nothing else: no /tmp, no
//     home directory, no other /proc entries. Landlock cannot exempt a
//     subdirectory from a read-write rule, so Root/.git cannot be kept
//     read-only: a Spec whose Root contains .git is refused with
//     ErrUnenforceable (use bwrap for git workspaces).
//   - Network: none. The child is in a new network namespace whose loopback
//     is down; Landlock's TCP rules are also set (ABI v4+) but are not the
//     boundary, since MPTCP sockets bypass them. Abstract UNIX sockets are
//     per network namespace.
//   - Pathname UNIX sockets: Landlock only restricts connect(2) on them from
//     ABI v9, and a network namespace does not isolate them, so the seccomp
//     filter (seccompFilter, shared with bwrap) makes socket(AF_UNIX, ...)
//     fail with EACCES (socketpair still works). Otherwise the child could
//     reach /run/user/UID/bus or a docker socket as homard's user. The same
//     filter denies io_uring, userfaultfd, bpf, perf_event_open and the
//     keyring syscalls with EPERM.
//   - Identity: uid and gid 65534 inside the user namespace, mapped to
//     homard's own uid and gid outside, so files it creates belong to
//     homard's user; no capabilities; no_new_privs.
//   - Processes: no pid namespace. From Landlock ABI v6 the child cannot
//     signal processes outside its domain; on older kernels it can signal
//     homard's user's processes.
//
// Limits are set by the helper on itself just before it execs the program,
// so they hold from the program's first instruction. The one exception is a
// process limit for a root homard: then the helper is ptrace-stopped at its
// own exec and moved into a pids cgroup, which the program inherits.
type Landlock struct {
	// probe is probeLandlock, run once: its outcome holds for the
	// value's life.
	probe func() error
}

// NewLandlock returns the landlock backend.
func NewLandlock() *Landlock { return &Landlock{probe: sync.OnceValue(probeLandlock)} }

// Name implements Backend.
func (*Landlock) Name() string { return "landlock" }

// Available implements Backend. It checks that this binary calls
// MaybeRunHelper, that the kernel has Landlock (ABI v1 or later), and runs
// /bin/true through a full sandbox once; the outcome is cached for the
// value's life.
func (l *Landlock) Available() error { return l.probe() }

func probeLandlock() error {
	if !helperHooked.Load() {
		return fmt.Errorf("%w: landlock: this binary does not call sandbox.MaybeRunHelper at startup, so it cannot re-execute itself as the sandbox helper", ErrUnavailable)
	}
	if err := landlockSupported(); err != nil {
		return err
	}
	failed, why, err := probeRun("landlock", "/bin/true", runLandlock)
	if err != nil {
		return err
	}
	if failed {
		return fmt.Errorf("%w: landlock: cannot create the sandbox on this machine (%s): it needs new user and network namespaces (sysctl user.max_user_namespaces>0, kernel.unprivileged_userns_clone=1, no seccomp profile forbidding them); or set sandbox.backend",
			ErrUnavailable, why)
	}
	return nil
}

// Run implements Backend. It refuses to run when Available() fails.
func (l *Landlock) Run(ctx context.Context, spec Spec) (Result, error) {
	if err := l.Available(); err != nil {
		return Result{}, err
	}
	spec, err := normalize(spec)
	if err != nil {
		return Result{}, err
	}
	if spec.Mode == ModeWritable {
		if err := checkLandlockRoot(spec.Root); err != nil {
			return Result{}, err
		}
	} else if real, err := filepath.EvalSymlinks(spec.Root); err != nil || real != spec.Root {
		return Result{}, fmt.Errorf("%w: workspace root %q must exist and contain no symlinks", ErrInvalidSpec, spec.Root)
	}
	return runLandlock(ctx, spec)
}

// checkLandlockRoot refuses a root that is not a symlink-free directory (a
// rule on a symlinked path would grant its target) and a root containing
// .git, which Landlock cannot keep read-only inside a read-write root. The
// helper checks again just before it applies the rules.
func checkLandlockRoot(root string) error {
	if real, err := filepath.EvalSymlinks(root); err != nil || real != root {
		return fmt.Errorf("%w: workspace root %q must exist and contain no symlinks", ErrInvalidSpec, root)
	}
	gits, err := gitEntries(root)
	if err != nil {
		return err
	}
	if len(gits) > 0 {
		return fmt.Errorf("%w: landlock cannot keep %s read-only inside a writable workspace; use sandbox.backend = \"bwrap\" for a git workspace", ErrUnenforceable, gits[0])
	}
	return nil
}
