//go:build linux

package sandbox

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// A service with workspace roots (a skill) starts through the mount stage
// that commands use (runMountStage), so its roots get the same views:
// the writable root an overlay whose upper layer is returned as a change
// set (Service.Changes) for homard to grade and apply, every other root a
// read-only bind; each with its masks (Root.Hide) and sanitized git
// configs. The stage then runs bubblewrap with the service's arguments,
// which bind the roots from the stage's view. The stage is pid 1 of its
// own pid namespace: killing it (Stop) ends the whole tree.

// serviceStage is what a staged service's start needs and what its end
// reads back.
type serviceStage struct {
	req       *os.File // the mountRequest (memfd)
	statusR   *os.File // a setup failure, written by the stage
	statusW   *os.File // the stage's end, closed once it started
	changes   *os.File // the upper layer's tar stream; nil without a writable root
	dropTemps func()   // removes the scratch folder
}

// staged reports whether spec starts through the mount stage.
func staged(spec ServiceSpec) bool { return len(spec.Roots) > 0 }

// prepareServiceStage builds the mount request for a normalized spec with
// roots: its writable root (or, without one, its first root) is the
// stage's Root, the others are read-only extras.
func prepareServiceStage(spec ServiceSpec, bwrapArgv []string, relay bool) (*serviceStage, error) {
	if !helperHooked.Load() {
		return nil, fmt.Errorf("%w: a service with workspace roots needs this binary to call sandbox.MaybeRunHelper at startup", ErrUnavailable)
	}
	primary := 0
	mode := ModeReadOnly
	for i, r := range spec.Roots {
		if r.Writable {
			primary, mode = i, ModeOverlay
		}
	}
	st := &serviceStage{}
	scratch, done, err := newScratch()
	if err != nil {
		return nil, err
	}
	st.dropTemps = done
	fail := func(err error) (*serviceStage, error) {
		st.close()
		return nil, err
	}
	req := mountRequest{
		Mode: mode, Root: spec.Roots[primary].Path, Dir: spec.Dir, Hide: spec.Roots[primary].Hide,
		Scratch: scratch, ScratchBytes: spec.ScratchBytes, ScratchFiles: DefaultScratchFiles,
		Next: "bwrap", NextArgv: bwrapArgv, Relay: relay,
	}
	if req.GitConfigs, err = repoConfigs(req.Root); err != nil {
		return fail(err)
	}
	for i, r := range spec.Roots {
		if i == primary {
			continue
		}
		x := extraRoot{Root: r.Path, Hide: r.Hide}
		if x.GitConfigs, err = repoConfigs(r.Path); err != nil {
			return fail(err)
		}
		req.Extra = append(req.Extra, x)
	}
	if st.req, err = memfdJSON("mount request", req); err != nil {
		return fail(err)
	}
	if mode == ModeOverlay {
		if st.changes, err = anonymousFile(); err != nil {
			return fail(err)
		}
	}
	if st.statusR, st.statusW, err = os.Pipe(); err != nil {
		return fail(fmt.Errorf("create status pipe: %w", err))
	}
	return st, nil
}

// command sets cmd up to run the mount stage with relayChild (or nil) as
// its relay socket.
func (st *serviceStage) command(cmd *syscallCmd, relayChild *os.File) {
	cmd.path = "/proc/self/exe"
	cmd.argv = []string{"homard-sandbox", mountArg}
	cmd.extra = []*os.File{st.req, st.statusW, nil, st.changes, relayChild}
	cmd.attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET | syscall.CLONE_NEWPID
	cmd.attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	cmd.attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
}

// started closes what only the stage needed.
func (st *serviceStage) started() {
	st.req.Close()
	st.req = nil
	st.statusW.Close()
	st.statusW = nil
}

// finish runs once the stage is gone and reaped: it reads a setup failure
// and keeps the change set only when the stage ended by itself with its
// stream complete (exited, not signaled, nothing reported).
func (st *serviceStage) finish(signaled bool) (changes *os.File, setupErr error) {
	msg, _ := io.ReadAll(io.LimitReader(st.statusR, 4096))
	st.statusR.Close()
	st.statusR = nil
	st.dropTemps()
	st.dropTemps = nil
	ch := st.changes
	st.changes = nil
	if len(msg) > 0 {
		setupErr = fmt.Errorf("sandbox setup failed: %s", msg)
	}
	if ch == nil {
		return nil, setupErr
	}
	if setupErr != nil || signaled {
		ch.Close()
		return nil, setupErr
	}
	if _, err := ch.Seek(0, io.SeekStart); err != nil {
		ch.Close()
		return nil, fmt.Errorf("rewind the change set: %w", err)
	}
	return ch, nil
}

// close releases everything still held (a start that failed).
func (st *serviceStage) close() {
	for _, f := range []*os.File{st.req, st.statusR, st.statusW, st.changes} {
		if f != nil {
			f.Close()
		}
	}
	if st.dropTemps != nil {
		st.dropTemps()
	}
}

// syscallCmd is the process a service start launches: bwrap itself, or
// the mount stage in front of it.
type syscallCmd struct {
	path  string
	argv  []string
	extra []*os.File
	attr  syscall.SysProcAttr
}
