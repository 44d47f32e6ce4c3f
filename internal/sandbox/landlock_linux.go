package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// sandboxID is the uid and gid the landlock child has inside its user
// namespace; it maps to homard's own uid and gid outside (as for bwrap).
const sandboxID = 65534

// helperRequest is what homard hands the helper through an inherited
// memfd (fd 3): everything the helper needs to confine and exec the
// program. The environment travels here, not in the helper's own
// environment, so that nothing in Spec.Env (LD_PRELOAD, GODEBUG) can act on
// the still unconfined helper.
type helperRequest struct {
	Path   string   `json:"path"`
	Args   []string `json:"args"`
	Env    []string `json:"env"`
	Root   string   `json:"root"`
	Limits Limits   `json:"limits"`
	// Mode is the view the mount stage built (ModeReadOnly, ModeOverlay)
	// or ModeWritable when the helper runs without one.
	Mode Mode `json:"mode"`
	// Home is the command's home on the mount stage's tmpfs (read-write);
	// empty in ModeWritable.
	Home string `json:"home"`
	// ProgramDirs are readable and executable (Spec.ProgramDirs).
	ProgramDirs []string `json:"program_dirs"`
}

// Helper file descriptors, in exec.Cmd.ExtraFiles order.
const (
	helperSpecFD   = 3 // helperRequest JSON, read to EOF
	helperStatusFD = 4 // close-on-exec; a setup error is written here
)

// landlockSupported reports whether the kernel has Landlock and this
// architecture has a seccomp filter.
func landlockSupported() error {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		why := fmt.Sprintf("ABI version %d", abi)
		if err != nil {
			why = err.Error()
		}
		return fmt.Errorf("%w: landlock: the kernel does not support Landlock (%s): it needs Linux 5.13+ built with CONFIG_SECURITY_LANDLOCK and booted with landlock in lsm=; or use sandbox.backend = \"bwrap\"", ErrUnavailable, why)
	}
	if _, ok := seccompArch(); !ok {
		return fmt.Errorf("%w: landlock: no seccomp filter for %s; use sandbox.backend = \"bwrap\"", ErrUnavailable, runtime.GOARCH)
	}
	return nil
}

// runLandlock starts the helper for a normalized spec and reports a setup
// failure of the helper as an error.
func runLandlock(ctx context.Context, spec Spec) (Result, error) {
	// The child's uid maps to homard's own uid outside the namespace.
	limits, cg := splitLimits(spec.Limits, os.Getuid(), spec.Mode)
	if spec.Mode != ModeWritable {
		return runStaged(ctx, spec, cg, func(scratch string) (stageFor, error) {
			home := filepath.Join(scratch, scratchHome)
			req, err := json.Marshal(helperRequest{Path: spec.Path, Args: spec.Args, Env: cleanEnv(spec.Env, home, spec.Cache != ""),
				Root: spec.Root, Limits: limits, Mode: spec.Mode, Home: home, ProgramDirs: spec.ProgramDirs})
			if err != nil {
				return stageFor{}, fmt.Errorf("encode helper request: %w", err)
			}
			return stageFor{next: "landlock", nextReq: req}, nil
		})
	}
	specFile, err := memfdJSON("helper request", helperRequest{Path: spec.Path, Args: spec.Args, Env: spec.Env, Root: spec.Root, Limits: limits, Mode: ModeWritable, ProgramDirs: spec.ProgramDirs})
	if err != nil {
		return Result{}, err
	}
	defer specFile.Close()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("create status pipe: %w", err)
	}
	defer statusR.Close()
	res, err := execute(ctx, command{
		path:       "/proc/self/exe",
		argv:       []string{"homard-sandbox", helperArg},
		env:        nil, // the program's environment is in req
		dir:        spec.Dir,
		stdin:      spec.Stdin,
		cred:       &syscall.Credential{Uid: sandboxID, Gid: sandboxID, NoSetGroups: true},
		timeout:    spec.Timeout,
		maxOutput:  spec.MaxOutput,
		extraFiles: []*os.File{specFile, statusW},
		ns: namespaces{
			cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
			uidMap:     []syscall.SysProcIDMap{{ContainerID: sandboxID, HostID: os.Getuid(), Size: 1}},
			gidMap:     []syscall.SysProcIDMap{{ContainerID: sandboxID, HostID: os.Getgid(), Size: 1}},
		},
		// rlimits are applied by the helper itself (see applyLimits); a
		// the run's cgroup gets the helper while it is stopped at its exec.
		cgroup: cg,
	})
	// The helper's copy of statusW is gone (closed on exec or exit), so
	// this read ends as soon as ours is closed.
	statusW.Close()
	msg, _ := io.ReadAll(io.LimitReader(statusR, 4096))
	if len(msg) > 0 {
		return res, fmt.Errorf("landlock sandbox setup failed: %s", msg)
	}
	return res, err
}

// memfdJSON is memfdWith of v encoded as JSON; what names v in an
// encoding error ("encode helper request: ...").
func memfdJSON(what string, v any) (*os.File, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", what, err)
	}
	return memfdWith(b)
}

// memfdWith returns an anonymous, sealed, read-only-from-now file holding b,
// positioned at its start.
func memfdWith(b []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate("homard-sandbox-spec", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("create spec memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "homard-sandbox-spec")
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("write spec memfd: %w", err)
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		f.Close()
		return nil, fmt.Errorf("seal spec memfd: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("rewind spec memfd: %w", err)
	}
	return f, nil
}

// LandlockABI reports the kernel's Landlock ABI version (0 without
// Landlock), for `homard doctor`: the helper enforces the strict
// configuration of that version.
func LandlockABI() int {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 0 {
		return 0
	}
	return abi
}
