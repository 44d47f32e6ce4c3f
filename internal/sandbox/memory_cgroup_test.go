//go:build linux

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// requireMemoryCgroup skips when no memory cgroup can be made here (not
// root, no delegation), and fails when CI is set: CI runs as root and must
// exercise the tree memory limit.
func requireMemoryCgroup(t *testing.T) {
	t.Helper()
	if err := TreeMemoryCheck(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no usable memory cgroup in CI, so Limits.TreeMemoryBytes cannot be enforced: %v (run as root with a writable cgroup v1 memory hierarchy, or delegate the cgroup v2 memory controller)", err)
		}
		t.Skipf("no usable memory cgroup (set CI=1 to make this fatal): %v", err)
	}
}

// memoryCgroupSeen is what a run's memory cgroup held just before it was
// removed.
type memoryCgroupSeen struct {
	limit    string // memory.max or memory.limit_in_bytes
	oomKills int
}

// watchMemoryCgroups records every memory cgroup removed during the test.
// Not for parallel tests: it sets a package variable.
func watchMemoryCgroups(t *testing.T) *[]memoryCgroupSeen {
	var got []memoryCgroupSeen
	runCgroupRemoved = func(dir string) {
		var s memoryCgroupSeen
		if b, err := os.ReadFile(filepath.Join(dir, "memory.max")); err == nil {
			s.limit = strings.TrimSpace(string(b))
		} else if b, err := os.ReadFile(filepath.Join(dir, "memory.limit_in_bytes")); err == nil {
			s.limit = strings.TrimSpace(string(b))
		} else {
			return // the pids hierarchy of a v1 machine
		}
		// v2: memory.events "oom_kill N"; v1: memory.oom_control "oom_kill N".
		for _, f := range []string{"memory.events", "memory.oom_control"} {
			b, _ := os.ReadFile(filepath.Join(dir, f))
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
					n, _ := strconv.Atoi(strings.TrimSpace(v))
					s.oomKills += n
				}
			}
		}
		got = append(got, s)
	}
	t.Cleanup(func() { runCgroupRemoved = nil })
	return &got
}

// holdTwice runs two pipelines at once, each holding 150 MiB in one tail
// process until its input ends four seconds later: each alone fits a
// 200 MiB tree limit (and would pass a per-process RLIMIT_AS of that
// size), together they do not.
const holdTwice = `
( (head -c 150M /dev/zero; sleep 4) | tail -c 150M >/dev/null; echo "a=$?" ) &
(head -c 150M /dev/zero; sleep 4) | tail -c 150M >/dev/null; echo "b=$?"
wait`

// TestTreeMemoryLimitHoldsForTheTree: in both backends, two processes of
// the command that together pass Limits.TreeMemoryBytes are stopped by
// the kernel's OOM killer in the run's memory cgroup; the twin, one such
// process under the same limit, runs to completion.
func TestTreeMemoryLimitHoldsForTheTree(t *testing.T) {
	requireMemoryCgroup(t)
	const limit = 200 << 20
	for _, b := range confining(t) {
		t.Run(b.Name(), func(t *testing.T) {
			seen := watchMemoryCgroups(t)
			root := workspace(t)
			p, a := sh(holdTwice)
			res := run(t, b, Spec{Path: p, Args: a, Dir: root, Root: root, Mode: ModeOverlay, Limits: Limits{TreeMemoryBytes: limit}})
			if res.Changes != nil {
				res.Changes.Close()
			}
			out := string(res.Output)
			if !strings.Contains(out, "=137") {
				t.Errorf("two 150 MiB processes under a 200 MiB tree limit: exit %d output %q; want one killed (status 137)", res.ExitCode, out)
			}
			if len(*seen) != 1 || (*seen)[0].limit != strconv.Itoa(limit) || (*seen)[0].oomKills == 0 {
				t.Errorf("memory cgroups removed: %+v; want one with limit %d and an OOM kill", *seen, limit)
			}

			*seen = nil
			p, a = sh(`(head -c 150M /dev/zero; sleep 1) | tail -c 150M >/dev/null; echo "one=$?"`)
			res = run(t, b, Spec{Path: p, Args: a, Dir: root, Root: root, Mode: ModeOverlay, Limits: Limits{TreeMemoryBytes: limit}})
			if res.Changes != nil {
				res.Changes.Close()
			}
			if out := string(res.Output); res.ExitCode != 0 || !strings.Contains(out, "one=0") {
				t.Errorf("one 150 MiB process under a 200 MiB tree limit: exit %d output %q; want one=0", res.ExitCode, out)
			}
			if len(*seen) != 1 || (*seen)[0].oomKills != 0 {
				t.Errorf("memory cgroups removed: %+v; want one without an OOM kill", *seen)
			}
		})
	}
}

// TestTreeMemoryWithoutCgroup: when no memory cgroup can be made, a
// command that needs an overlay (a write, code) is refused with
// ErrUnenforceable and does not run; a read on the read-only view runs
// without the tree limit. Not parallel: it swaps a package variable.
func TestTreeMemoryWithoutCgroup(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "cgroup")
	writeFile(t, empty, "")
	procSelfCgroup = empty
	defer func() { procSelfCgroup = "/proc/self/cgroup" }()
	backends := append([]Backend{NewHost()}, confining(t)...)
	for _, b := range backends {
		t.Run(b.Name(), func(t *testing.T) {
			root := workspace(t)
			writeFile(t, filepath.Join(root, "notes.txt"), "hello\n")
			lim := Limits{TreeMemoryBytes: DefaultTreeMemoryBytes}
			for _, mode := range []Mode{ModeOverlay, ModeWritable} {
				p, a := sh(`echo ran > ran.txt; echo ran`)
				res, err := b.Run(t.Context(), Spec{Path: p, Args: a, Dir: root, Root: root, Mode: mode, Limits: lim})
				if !errors.Is(err, ErrUnenforceable) || !strings.Contains(err.Error(), "memory") {
					t.Errorf("%s without a memory cgroup: err = %v (exit %d %q); want ErrUnenforceable naming the memory limit", mode, err, res.ExitCode, res.Output)
				}
				if res.Changes != nil {
					t.Errorf("%s: a refused run returned a change set", mode)
					res.Changes.Close()
				}
				if _, err := os.Stat(filepath.Join(root, "ran.txt")); err == nil {
					t.Errorf("%s: the command ran although its memory limit could not be enforced", mode)
				}
			}
			res := run(t, b, Spec{Path: "/bin/cat", Args: []string{"notes.txt"}, Dir: root, Root: root, Mode: ModeReadOnly, Limits: lim})
			if res.ExitCode != 0 || string(res.Output) != "hello\n" {
				t.Errorf("read-only without a memory cgroup: exit %d %q; want it to run", res.ExitCode, res.Output)
			}
		})
	}
}
