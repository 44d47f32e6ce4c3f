//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// bwrapServiceArgs builds the bubblewrap command line of a normalized
// service spec: the namespaces, identity, system view and seccomp filter of
// bwrapArgs, then a fresh /tmp and ServiceHome, then the mounts and roots
// (outer first), every .git of a writable root read-only. Nothing else of
// the machine's files is shown, so homard's home, data directory and vault
// do not exist inside, by any path.
func bwrapServiceArgs(spec ServiceSpec) ([]string, error) {
	// --unshare-all includes the network namespace: only a loopback of
	// its own. The pid namespace with --die-with-parent makes the whole
	// tree die with bwrap (see Service.Stop).
	a, err := bwrapSystemArgs()
	if err != nil {
		return nil, err
	}
	if spec.HostNetwork {
		// The operator's opt-in: keep the machine's network namespace
		// (bwrap's --share-net after --unshare-all) and its resolver.
		a = append(a, "--share-net", "--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf", "--ro-bind-try", "/etc/hosts", "/etc/hosts")
	}
	size := strconv.FormatInt(spec.ScratchBytes, 10)
	a = append(a, "--proc", "/proc", "--dev", "/dev",
		"--size", strconv.FormatInt(bwrapShmBytes, 10), "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
		"--size", size, "--tmpfs", "/tmp",
		"--perms", "0700", "--size", size, "--tmpfs", ServiceHome,
		"--add-seccomp-fd", strconv.Itoa(bwrapSeccompFD))
	for _, b := range serviceBinds(spec) {
		switch {
		case !b.Writable:
			a = append(a, "--ro-bind", b.Path, b.Path)
		case staged(spec):
			// The mount stage's overlay: writes land on its upper
			// layer, a change set graded before anything is applied.
			a = append(a, "--bind", b.Path, b.Path)
		default:
			return nil, fmt.Errorf("%w: a writable root %s needs the mount stage", ErrInvalidSpec, b.Path)
		}
	}
	// bwrap's own root is a tmpfs without a size, writable by the service
	// where bwrap made folders (the way to a mount): read-only once every
	// mount is in place. The mounts below it keep their own flags.
	argv := spec.Argv
	if spec.Proxy != nil {
		exe, err := relayBinary()
		if err != nil {
			return nil, err
		}
		a = append(a, "--ro-bind", exe, relayPath)
		argv = append([]string{relayPath, relayArg}, argv...)
	}
	a = append(a, "--remount-ro", "/", "--chdir", spec.Dir)
	for _, e := range spec.Env {
		k, v, _ := strings.Cut(e, "=")
		a = append(a, "--setenv", k, v)
	}
	return append(append(a, "--"), argv...), nil
}

// relayBinary is homard's own binary, which runs the relay inside the
// sandbox (see runRelay).
func relayBinary() (string, error) {
	if !helperHooked.Load() {
		return "", fmt.Errorf("%w: a service's network proxy needs this binary to call sandbox.MaybeRunHelper at startup", ErrUnavailable)
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "", fmt.Errorf("find homard's binary for the service's relay: %w", err)
	}
	return exe, nil
}

// startBwrapService starts bwrap for spec with three pipes, in its own
// process group and with SIGKILL as its parent-death signal. bwrap is the
// only process homard starts; the service's processes live in bwrap's pid
// namespace, whose init bwrap's --die-with-parent ties to bwrap: killing
// bwrap kills the whole tree, whatever the service forked or setsid'd.
func startBwrapService(ctx context.Context, bin string, spec ServiceSpec) (*Service, error) {
	args, err := bwrapServiceArgs(spec)
	if err != nil {
		return nil, err
	}
	var relayChild *os.File
	var ctl *net.UnixConn
	if spec.Proxy != nil {
		if relayChild, ctl, err = relayEnds(); err != nil {
			return nil, err
		}
		defer relayChild.Close()
	}
	launch := syscallCmd{path: bin, argv: append([]string{bin}, args...)}
	var stage *serviceStage
	if staged(spec) {
		// The stage makes the seccomp filter for bwrap itself.
		if stage, err = prepareServiceStage(spec, launch.argv, relayChild != nil); err != nil {
			if ctl != nil {
				ctl.Close()
			}
			return nil, err
		}
		stage.command(&launch, relayChild)
	} else {
		filter, err := seccompFile() // bwrap's fd 3 (bwrapSeccompFD)
		if err != nil {
			if ctl != nil {
				ctl.Close()
			}
			return nil, fmt.Errorf("prepare the seccomp filter: %w", err)
		}
		defer filter.Close()
		launch.extra = []*os.File{filter}
		if relayChild != nil {
			launch.extra = append(launch.extra, relayChild) // relayCtlFD
		}
	}
	var pipes [3][2]*os.File // stdin, stdout, stderr: [read end, write end]
	closeAll := func() {
		if ctl != nil {
			ctl.Close()
		}
		if stage != nil {
			stage.close()
		}
		for _, p := range pipes {
			for _, f := range p {
				if f != nil {
					f.Close()
				}
			}
		}
	}
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("create service pipes: %w", err)
		}
		pipes[i] = [2]*os.File{r, w}
	}
	launch.attr.Setpgid = true
	launch.attr.Pdeathsig = syscall.SIGKILL
	// The limits hold from the first instruction of bwrap (or the mount
	// stage) for every process it starts.
	mode := ModeReadOnly
	if slices.ContainsFunc(spec.Roots, func(r Root) bool { return r.Writable }) {
		mode = ModeOverlay // the memory cgroup is required
	}
	rlimits, cgl := splitLimits(spec.Limits, os.Getuid(), mode)
	cg, err := makeRunCgroup(cgl)
	if err != nil {
		closeAll()
		return nil, err
	}
	dropCgroup := func() {
		if cg != nil {
			_ = cg.remove()
		}
	}
	cmd := &exec.Cmd{
		Path:        launch.path,
		Args:        launch.argv,
		Env:         []string{}, // bwrap itself gets nothing; the service gets --setenv entries
		Dir:         "/",
		Stdin:       pipes[0][0],
		Stdout:      pipes[1][1],
		Stderr:      pipes[2][1],
		ExtraFiles:  launch.extra,
		SysProcAttr: &launch.attr,
	}
	if err := startWithLimits(cmd, rlimits, cg); err != nil {
		closeAll()
		dropCgroup()
		return nil, fmt.Errorf("start the sandbox for %s: %w", spec.Argv[0], err)
	}
	if stage != nil {
		stage.started()
	}
	// The child holds its own copies: EOF on Stdout and stderr comes when
	// every process of the service is gone.
	pipes[0][0].Close()
	pipes[1][1].Close()
	pipes[2][1].Close()
	pid := cmd.Process.Pid
	s := &Service{
		Stdin:   pipes[0][1],
		Stdout:  pipes[1][0],
		program: spec.Argv[0],
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	var cancelHandlers context.CancelFunc
	s.handlerCtx, cancelHandlers = context.WithCancel(ctx)
	relayDone := make(chan struct{})
	if ctl != nil {
		go func() { // owned by the Service; ends at EOF, when the relay is gone
			defer close(relayDone)
			serveRelay(s, ctl, spec.Proxy)
		}()
	} else {
		close(relayDone)
	}
	var reaped bool // guarded by s.mu: after it, pid may belong to another process
	s.kill = func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !reaped {
			killGroup(pid)
		}
	}
	stderrDone := make(chan struct{})
	go func() { // owned by the Service; ends at EOF, when the tree is gone
		defer close(stderrDone)
		copyStderr(s, pipes[2][0], spec.Stderr)
		pipes[2][0].Close()
	}()
	go func() { // owned by the Service; ends when the service ends or ctx does
		select {
		case <-ctx.Done():
			_ = s.Stop()
		case <-s.done:
		}
	}()
	go func() { // owned by the Service; ends when bwrap exits, then closes done
		waitExited(pid)
		s.mu.Lock()
		// bwrap exited but is not reaped: its pgid cannot be reused yet,
		// so this only hits what is left of its group.
		killGroup(pid)
		_ = cmd.Wait()
		reaped = true
		s.mu.Unlock()
		dropCgroup() // the tree is gone: bwrap's pid namespace died with it
		<-stderrDone
		<-relayDone
		cancelHandlers()
		s.handlers.Wait()
		code := cmd.ProcessState.ExitCode()
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		signaled := ok && ws.Signaled()
		if signaled {
			code = 128 + int(ws.Signal())
		}
		var setupErr error
		if stage != nil {
			var changes *os.File
			changes, setupErr = stage.finish(signaled)
			s.mu.Lock()
			s.changes = changes
			s.mu.Unlock()
		}
		s.finish(code, setupErr)
		close(s.done)
	}()
	return s, nil
}

// copyStderr copies the service's stderr to w (nil discards it) and keeps
// its end for Wait's error. A failing w is dropped, never blocking the
// service.
func copyStderr(s *Service, r io.Reader, w io.Writer) {
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			s.keepTail(buf[:n])
			if w != nil {
				if _, werr := w.Write(buf[:n]); werr != nil {
					w = nil
				}
			}
		}
		if err != nil {
			return
		}
	}
}
