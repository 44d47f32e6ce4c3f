package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// DefaultServiceTreeMemoryBytes is the tree memory limit homard gives an
// extension's service: its three default scratch tmpfs mounts (/tmp, its
// home, a writable root's upper layer) and 2 GiB for its processes.
const DefaultServiceTreeMemoryBytes = 3*DefaultScratchBytes + 2<<30

// DefaultServiceProcesses is the process limit homard gives an extension's
// service, as run_command's.
const DefaultServiceProcesses = 512

// ServiceHome is the service's throwaway home inside its sandbox: an empty,
// size-capped tmpfs private to the service, gone when it stops. The
// environment is exactly ServiceSpec.Env, so a caller that wants HOME (or
// XDG_*) there sets it itself.
const ServiceHome = "/home/service"

// ServiceSpec is a long-lived process (an MCP server, a skill's entrypoint)
// talking to homard over pipes. It sees the system's programs and
// libraries read-only, a minimal /etc, its own /proc, a capped /tmp and
// ServiceHome, and of the machine's files only Mounts and Roots. It has no
// network but what Proxy serves.
type ServiceSpec struct {
	// Argv is the command: Argv[0] is the absolute, clean, already
	// resolved program path; it must be under /usr, a system directory,
	// one of Mounts or one of Roots (otherwise it would not exist in the
	// sandbox). No shell is involved.
	Argv []string
	// Env is the complete environment as KEY=VALUE entries; nothing is
	// inherited from homard. (bwrap adds PWD=Dir; it cannot be turned off.)
	Env []string
	// Mounts are absolute, clean, symlink-free paths (the program's own
	// files, a cache) shown read-only at their own path.
	Mounts []string
	// Roots are the workspace roots the service was declared to use; no
	// other workspace is visible.
	Roots []Root
	// Hide are absolute paths the service must never see: homard's home,
	// its data directory, the vault. A mount or root that is one of them
	// or holds one is refused; one inside them (a skill's own folder under
	// homard's home) shows only itself.
	Hide []string
	// Dir is the working directory: ServiceHome, or inside it, a mount or a
	// root. Empty means ServiceHome.
	Dir string
	// Stderr receives the service's standard error (and bwrap's own
	// errors), written from a goroutine of the Service. Nil discards it;
	// the last part is kept for Wait's error either way.
	Stderr io.Writer
	// ScratchBytes caps each of /tmp and ServiceHome. Zero means
	// DefaultScratchBytes.
	ScratchBytes int64
	// Proxy, when set, is the service's only way out: a relay inside the
	// sandbox listens on its own loopback, the environment gets
	// HTTP_PROXY, HTTPS_PROXY, http_proxy and https_proxy pointing there
	// (over any given), and Proxy serves each connection the service
	// opens to it (egress.Proxy.ServeConn), in a goroutine of the Service,
	// with a ctx that ends when the service does; it must return then.
	// The relay is homard's own binary, so main must call MaybeRunHelper.
	// Nil means no network at all.
	Proxy func(ctx context.Context, conn net.Conn)
	// Limits bound the service's whole tree, as for commands (see
	// Limits): Processes (RLIMIT_NPROC, or a pids cgroup when homard runs
	// as root) and TreeMemoryBytes (one memory cgroup for every process of
	// the service and the tmpfs pages it writes: /tmp, its home and a
	// writable root's upper layer). The memory cgroup is required for a
	// service with a writable root (as for a command on an overlay) and
	// used when it can be made otherwise. Zero fields mean no limit.
	Limits Limits
	// HostNetwork shares the machine's network namespace, unfiltered: the
	// operator's explicit opt-in (an MCP server's `network = true`, which
	// doctor flags). No SSRF rule applies and /etc/resolv.conf is shown
	// for name lookups. Not with Proxy.
	HostNetwork bool
}

// Root is a workspace root shown to a service. A service with roots
// starts through the mount stage (as commands do), which builds their
// views.
type Root struct {
	// Path is absolute, clean and contains no symlinks.
	Path string
	// Writable shows it through an overlay whose upper layer is out of
	// the service's reach: the service may change anything there, and
	// nothing reaches the real folder; after Wait, Service.Changes
	// returns the change set. At most one root is writable; the others
	// are read-only.
	Writable bool
	// Hide are absolute paths inside Path (sensitive files) covered by an
	// empty, unreadable, read-only mask before the service starts, as
	// Spec.Hide.
	Hide []string
}

// ErrServiceExited is wrapped by Wait's error when the service ended by
// itself (any status, or a signal it was not sent by Stop).
var ErrServiceExited = errors.New("service exited")

// ErrServiceStopped is wrapped by Wait's error when Stop (or the end of
// StartService's ctx) ended the service.
var ErrServiceStopped = errors.New("service stopped")

// serviceStderrTail is how much of the end of a service's stderr Wait's
// error quotes.
const serviceStderrTail = 2 << 10

// Service is a running service. Stdin and Stdout are the ends of its
// standard input and output pipes; Stdout reaches EOF when every process of
// the service is gone. Always call Stop when done, after Wait too: it
// releases the pipes.
type Service struct {
	Stdin  io.WriteCloser
	Stdout io.ReadCloser

	program string
	done    chan struct{} // closed when every process is gone and reaped
	kill    func()        // kills the whole tree; safe to call any time
	stopped chan struct{} // closed by the first Stop
	stop    sync.Once

	handlerCtx context.Context // ends when the service does (Proxy's ctx)
	handlers   sync.WaitGroup  // Proxy's goroutines

	mu      sync.Mutex // guards the fields below
	exitErr error      // set before done is closed
	tail    []byte     // the end of stderr
	changes *os.File   // the writable root's change set, set before done is closed
}

// Changes returns, after Wait, the upper layer of the service's writable
// root (ServiceSpec.Roots) as a tar stream positioned at its start (the
// format workspace.ReadChanges reads), and hands it to the caller, who
// closes it; a second call returns nil. It is nil without a writable
// root, and when the service did not end by itself with the stream
// complete (stopped, killed, a setup failure): then nothing it changed is
// kept. Nothing reaches the real root until the caller applies it.
func (s *Service) Changes() *os.File {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.changes
	s.changes = nil
	return f
}

// Wait blocks until every process of the service is gone and returns nil
// for exit status 0; otherwise an error wrapping ErrServiceExited (with the
// status and the end of its stderr, quoted) or ErrServiceStopped.
func (s *Service) Wait() error {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitErr
}

// Stop kills the service's whole process tree, waits until it is gone and
// closes Stdin and Stdout. It returns nil; calling it again does nothing.
func (s *Service) Stop() error {
	s.stop.Do(func() {
		close(s.stopped)
		s.kill()
		<-s.done
		_ = s.Stdin.Close()
		_ = s.Stdout.Close()
		s.mu.Lock()
		if s.changes != nil {
			s.changes.Close()
			s.changes = nil
		}
		s.mu.Unlock()
	})
	return nil
}

// keepTail keeps the last serviceStderrTail bytes of stderr.
func (s *Service) keepTail(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tail = append(s.tail, p...)
	if n := len(s.tail); n > serviceStderrTail {
		s.tail = append(s.tail[:0], s.tail[n-serviceStderrTail:]...)
	}
}

// finish records how the service ended; code is its exit status, or
// 128+N for signal N; setupErr, a failure of the mount stage before the
// service started.
func (s *Service) finish(code int, setupErr error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.stopped:
		s.exitErr = fmt.Errorf("%s: %w", s.program, ErrServiceStopped)
		return
	default:
	}
	if setupErr != nil {
		s.exitErr = fmt.Errorf("%s: %w", s.program, setupErr)
		return
	}
	if code == 0 {
		return
	}
	msg := fmt.Sprintf("%s: %v with status %d", s.program, ErrServiceExited, code)
	if t := strings.TrimSpace(string(s.tail)); t != "" {
		msg += fmt.Sprintf("; the end of its error output: %q", t)
	}
	s.exitErr = serviceExitError{msg: msg}
}

// serviceExitError is the error of a service that ended by itself; its
// text names ErrServiceExited already, so it unwraps to it without
// repeating it.
type serviceExitError struct{ msg string }

func (e serviceExitError) Error() string { return e.msg }
func (e serviceExitError) Unwrap() error { return ErrServiceExited }

// StartService implements Backend. It refuses: the host backend confines
// nothing, and a service (an MCP server, a skill) is code homard did not
// write and the owner did not read, so it never runs unconfined, even when
// the operator chose host for run_command.
func (*Host) StartService(context.Context, ServiceSpec) (*Service, error) {
	return nil, fmt.Errorf("%w: host: extensions (MCP servers, skills) never run unconfined; install bubblewrap (apt-get install bubblewrap) and set sandbox.backend = \"bwrap\" or \"auto\"", ErrUnavailable)
}

// StartService implements Backend. It refuses for now: without a pid
// namespace the landlock helper cannot kill a service's whole tree, and
// Landlock cannot keep homard's home unreadable inside a declared folder
// that holds it.
func (*Landlock) StartService(context.Context, ServiceSpec) (*Service, error) {
	return nil, fmt.Errorf("%w: landlock: extensions (MCP servers, skills) need the bwrap backend; install bubblewrap (apt-get install bubblewrap) and set sandbox.backend = \"bwrap\" or \"auto\"", ErrUnavailable)
}

// StartService implements Backend: it starts spec in the service profile
// (see ServiceSpec) and returns once the process is started. The service
// is stopped (as by Stop) when ctx ends. A spec that is not safe to run as
// given is ErrInvalidSpec, naming what to change.
func (b *Bwrap) StartService(ctx context.Context, spec ServiceSpec) (*Service, error) {
	bin, err := b.probe()
	if err != nil {
		return nil, err
	}
	spec, err = normalizeService(spec)
	if err != nil {
		return nil, err
	}
	return startBwrapService(ctx, bin, spec)
}

// reservedServicePaths are the sandbox's own mounts: a mount or root may
// not be, hold or lie inside one, except that it may lie inside /tmp (bwrap
// binds it onto the fresh /tmp).
var reservedServicePaths = []string{"/proc", "/dev", "/tmp", ServiceHome}

// normalizeService validates spec and fills its defaults. It checks the
// host's files (existence, symlinks) as they are now; bwrap binds by path
// right after, so they are what the service sees.
func normalizeService(spec ServiceSpec) (ServiceSpec, error) {
	bad := func(format string, a ...any) (ServiceSpec, error) {
		return ServiceSpec{}, fmt.Errorf("%w: %s", ErrInvalidSpec, fmt.Sprintf(format, a...))
	}
	if len(spec.Argv) == 0 {
		return bad("a service needs a command")
	}
	if spec.HostNetwork && spec.Proxy != nil {
		return bad("a service has either the host network or the proxy of its listed hosts, not both")
	}
	for _, a := range append(append([]string{spec.Dir}, spec.Argv...), spec.Mounts...) {
		if strings.ContainsRune(a, 0) {
			return bad("argument contains a NUL byte")
		}
	}
	for _, e := range spec.Env {
		k, _, ok := strings.Cut(e, "=")
		if !ok || k == "" || strings.ContainsRune(e, 0) {
			return bad("environment entry %q is not KEY=VALUE", e)
		}
	}
	hide, err := hiddenForms(spec.Hide)
	if err != nil {
		return ServiceSpec{}, err
	}
	seen := map[string]bool{}
	check := func(what, p string) error {
		switch {
		case !absClean(p) || p == "/" || strings.ContainsRune(p, 0):
			return fmt.Errorf("%w: %s %q must be an absolute, clean folder other than /", ErrInvalidSpec, what, p)
		case seen[p]:
			return fmt.Errorf("%w: %s %q is declared twice", ErrInvalidSpec, what, p)
		}
		seen[p] = true
		for _, r := range reservedServicePaths {
			if overlaps(p, r) && !(r == "/tmp" && within(p, r)) {
				return fmt.Errorf("%w: %s %q overlaps the sandbox's own %s; declare another folder", ErrInvalidSpec, what, p, r)
			}
		}
		if real, err := filepath.EvalSymlinks(p); err != nil || real != p {
			return fmt.Errorf("%w: %s %q must exist and contain no symlinks (use the path it resolves to)", ErrInvalidSpec, what, p)
		}
		for _, h := range hide {
			if p == h || within(h, p) {
				return fmt.Errorf("%w: %s %q holds %s, which an extension must never see; declare a folder that does not hold it", ErrInvalidSpec, what, p, h)
			}
		}
		return nil
	}
	for _, m := range spec.Mounts {
		if err := check("mount", m); err != nil {
			return ServiceSpec{}, err
		}
	}
	writable := 0
	for i, r := range spec.Roots {
		if err := check("workspace root", r.Path); err != nil {
			return ServiceSpec{}, err
		}
		for _, o := range spec.Roots[:i] {
			if overlaps(r.Path, o.Path) {
				return bad("workspace roots %q and %q overlap; a service gets separate roots", o.Path, r.Path)
			}
		}
		for _, h := range r.Hide {
			if filepath.Clean(h) != h || !within(h, r.Path) {
				return bad("hidden path %q must be absolute, clean and inside %q", h, r.Path)
			}
		}
		if r.Writable {
			writable++
		}
	}
	if writable > 1 {
		return bad("%d writable roots: a service may write to one root (its changes are one change set)", writable)
	}
	if len(spec.Roots) > 0 && spec.HostNetwork {
		return bad("a service with workspace roots runs in the mount stage's network namespace; it cannot have the host network")
	}
	visible := func(p string) bool {
		for _, d := range append([]string{"/usr"}, systemDirs...) {
			if within(p, d) {
				return true
			}
		}
		for v := range seen {
			if p == v || within(p, v) {
				return true
			}
		}
		return false
	}
	prog := spec.Argv[0]
	if !absClean(prog) {
		return bad("program path %q must be absolute and clean", prog)
	}
	if !visible(prog) {
		return bad("program %q would not exist in the sandbox: add its folder to the service's mounts", prog)
	}
	if fi, err := os.Stat(prog); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return bad("program %q is not an executable file", prog)
	}
	if spec.Dir == "" {
		spec.Dir = ServiceHome
	}
	if !absClean(spec.Dir) {
		return bad("working directory %q must be absolute and clean", spec.Dir)
	}
	if spec.Dir != ServiceHome && !within(spec.Dir, ServiceHome) && !visible(spec.Dir) {
		return bad("working directory %q is not in the service's home, mounts or roots", spec.Dir)
	}
	if spec.ScratchBytes < 0 {
		return bad("negative scratch size")
	}
	if spec.ScratchBytes == 0 {
		spec.ScratchBytes = DefaultScratchBytes
	}
	return spec, nil
}

// hiddenForms returns every hidden path as given and, when it exists, as
// its symlinks resolve, so a mount of either spelling is caught.
func hiddenForms(hide []string) ([]string, error) {
	var out []string
	for _, h := range hide {
		if !absClean(h) || h == "/" {
			return nil, fmt.Errorf("%w: hidden path %q must be absolute, clean and not /", ErrInvalidSpec, h)
		}
		out = append(out, h)
		if real, err := filepath.EvalSymlinks(h); err == nil && real != h {
			out = append(out, real)
		}
	}
	return out, nil
}

// absClean reports whether p is an absolute path in its clean form.
func absClean(p string) bool { return filepath.IsAbs(p) && filepath.Clean(p) == p }

// within reports whether p lies strictly inside dir.
func within(p, dir string) bool { return strings.HasPrefix(p, dir+"/") }

// overlaps reports whether a is b, holds it or lies inside it.
func overlaps(a, b string) bool { return a == b || within(a, b) || within(b, a) }

// serviceBinds are the mounts and roots in the order bwrap must bind them:
// outer folders first, so a folder declared inside another keeps its own
// access (a read-only mount inside a writable root stays read-only).
func serviceBinds(spec ServiceSpec) []Root {
	binds := make([]Root, 0, len(spec.Mounts)+len(spec.Roots))
	for _, m := range spec.Mounts {
		binds = append(binds, Root{Path: m})
	}
	binds = append(binds, spec.Roots...)
	sort.SliceStable(binds, func(i, j int) bool {
		return strings.Count(binds[i].Path, "/") < strings.Count(binds[j].Path, "/")
	})
	return binds
}
