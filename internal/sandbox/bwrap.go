package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// bwrapPaths are the only places the bwrap binary is looked for; homard's
// own PATH is not consulted so that it cannot redirect the sandbox.
var bwrapPaths = []string{"/usr/bin/bwrap", "/usr/local/bin/bwrap"}

// sandboxUID is the uid and gid the child runs as inside its user namespace.
// It maps to homard's own uid outside, so files the child creates in the
// workspace belong to homard's user. The child has no capabilities.
const sandboxUID = "65534"

// etcFiles is the minimal /etc the child sees (read-only): enough for the
// dynamic loader, Debian's alternatives symlinks, time zones and user names.
// Anything else (shadow, ssh keys, credentials, resolv.conf) is absent.
var etcFiles = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
	"/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
}

// systemDirs are bound read-only when they are directories and recreated as
// the same symlinks when they are symlinks (merged /usr).
var systemDirs = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

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
	mu       sync.Mutex // guards the fields below
	probed   bool
	probeErr error
	bin      string
}

// NewBwrap returns the bubblewrap backend.
func NewBwrap() *Bwrap { return &Bwrap{} }

// Name implements Backend.
func (*Bwrap) Name() string { return "bwrap" }

// Available implements Backend. It finds the bwrap binary and runs /bin/true
// in a throw-away sandbox once; the outcome is cached for the value's life.
func (b *Bwrap) Available() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.probed {
		b.bin, b.probeErr = probeBwrap()
		b.probed = true
	}
	return b.probeErr
}

func probeBwrap() (string, error) {
	if runtime.GOOS != "linux" {
		return "", fmt.Errorf("%w: bwrap: bubblewrap only runs on Linux; set sandbox.backend", ErrUnavailable)
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
	dir, err := os.MkdirTemp("", "homard-bwrap-probe-")
	if err != nil {
		return "", fmt.Errorf("%w: bwrap: create probe directory: %v", ErrUnavailable, err)
	}
	defer os.RemoveAll(dir)
	dir, err = filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("%w: bwrap: resolve probe directory: %v", ErrUnavailable, err)
	}
	spec, _ := normalize(Spec{Path: truePath, Root: dir, Dir: dir, Timeout: 10 * time.Second, MaxOutput: 4096, Mode: ModeWritable})
	res, err := runBwrap(context.Background(), bin, spec)
	if err != nil || res.ExitCode != 0 {
		why := strings.TrimSpace(string(res.Output))
		if err != nil {
			why = err.Error()
		}
		return "", fmt.Errorf("%w: bwrap: bubblewrap cannot create a sandbox on this machine (%s): enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces>0, or an AppArmor profile allowing bwrap), or set sandbox.backend",
			ErrUnavailable, why)
	}
	return bin, nil
}

// Run implements Backend. It refuses to run when Available() fails.
func (b *Bwrap) Run(ctx context.Context, spec Spec) (Result, error) {
	if err := b.Available(); err != nil {
		return Result{}, err
	}
	spec, err := normalize(spec)
	if err != nil {
		return Result{}, err
	}
	return runBwrap(ctx, b.bin, spec)
}

func runBwrap(ctx context.Context, bin string, spec Spec) (Result, error) {
	args, err := bwrapArgs(spec)
	if err != nil {
		return Result{}, err
	}
	// The child's uid maps to homard's own uid outside the namespace.
	limits, cg := splitLimits(spec.Limits, os.Getuid(), spec.Mode)
	if spec.Mode != ModeWritable {
		scratch, done, err := newScratch()
		if err != nil {
			return Result{}, err
		}
		defer done()
		return runStaged(ctx, spec, scratch, stageFor{next: "bwrap", nextArgv: append([]string{bin}, args...), limits: limits}, cg)
	}
	filter, err := seccompFile() // bwrap's fd 3 (bwrapSeccompFD)
	if err != nil {
		return Result{}, fmt.Errorf("prepare the seccomp filter: %w", err)
	}
	defer filter.Close()
	return execute(ctx, command{
		path:       bin,
		argv:       append([]string{bin}, args...),
		env:        nil, // bwrap itself gets nothing; the child gets --setenv entries
		dir:        "/",
		stdin:      spec.Stdin,
		limits:     limits, // applied to bwrap before it runs; the child inherits them
		cgroup:     cg,     // bwrap is moved into the cgroup; the sandbox inherits it
		timeout:    spec.Timeout,
		maxOutput:  spec.MaxOutput,
		extraFiles: []*os.File{filter},
	})
}

// bwrapShmBytes caps the sandbox's /dev/shm (POSIX shared memory and
// semaphores). The sandbox's /tmp is capped at Spec.ScratchBytes.
const bwrapShmBytes = 64 << 20

// bwrapArgs builds the bubblewrap command line for a normalized spec. Order
// matters: later mounts cover earlier ones (tmpfs /tmp, then the workspace
// which may live under /tmp, then its read-only .git).
func bwrapArgs(spec Spec) ([]string, error) {
	// The root is bound by path; a symlink anywhere in it would make the
	// sandbox show a different directory than the one that was checked.
	if real, err := filepath.EvalSymlinks(spec.Root); err != nil || real != spec.Root {
		return nil, fmt.Errorf("%w: workspace root %q must exist and contain no symlinks", ErrInvalidSpec, spec.Root)
	}
	a := []string{
		"--unshare-all", "--unshare-user", "--disable-userns",
		"--uid", sandboxUID, "--gid", sandboxUID,
		"--cap-drop", "ALL",
		"--die-with-parent", "--new-session", "--clearenv",
		"--ro-bind", "/usr", "/usr",
	}
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return nil, fmt.Errorf("read symlink %s: %w", d, err)
			}
			a = append(a, "--symlink", target, d)
		case fi.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	for _, f := range etcFiles {
		a = append(a, "--ro-bind-try", f, f)
	}
	// bwrap's /dev is a tmpfs of its own, writable by the command and
	// without a size: /dev/shm gets a capped tmpfs and the rest of /dev is
	// made read-only (the device nodes still open for writing). /tmp, the
	// command's home in the read-only and overlay modes, is capped like
	// the mount stage's scratch.
	a = append(a, "--proc", "/proc", "--dev", "/dev",
		"--size", strconv.FormatInt(bwrapShmBytes, 10), "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
		"--size", strconv.FormatInt(spec.ScratchBytes, 10), "--tmpfs", "/tmp",
		// The seccomp filter (see seccompFilter), applied to the command
		// right before bwrap execs it.
		"--add-seccomp-fd", strconv.Itoa(bwrapSeccompFD))
	env := spec.Env
	switch spec.Mode {
	case ModeReadOnly:
		// The mount stage already made the root read-only and hid
		// Spec.Hide; --ro-bind keeps it so (the flag is locked anyway).
		a = append(a, "--ro-bind", spec.Root, spec.Root)
		env = cleanEnv(env, "/tmp")
	case ModeOverlay:
		// The root is the mount stage's overlay: writes land on its upper
		// layer, which is graded before anything is applied.
		a = append(a, "--bind", spec.Root, spec.Root)
		env = cleanEnv(env, "/tmp")
	default:
		a = append(a, "--bind", spec.Root, spec.Root)
		// Every .git — the root's and nested repositories' — is read-only.
		gits, err := gitEntries(spec.Root)
		if err != nil {
			return nil, err
		}
		for _, git := range gits {
			if isSymlink(git) {
				return nil, fmt.Errorf("%w: %s is a symlink; refusing to bind what it points to", ErrInvalidSpec, git)
			}
			a = append(a, "--ro-bind", git, git)
		}
	}
	// The owner's program folders, read-only, after the root (which they
	// do not overlap: normalize).
	for _, d := range spec.ProgramDirs {
		if real, err := filepath.EvalSymlinks(d); err != nil || real != d {
			return nil, fmt.Errorf("%w: program folder %q must exist and contain no symlinks", ErrInvalidSpec, d)
		}
		a = append(a, "--ro-bind", d, d)
	}
	a = append(a, "--chdir", spec.Dir)
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		a = append(a, "--setenv", k, v)
	}
	a = append(a, "--", spec.Path)
	return append(a, spec.Args...), nil
}
