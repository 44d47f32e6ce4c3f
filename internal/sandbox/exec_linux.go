package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// drainGrace bounds how long output is read after the process group is gone,
// in case a descendant escaped the group (setsid) and still holds the pipe.
const drainGrace = 500 * time.Millisecond

// namespaces are the Linux namespaces created for a command's child (see
// syscall.SysProcAttr); the zero value creates none.
type namespaces struct {
	cloneflags     uintptr
	uidMap, gidMap []syscall.SysProcIDMap
}

// execute runs c in its own process group, captures combined output through
// one pipe up to the cap, kills the whole group on timeout, cancellation or
// when the leader exits, and reaps the leader.
func execute(ctx context.Context, c command) (Result, error) {
	runCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("create output pipe: %w", err)
	}
	defer pr.Close()
	env := append([]string{}, c.env...) // never nil: nil would inherit homard's environment
	cmd := &exec.Cmd{
		Path:       c.path,
		Args:       c.argv,
		Env:        env,
		Dir:        c.dir,
		Stdout:     pw,
		Stderr:     pw,
		ExtraFiles: c.extraFiles,
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:     true,
			Pdeathsig:   syscall.SIGKILL,
			Credential:  c.cred,
			Cloneflags:  c.ns.cloneflags,
			UidMappings: c.ns.uidMap,
			GidMappings: c.ns.gidMap,
		},
	}
	if c.stdin != nil {
		cmd.Stdin = bytes.NewReader(c.stdin)
	}
	cg, err := makeRunCgroup(c.cgroup)
	if err != nil {
		pw.Close()
		return Result{}, err
	}
	if cg != nil {
		// Runs after the leader is reaped and the group killed (below).
		defer func() { _ = cg.remove() }()
	}
	start := time.Now()
	err = startWithLimits(cmd, c.limits, cg)
	pw.Close() // the child holds its own copy; EOF comes when every writer is gone
	if err != nil {
		return Result{}, fmt.Errorf("start %s: %w", c.path, err)
	}
	pid := cmd.Process.Pid

	out := newCapWriter(c.maxOutput)
	readDone := make(chan struct{})
	go func() { // owned by execute; ends at EOF or when pr is closed below
		defer close(readDone)
		_, _ = io.Copy(out, pr)
	}()
	exited := make(chan struct{})
	go func() { // owned by execute; ends when the leader exits (killed or not)
		defer close(exited)
		waitExited(pid)
	}()

	select {
	case <-exited:
	case <-runCtx.Done():
		killGroup(pid)
		<-exited
	}
	// The leader has exited but is not reaped yet, so its pid (= pgid)
	// cannot be reused: killing the group now only hits our descendants.
	killGroup(pid)
	waitErr := cmd.Wait()
	dur := time.Since(start)

	select {
	case <-readDone:
	case <-time.After(drainGrace):
		pr.Close()
		<-readDone
	}

	res := Result{Output: out.bytes(), Truncated: out.truncated, Duration: dur}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.ExitCode = 128 + int(ws.Signal())
		res.signaled = true
	} else {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return res, fmt.Errorf("wait for %s: %w", c.path, waitErr)
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("run %s cancelled: %w", c.path, ctx.Err())
	}
	res.TimedOut = errors.Is(runCtx.Err(), context.DeadlineExceeded)
	return res, nil
}

// makeRunCgroup creates the run's cgroup for l, or none when l asks for
// no controller. A memory limit that is not required (a read-only view)
// is dropped when no memory cgroup can be made; any other failure is
// ErrUnenforceable, so the run never goes on weaker than asked.
func makeRunCgroup(l cgroupLimits) (*runCgroup, error) {
	if len(l.controllers()) == 0 {
		return nil, nil
	}
	cg, err := newRunCgroup(l)
	if err == nil {
		return cg, nil
	}
	if l.memoryMax > 0 {
		if l.memoryRequired {
			return nil, fmt.Errorf("%w: the memory limit for the command's whole process tree needs a memory cgroup, and none can be made here (%v); run homard as root or in a cgroup v2 subtree delegated to it with the memory controller (systemd: Delegate=yes), mount a writable cgroup v1 memory hierarchy, or set the tree memory limit to 0", ErrUnenforceable, err)
		}
		l.memoryMax = 0
		if len(l.controllers()) == 0 {
			return nil, nil
		}
		if cg, err = newRunCgroup(l); err == nil {
			return cg, nil
		}
	}
	return nil, fmt.Errorf("%w: the kernel does not apply a process limit to uid 0 and no pids cgroup can be used (%v); run homard as a non-root user (or give the host backend a non-root RunAs), mount a writable pids cgroup, or set the process limit to 0", ErrUnenforceable, err)
}

// waitExited blocks until pid has exited without reaping it.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

func killGroup(pgid int) { _ = unix.Kill(-pgid, unix.SIGKILL) }

// startWithLimits starts cmd and, if any limit or a cgroup is set,
// applies them before the new program runs a single instruction: the child
// is traced (PTRACE_TRACEME), so it stops with SIGTRAP right after execve;
// we move it into cg, set the rlimits with prlimit(2) and detach. ptrace
// requests must come from the tracing thread, hence LockOSThread.
func startWithLimits(cmd *exec.Cmd, l Limits, cg *runCgroup) error {
	if l.isZero() && cg == nil {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr.Ptrace = true
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	fail := func(err error) error {
		_ = unix.Kill(pid, unix.SIGKILL)
		_ = cmd.Wait()
		return fmt.Errorf("apply resource limits: %w", err)
	}
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fail(err)
		}
		break
	}
	if !ws.Stopped() || ws.StopSignal() != unix.SIGTRAP {
		return fail(fmt.Errorf("child did not stop after exec (status %#x)", uint32(ws)))
	}
	if cg != nil {
		if err := cg.add(pid); err != nil {
			return fail(fmt.Errorf("%w: %v", ErrUnenforceable, err))
		}
	}
	if err := applyLimits(pid, l); err != nil {
		return fail(err)
	}
	if err := unix.PtraceDetach(pid); err != nil {
		return fail(fmt.Errorf("detach: %w", err))
	}
	return nil
}

// applyLimits sets the non-zero limits of l on pid (0 means this process)
// with prlimit(2). It is shared by the ptrace path above and the landlock
// helper, which limits itself just before it execs the program.
func applyLimits(pid int, l Limits) error {
	set := []struct {
		res      int
		cur, max uint64
	}{
		// SIGXCPU at the soft limit, SIGKILL one second later if ignored.
		{unix.RLIMIT_CPU, l.CPUSeconds, l.CPUSeconds + 1},
		{unix.RLIMIT_AS, l.MemoryBytes, l.MemoryBytes},
		{unix.RLIMIT_NPROC, l.Processes, l.Processes},
		{unix.RLIMIT_FSIZE, l.FileBytes, l.FileBytes},
	}
	for _, s := range set {
		if s.cur == 0 {
			continue
		}
		if err := unix.Prlimit(pid, s.res, &unix.Rlimit{Cur: s.cur, Max: s.max}, nil); err != nil {
			return fmt.Errorf("prlimit %d: %w", s.res, err)
		}
	}
	return nil
}

// markInheritedCloexec sets close-on-exec on every descriptor from first
// up, so that nothing homard's own parent left open (a terminal, a pipe of
// the service manager or of a test harness) reaches the command. The
// mount stage and the landlock helper call it before they start anything.
func markInheritedCloexec(first int) error {
	if err := unix.CloseRange(uint(first), math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	ents, err := os.ReadDir("/proc/self/fd") // kernels before 5.11
	if err != nil {
		return fmt.Errorf("list inherited descriptors: %w", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < first {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("close inherited descriptor %d: %w", fd, err)
		}
	}
	return nil
}
