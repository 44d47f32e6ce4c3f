package sandbox

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Defaults applied to a Spec's zero values.
const (
	DefaultTimeout   = 60 * time.Second
	DefaultMaxOutput = 64 << 10
)

// Spec is one process to run. It is built from an approved Plan and is
// executed exactly as given.
type Spec struct {
	// Path is the absolute, already resolved program path.
	Path string
	// Args are argv[1:]; argv[0] is Path.
	Args []string
	// Dir is the absolute working directory; it must be Root or inside it.
	Dir string
	// Root is the absolute workspace root.
	Root string
	// Env is the complete child environment as KEY=VALUE entries. Nothing
	// else is inherited. Nil means an empty environment. (bwrap always adds
	// PWD=Dir after changing directory; it cannot be turned off.)
	Env []string
	// Stdin is fed to the child; nil means /dev/null.
	Stdin []byte
	// Timeout for the whole run. Zero means DefaultTimeout (60s).
	Timeout time.Duration
	// MaxOutput caps stdout+stderr combined, in bytes. Zero means
	// DefaultMaxOutput (64 KiB).
	MaxOutput int
	// Limits are rlimits for the child. Zero fields mean "inherit".
	Limits Limits
	// Mode says what the command may do to Root. The zero value,
	// ModeReadOnly, shows Root read-only. See Mode.
	Mode Mode
	// Hide are absolute paths inside Root (sensitive files, homard's own
	// files) that the command must not read: each is covered by an empty,
	// unreadable, read-only mask before the command starts. A path that no
	// longer exists, or that is a symlink, is skipped (a symlink's target is
	// hidden under its own name when it is sensitive).
	Hide []string
	// ProgramDirs are extra folders of programs (config commands.path:
	// the owner's ~/.local/bin, a version manager's bin) shown read-only
	// at their own path, so a program in them, and what it runs from
	// them, can start. Each must be absolute, clean, an existing folder
	// without symlinks in its path, and outside Root (a folder inside
	// Root is already in the view). Env's PATH is the caller's business.
	// The host backend ignores it (it shows everything).
	ProgramDirs []string
	// ScratchBytes caps the tmpfs holding an overlay's upper layer and the
	// command's home (the mount stage's scratch), and bwrap's /tmp. Zero
	// means DefaultScratchBytes.
	ScratchBytes int64
	// ScratchFiles caps its inodes (files created, changed or deleted).
	// Zero means DefaultScratchFiles.
	ScratchFiles int64
	// Cache is a root's persistent build-cache folder (Caches.Dir: go-build,
	// gomod, npm and pip inside), absolute, clean and outside Root. In the
	// read-only and overlay views it is shown beneath a throw-away writable
	// layer on the run's scratch tmpfs, and GOCACHE, GOMODCACHE,
	// npm_config_cache and PIP_CACHE_DIR point into that view: the command
	// reads what is there, and nothing it writes reaches the folder. Empty
	// means cold caches in the command's fresh home. ModeWritable and the
	// host backend ignore it.
	Cache string

	// cacheRefresh makes Cache's go-build folder writable in the view. Only
	// Caches.Refresh sets it, for homard's own fixed warm-up command: no
	// caller outside this package can give a command a writable cache.
	cacheRefresh bool
}

// Mode is what a command may do to its workspace root.
type Mode int

const (
	// ModeReadOnly shows Root (and everything mounted below it) read-only:
	// a command classed as a read cannot write, whatever it really does.
	ModeReadOnly Mode = iota
	// ModeOverlay shows Root through an overlay whose upper layer is a
	// size-capped tmpfs out of the command's reach: the command may change
	// anything, but nothing reaches the real Root. When every process of
	// the run is gone the upper layer is returned as Result.Changes (a tar
	// stream) for homard to grade and apply.
	ModeOverlay
	// ModeWritable binds Root read-write with every .git read-only (bwrap)
	// or refuses a Root holding .git (landlock): the behaviour before
	// overlays, kept for the host backend's contract and for tests of the
	// backends themselves. run_command never uses it.
	ModeWritable
)

var modeNames = [...]string{ModeReadOnly: "read-only", ModeOverlay: "overlay", ModeWritable: "writable"}

func (m Mode) String() string {
	if ModeReadOnly <= m && m <= ModeWritable {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// Defaults for the scratch tmpfs of the mount stage.
const (
	DefaultScratchBytes = 1 << 30
	DefaultScratchFiles = 100_000
)

// Limits are per-process resource limits applied to the child before its
// first instruction. A zero field leaves that limit as inherited.
type Limits struct {
	// CPUSeconds is RLIMIT_CPU: CPU time before SIGXCPU/SIGKILL.
	CPUSeconds uint64
	// MemoryBytes is RLIMIT_AS: the address-space size.
	MemoryBytes uint64
	// Processes is RLIMIT_NPROC. The kernel counts every process of the
	// child's real uid and never enforces it for uid 0 (nor for a child with
	// CAP_SYS_ADMIN or CAP_SYS_RESOURCE). The count includes homard's own
	// processes (and, for bwrap, bwrap's), so set it well above what
	// homard's user already runs. For a child that would be uid 0 outside
	// any user namespace mapping (homard running as root) the limit is
	// instead the pids.max of a fresh pids cgroup (cgroup v1 pids hierarchy
	// or cgroup v2) holding the child and all its descendants, including
	// bwrap's own processes; the cgroup is removed after the run. If no
	// pids cgroup can be created the run fails with ErrUnenforceable
	// instead of running unlimited.
	Processes uint64
	// FileBytes is RLIMIT_FSIZE: the largest file the child may write.
	FileBytes uint64
	// TreeMemoryBytes caps the memory of the child and every process it
	// starts, together: a fresh cgroup made for the run (memory.max with
	// memory.swap.max 0 on cgroup v2, memory.limit_in_bytes and
	// memory.memsw.limit_in_bytes on v1) that the child enters before its
	// first instruction. It counts what the tree's tmpfs files hold too
	// (the overlay's upper layer, bwrap's /tmp and /dev/shm), so it must
	// exceed 2*ScratchBytes plus what the command needs; past it the
	// kernel's OOM killer ends the tree's largest process. Unlike
	// MemoryBytes, two processes of 60% each do not both fit.
	//
	// The cgroup is made next to homard's own (a cgroup v1 memory
	// hierarchy, or cgroup v2 with the memory controller available to
	// homard's cgroup; on v2 a homard alone in its cgroup moves itself into
	// a "homard-self" leaf so the controller can be enabled for its
	// children). When none can be made, ModeOverlay and ModeWritable runs
	// fail with ErrUnenforceable; ModeReadOnly runs without the tree limit
	// (a read-only view cannot keep anything the command wrote). Zero means
	// no tree limit; run_command uses DefaultTreeMemoryBytes.
	TreeMemoryBytes uint64
}

// DefaultTreeMemoryBytes is the tree memory limit run_command sets: room
// for the default scratch tmpfs twice over (overlay upper and bwrap's
// /tmp) plus 2 GiB for the command itself.
const DefaultTreeMemoryBytes = 2*DefaultScratchBytes + 2<<30

func (l Limits) isZero() bool { return l == Limits{} }

// Result is what a finished run produced.
type Result struct {
	// ExitCode is the exit status; a child killed by signal N reports 128+N.
	ExitCode int
	// Output is stdout and stderr interleaved, at most MaxOutput bytes plus
	// the truncation marker.
	Output []byte
	// Truncated reports that output was dropped beyond MaxOutput.
	Truncated bool
	// TimedOut reports that Timeout expired and the process group was killed.
	TimedOut bool
	// Duration is the wall time from start to exit.
	Duration time.Duration
	// Changes is, for ModeOverlay, an unlinked temporary file holding the
	// upper layer as a tar stream (see writeUpper), positioned at its start;
	// the caller closes it. It is nil when the run did not finish (timeout,
	// cancellation, a setup failure, the mount stage killed while it wrote
	// the stream): then nothing the command did is kept.
	Changes *os.File

	// signaled reports that the process homard started was killed by a
	// signal rather than exiting: for the mount stage, that it may not
	// have finished writing Changes.
	signaled bool
}

// Backend executes a Spec.
type Backend interface {
	// Name is the configuration name: "host", "bwrap", "landlock".
	Name() string
	// Available returns nil if the backend works on this machine, otherwise
	// an error wrapping ErrUnavailable that says what to install or change.
	Available() error
	// Run executes spec and returns when the process group is gone. An error
	// means the program could not be run as specified (or ctx was
	// cancelled); a non-zero exit status is not an error.
	Run(ctx context.Context, spec Spec) (Result, error)
	// StartService starts a long-lived service (an MCP server, a skill)
	// in the service profile (see ServiceSpec), or refuses with an error
	// wrapping ErrUnavailable that says which backend to use.
	StartService(ctx context.Context, spec ServiceSpec) (*Service, error)
}

var (
	_ Backend = (*Host)(nil)
	_ Backend = (*Bwrap)(nil)
	_ Backend = (*Landlock)(nil)
)

// Select returns the backend configured by name: "auto", "bwrap", "landlock"
// or "host". A named backend that is unavailable returns its Available()
// error and is never replaced by another. "auto" picks the strongest
// available sandboxed backend (bwrap, then landlock) and returns an error if
// none works; it never picks "host".
func Select(name string) (Backend, error) {
	switch name {
	case "auto", "":
		if runtime.GOOS != "linux" {
			return nil, needsLinux("")
		}
		var reasons []string
		for _, b := range sandboxed() {
			err := b.Available()
			if err == nil {
				return b, nil
			}
			reasons = append(reasons, err.Error())
		}
		return nil, fmt.Errorf("%w: no sandboxed backend works here (%s); install bubblewrap (apt-get install bubblewrap) or set sandbox.backend = \"host\" to run without confinement",
			ErrUnavailable, strings.Join(reasons, "; "))
	case "bwrap", "landlock", "host":
		b := byName(name)
		if err := b.Available(); err != nil {
			return nil, err
		}
		return b, nil
	default:
		return nil, fmt.Errorf("%w %q: use auto, bwrap, landlock or host", ErrUnknownBackend, name)
	}
}

func sandboxed() []Backend { return []Backend{NewBwrap(), NewLandlock()} }

func byName(name string) Backend {
	switch name {
	case "bwrap":
		return NewBwrap()
	case "landlock":
		return NewLandlock()
	default:
		return NewHost()
	}
}

// Status is one backend's availability, for `homard doctor`.
type Status struct {
	Name      string
	Available bool
	// Reason is the Available() error text when the backend is unavailable.
	Reason string
}

// Report probes every backend, strongest first.
func Report() []Status {
	var out []Status
	for _, b := range append(sandboxed(), NewHost()) {
		s := Status{Name: b.Name(), Available: true}
		if err := b.Available(); err != nil {
			s.Available, s.Reason = false, err.Error()
		}
		out = append(out, s)
	}
	return out
}

// normalize validates spec and fills its defaults.
func normalize(spec Spec) (Spec, error) {
	bad := func(format string, a ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("%w: %s", ErrInvalidSpec, fmt.Sprintf(format, a...))
	}
	if !absClean(spec.Path) {
		return bad("program path %q must be absolute and clean", spec.Path)
	}
	if !absClean(spec.Root) || spec.Root == "/" {
		return bad("workspace root %q must be an absolute, clean directory other than /", spec.Root)
	}
	if !absClean(spec.Dir) {
		return bad("working directory %q must be absolute and clean", spec.Dir)
	}
	if rel, err := filepath.Rel(spec.Root, spec.Dir); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return bad("working directory %q is outside the workspace root %q", spec.Dir, spec.Root)
	}
	for _, e := range spec.Env {
		k, _, ok := strings.Cut(e, "=")
		if !ok || k == "" || strings.ContainsRune(e, 0) {
			return bad("environment entry %q is not KEY=VALUE", e)
		}
	}
	for _, a := range append([]string{spec.Path, spec.Dir, spec.Root}, spec.Args...) {
		if strings.ContainsRune(a, 0) {
			return bad("argument contains a NUL byte")
		}
	}
	for _, h := range spec.Hide {
		if !absClean(h) || !within(h, spec.Root) {
			return bad("hidden path %q must be absolute, clean and inside %q", h, spec.Root)
		}
	}
	for _, d := range spec.ProgramDirs {
		if !absClean(d) || d == "/" {
			return bad("program folder %q must be an absolute, clean folder other than /", d)
		}
		if overlaps(d, spec.Root) {
			return bad("program folder %q overlaps the workspace root %q", d, spec.Root)
		}
	}
	if c := spec.Cache; c != "" {
		if !absClean(c) || c == "/" || strings.ContainsAny(c, ",:\\") {
			return bad("cache folder %q must be an absolute, clean folder other than / without , : or \\ (an overlay cannot name it)", c)
		}
		if overlaps(c, spec.Root) {
			return bad("cache folder %q overlaps the workspace root %q", c, spec.Root)
		}
	}
	if spec.cacheRefresh && (spec.Cache == "" || spec.Mode != ModeReadOnly) {
		return bad("a cache refresh needs a cache folder and a read-only root")
	}
	if spec.Mode < ModeReadOnly || spec.Mode > ModeWritable {
		return bad("unknown mode %d", spec.Mode)
	}
	if spec.ScratchBytes < 0 || spec.ScratchFiles < 0 {
		return bad("negative scratch size")
	}
	if spec.Timeout < 0 || spec.MaxOutput < 0 {
		return bad("negative timeout or output cap")
	}
	// Zero means the default.
	spec.ScratchBytes = cmp.Or(spec.ScratchBytes, DefaultScratchBytes)
	spec.ScratchFiles = cmp.Or(spec.ScratchFiles, DefaultScratchFiles)
	spec.Timeout = cmp.Or(spec.Timeout, DefaultTimeout)
	spec.MaxOutput = cmp.Or(spec.MaxOutput, DefaultMaxOutput)
	return spec, nil
}

// splitLimits decides how l is enforced for a child whose real uid
// (outside any user namespace) is childUID, in mode m. The rlimits come
// back in rlimits; what needs a cgroup in cg. The kernel exempts uid 0 from
// RLIMIT_NPROC, so for root Processes moves to the cgroup's pids.max.
// TreeMemoryBytes always needs the cgroup; it is required except for a
// read-only view. execute fails with ErrUnenforceable when a required
// cgroup cannot be created.
func splitLimits(l Limits, childUID int, m Mode) (rlimits Limits, cg cgroupLimits) {
	if l.Processes > 0 && childUID == 0 {
		cg.pidsMax, l.Processes = l.Processes, 0
	}
	cg.memoryMax, l.TreeMemoryBytes = l.TreeMemoryBytes, 0
	cg.memoryRequired = m != ModeReadOnly
	return l, cg
}

// ModeCheck is whether a backend can give a command one view (Mode), for
// `homard doctor`.
type ModeCheck struct {
	Mode Mode
	// Err is nil when a probe command ran in that mode; otherwise what
	// failed (user namespaces, overlay in a user namespace, the mount
	// stage), and commands of the classes that need the mode fail closed.
	Err error
}

// CheckModes runs /bin/true through b in the read-only and the overlay
// mode, in a throw-away root, and reports each. Commands classed as reads
// need the first; writes and code the second.
func CheckModes(ctx context.Context, b Backend) []ModeCheck {
	var out []ModeCheck
	for _, m := range []Mode{ModeReadOnly, ModeOverlay} {
		out = append(out, ModeCheck{Mode: m, Err: probeMode(ctx, b, m)})
	}
	return out
}

func probeMode(ctx context.Context, b Backend, m Mode) error {
	dir, err := os.MkdirTemp("", "homard-mode-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return err
	}
	res, err := b.Run(ctx, Spec{Path: "/bin/true", Root: dir, Dir: dir, Mode: m, Timeout: 10 * time.Second, MaxOutput: 4096})
	if res.Changes != nil {
		res.Changes.Close()
	}
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("the probe exited %d: %s", res.ExitCode, strings.TrimSpace(string(res.Output)))
	}
	return nil
}
