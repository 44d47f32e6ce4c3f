package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupLimits are the limits a run's cgroup holds for the child and
// everything it forks (bwrap's sandbox, the mount stage, the landlock
// helper's program). A zero field asks for no controller.
type cgroupLimits struct {
	// pidsMax is pids.max: unlike RLIMIT_NPROC it also holds for uid 0.
	pidsMax uint64
	// memoryMax is memory.max (v2) or memory.limit_in_bytes (v1), with
	// swap disabled: the whole tree's memory, tmpfs pages it writes
	// included (Limits.TreeMemoryBytes).
	memoryMax uint64
	// memoryRequired fails the run when no memory cgroup can be made; when
	// false (a read-only view) the run goes on without the tree limit.
	memoryRequired bool
}

func (l cgroupLimits) controllers() []string {
	var out []string
	if l.pidsMax > 0 {
		out = append(out, "pids")
	}
	if l.memoryMax > 0 {
		out = append(out, "memory")
	}
	return out
}

// runCgroup is a fresh cgroup that holds one run: the child is moved into
// it while it is stopped at exec, so the limits hold from its first
// instruction. With cgroup v1 each controller has its own hierarchy, so
// the run has one directory per hierarchy; with v2 a single directory.
type runCgroup struct {
	dirs []cgroupDir
}

type cgroupDir struct {
	path string
	v2   bool
}

// procSelfCgroup is where homard's own cgroups are read (a variable so
// tests can make every hierarchy unusable).
var procSelfCgroup = "/proc/self/cgroup"

// runCgroupRemoved, if set (tests only), is called with each cgroup
// directory after its processes are gone and just before it is removed.
var runCgroupRemoved func(dir string)

// newRunCgroup creates homard-<random> next to homard's own cgroup in each
// hierarchy holding a controller l asks for, and writes the limits.
func newRunCgroup(l cgroupLimits) (*runCgroup, error) {
	parents, err := controllerParents(l.controllers())
	if err != nil {
		return nil, err
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, err
	}
	name := "homard-" + hex.EncodeToString(rnd[:])
	cg := &runCgroup{}
	for _, ctrl := range l.controllers() {
		sweepStale(parents[ctrl].path)
	}
	made := map[string]string{} // parent → the run's directory in it
	for _, ctrl := range l.controllers() {
		p := parents[ctrl]
		dir, ok := made[p.path]
		if !ok {
			dir = filepath.Join(p.path, name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				_ = cg.remove()
				return nil, fmt.Errorf("create %s cgroup: %w", ctrl, err)
			}
			made[p.path] = dir
			cg.dirs = append(cg.dirs, cgroupDir{path: dir, v2: p.v2})
		}
		if err := writeLimit(dir, ctrl, p.v2, l); err != nil {
			_ = cg.remove()
			return nil, err
		}
	}
	return cg, nil
}

// staleAfter is how old an empty homard-* cgroup must be before another
// run removes it: a live run moves its first process in within
// milliseconds of creating its cgroup.
const staleAfter = time.Minute

// sweepStale removes the empty homard-* cgroups a killed homard left in
// parent (rmdir fails on a cgroup that still holds a process or a child,
// so a live run's is never touched; a fresh one is left by age).
func sweepStale(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "homard-") || e.Name() == selfLeaf {
			continue
		}
		fi, err := e.Info()
		if err != nil || time.Since(fi.ModTime()) < staleAfter {
			continue
		}
		_ = os.Remove(filepath.Join(parent, e.Name()))
	}
}

// writeLimit sets one controller's limit in dir. Swap is turned off for
// the memory limit where the kernel has the knob, so the tree cannot grow
// past it into swap.
func writeLimit(dir, ctrl string, v2 bool, l cgroupLimits) error {
	type setting struct {
		file, value string
		optional    bool // absent without swap accounting
	}
	var set []setting
	switch {
	case ctrl == "pids":
		set = []setting{{"pids.max", strconv.FormatUint(l.pidsMax, 10), false}}
	case v2:
		set = []setting{
			{"memory.max", strconv.FormatUint(l.memoryMax, 10), false},
			{"memory.swap.max", "0", true},
		}
	default:
		// memsw (memory + swap) must not be below the memory limit, so it
		// is written second.
		v := strconv.FormatUint(l.memoryMax, 10)
		set = []setting{{"memory.limit_in_bytes", v, false}, {"memory.memsw.limit_in_bytes", v, true}}
	}
	for _, s := range set {
		err := os.WriteFile(filepath.Join(dir, s.file), []byte(s.value), 0)
		if err != nil && !(s.optional && errors.Is(err, os.ErrNotExist)) {
			return fmt.Errorf("set %s in %s: %w", s.file, dir, err)
		}
	}
	return nil
}

// add moves pid into every directory of the run's cgroup.
func (cg *runCgroup) add(pid int) error {
	for _, d := range cg.dirs {
		if err := os.WriteFile(filepath.Join(d.path, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("move pid %d into cgroup %s: %w", pid, d.path, err)
		}
	}
	return nil
}

// remove kills whatever is left in the cgroup and removes its
// directories, retrying briefly while the kernel finishes releasing
// exited members.
func (cg *runCgroup) remove() error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		cg.killAll()
		if time.Now().After(deadline) || cg.empty() {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	var errs []error
	for _, d := range cg.dirs {
		if runCgroupRemoved != nil {
			runCgroupRemoved(d.path)
		}
		for {
			err := unix.Rmdir(d.path)
			if err == nil || errors.Is(err, unix.ENOENT) {
				break
			}
			if time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d.path, err))
				break
			}
			cg.killAll()
			time.Sleep(5 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

// killAll sends SIGKILL to every member (cgroup.kill on v2 when the kernel
// has it, otherwise each pid listed in cgroup.procs).
func (cg *runCgroup) killAll() {
	for _, d := range cg.dirs {
		if d.v2 {
			if err := os.WriteFile(filepath.Join(d.path, "cgroup.kill"), []byte("1"), 0); err == nil {
				continue
			}
		}
		for _, pid := range cgroupPids(d.path) {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
}

func (cg *runCgroup) empty() bool {
	for _, d := range cg.dirs {
		if len(cgroupPids(d.path)) > 0 {
			return false
		}
	}
	return true
}

func cgroupPids(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// TreeMemoryCheck says whether a memory limit for a command's whole
// process tree (Limits.TreeMemoryBytes) can be enforced on this machine,
// for `homard doctor`: it creates a memory cgroup as a run would, and
// removes it. A non-nil error says what is missing; then commands that
// need an overlay fail closed when the limit is set, and reads run
// without it.
func TreeMemoryCheck() error {
	cg, err := newRunCgroup(cgroupLimits{memoryMax: DefaultTreeMemoryBytes, memoryRequired: true})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnenforceable, err)
	}
	return cg.remove()
}
