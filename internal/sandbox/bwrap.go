package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// bwrapPaths are the only places the bwrap binary is looked for; homard's
// own PATH is not consulted so that it cannot redirect the sandbox.
var bwrapPaths = []string{"/usr/bin/bwrap", "/usr/local/bin/bwrap"}

// Bwrap runs each child inside bubblewrap: new user, mount, pid, network,
// ipc, uts and cgroup namespaces; no network interface but loopback; no
// capabilities; no_new_privs; the seccomp filter the landlock helper uses
// (seccompFilter, through --add-seccomp-fd); a nobody uid; read-only /usr
// and system directories; a minimal read-only /etc; fresh /proc, a
// read-only /dev with a capped /dev/shm, and a /tmp capped at
// Spec.ScratchBytes; the workspace root bound read-write at its own path
// with Root/.git read-only (ModeWritable; see Mode for the others).
//
// A program outside /usr, the system directories and the workspace does not
// exist inside the sandbox. A bwrap setup failure is reported like a program
// failure (exit code 1, "bwrap: ..." in the output); Available() probes a
// full sandbox once so such failures show up before the first real run.
type Bwrap struct {
	// probe is probeBwrap, run once: the bwrap binary, or why there is
	// no usable one, for the value's life.
	probe func() (bin string, err error)
}

// NewBwrap returns the bubblewrap backend.
func NewBwrap() *Bwrap { return &Bwrap{probe: sync.OnceValues(probeBwrap)} }

// Name implements Backend.
func (*Bwrap) Name() string { return "bwrap" }

// Available implements Backend. It finds the bwrap binary and runs /bin/true
// in a throw-away sandbox once; the outcome is cached for the value's life.
func (b *Bwrap) Available() error {
	_, err := b.probe()
	return err
}

func probeBwrap() (string, error) {
	if runtime.GOOS != "linux" {
		return "", needsLinux("bwrap")
	}
	bin := ""
	for _, p := range bwrapPaths {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			bin = p
			break
		}
	}
	if bin == "" {
		return "", fmt.Errorf("%w: bwrap: bubblewrap is not installed: apt-get install bubblewrap, or set sandbox.backend", ErrUnavailable)
	}
	truePath := ""
	for _, p := range []string{"/usr/bin/true", "/bin/true"} {
		if _, err := os.Stat(p); err == nil {
			truePath = p
			break
		}
	}
	if truePath == "" {
		return "", fmt.Errorf("%w: bwrap: cannot probe the sandbox: /usr/bin/true not found", ErrUnavailable)
	}
	failed, why, err := probeRun("bwrap", truePath, func(ctx context.Context, spec Spec) (Result, error) {
		return runBwrap(ctx, bin, spec)
	})
	if err != nil {
		return "", err
	}
	if failed {
		return "", fmt.Errorf("%w: bwrap: bubblewrap cannot create a sandbox on this machine (%s): enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces>0, or an AppArmor profile allowing bwrap), or set sandbox.backend",
			ErrUnavailable, why)
	}
	return bin, nil
}

// probeRun runs truePath in a throw-away sandbox through run, the
// backend's own, for its Available: a folder it cannot make is
// ErrUnavailable naming the backend; a run that fails (an error or a
// non-zero exit) is failed, with why: the error, else the output.
func probeRun(backend, truePath string, run func(context.Context, Spec) (Result, error)) (failed bool, why string, err error) {
	dir, err := os.MkdirTemp("", "homard-"+backend+"-probe-")
	if err != nil {
		return false, "", fmt.Errorf("%w: %s: create probe directory: %v", ErrUnavailable, backend, err)
	}
	defer os.RemoveAll(dir)
	dir, err = filepath.EvalSymlinks(dir)
	if err != nil {
		return false, "", fmt.Errorf("%w: %s: resolve probe directory: %v", ErrUnavailable, backend, err)
	}
	spec, _ := normalize(Spec{Path: truePath, Root: dir, Dir: dir, Timeout: 10 * time.Second, MaxOutput: 4096, Mode: ModeWritable})
	res, err := run(context.Background(), spec)
	if err != nil || res.ExitCode != 0 {
		why := strings.TrimSpace(string(res.Output))
		if err != nil {
			why = err.Error()
		}
		return true, why, nil
	}
	return false, "", nil
}

// Run implements Backend. It refuses to run when Available() fails.
func (b *Bwrap) Run(ctx context.Context, spec Spec) (Result, error) {
	bin, err := b.probe()
	if err != nil {
		return Result{}, err
	}
	spec, err = normalize(spec)
	if err != nil {
		return Result{}, err
	}
	return runBwrap(ctx, bin, spec)
}

// BwrapSetuid reports whether the bubblewrap homard would use is installed
// setuid root (older distributions without unprivileged user namespaces).
// Such a bwrap cannot run under no_new_privs, so `homard service` leaves
// NoNewPrivileges out of the unit.
func BwrapSetuid() bool {
	for _, p := range bwrapPaths {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return fi.Mode()&os.ModeSetuid != 0
		}
	}
	return false
}
