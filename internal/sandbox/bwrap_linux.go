package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

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

func runBwrap(ctx context.Context, bin string, spec Spec) (Result, error) {
	// The child's uid maps to homard's own uid outside the namespace.
	limits, cg := splitLimits(spec.Limits, os.Getuid(), spec.Mode)
	if spec.Mode != ModeWritable {
		return runStaged(ctx, spec, cg, func(scratch string) (stageFor, error) {
			args, err := bwrapArgs(spec, scratch)
			if err != nil {
				return stageFor{}, err
			}
			return stageFor{next: "bwrap", nextArgv: append([]string{bin}, args...), limits: limits}, nil
		})
	}
	args, err := bwrapArgs(spec, "")
	if err != nil {
		return Result{}, err
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
// bwrapSystemArgs are the namespaces, identity and read-only system view
// every bwrap sandbox starts from (commands and services): no capability,
// a new session, an empty environment, /usr, the system folders (symlinks
// recreated as such) and the few /etc files programs need.
func bwrapSystemArgs() ([]string, error) {
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
	return a, nil
}

// scratch is the mount stage's scratch folder (empty in ModeWritable,
// which has no stage): its cache view is bound at /tmp's.
func bwrapArgs(spec Spec, scratch string) ([]string, error) {
	// The root is bound by path; a symlink anywhere in it would make the
	// sandbox show a different directory than the one that was checked.
	if real, err := filepath.EvalSymlinks(spec.Root); err != nil || real != spec.Root {
		return nil, fmt.Errorf("%w: workspace root %q must exist and contain no symlinks", ErrInvalidSpec, spec.Root)
	}
	a, err := bwrapSystemArgs()
	if err != nil {
		return nil, err
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
	cache := spec.Cache != "" && spec.Mode != ModeWritable
	if cache {
		// The mount stage's cache view (mountCacheView): the persistent
		// caches beneath a writable layer that dies with the run. It is a
		// mount of the stage's namespace, so binding it read-write changes
		// nothing underneath.
		view := "/tmp/" + cacheView
		a = append(a, "--bind", filepath.Join(scratch, scratchHome, cacheView), view)
	}
	switch spec.Mode {
	case ModeReadOnly:
		// The mount stage already made the root read-only and hid
		// Spec.Hide; --ro-bind keeps it so (the flag is locked anyway).
		a = append(a, "--ro-bind", spec.Root, spec.Root)
		env = cleanEnv(env, "/tmp", cache)
	case ModeOverlay:
		// The root is the mount stage's overlay: writes land on its upper
		// layer, which is graded before anything is applied.
		a = append(a, "--bind", spec.Root, spec.Root)
		env = cleanEnv(env, "/tmp", cache)
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
