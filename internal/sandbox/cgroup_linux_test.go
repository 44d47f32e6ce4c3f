package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// requirePidsCgroup returns the directory pids cgroups are created in. It
// skips when the test is not root (the cgroup is only used for uid 0) and,
// as root without a usable pids cgroup, skips locally but fails when CI is
// set: CI runs as root and must exercise the process limit.
func requirePidsCgroup(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the pids cgroup is only used for a root child")
	}
	parents, err := controllerParents([]string{"pids"})
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no usable pids cgroup in CI, so Limits.Processes cannot be enforced for root: %v (mount a writable cgroup v1 pids hierarchy or delegate the cgroup v2 pids controller)", err)
		}
		t.Skipf("no usable pids cgroup (set CI=1 to make this fatal): %v", err)
	}
	return parents["pids"].path
}

// watchPidsCgroups records each pids cgroup removed during the test, with
// its pids.max, pids.events "max" count and pids.peak (-1 if absent), read
// just before removal. Not for parallel tests: it sets a package variable.
type removedCgroup struct {
	dir       string
	max       string
	maxEvents int
	peak      int
}

func watchPidsCgroups(t *testing.T) *[]removedCgroup {
	var got []removedCgroup
	runCgroupRemoved = func(dir string) {
		rc := removedCgroup{dir: dir, peak: -1}
		b, _ := os.ReadFile(filepath.Join(dir, "pids.max"))
		rc.max = strings.TrimSpace(string(b))
		b, _ = os.ReadFile(filepath.Join(dir, "pids.events"))
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "max "); ok {
				rc.maxEvents, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if b, err := os.ReadFile(filepath.Join(dir, "pids.peak")); err == nil {
			rc.peak, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		got = append(got, rc)
	}
	t.Cleanup(func() { runCgroupRemoved = nil })
	return &got
}

// sampleCurrent polls pids.current of every homard-* cgroup under parent
// whose pids.max is 20 (this test's; other test binaries running at the
// same time — run_command in internal/app, as root — make their own
// homard-* cgroups with other limits) until stop is closed and returns the
// highest value seen.
func sampleCurrent(parent string, stop <-chan struct{}) (highest func() int) {
	var hi atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			dirs, _ := filepath.Glob(filepath.Join(parent, "homard-*", "pids.current"))
			for _, f := range dirs {
				if m, err := os.ReadFile(filepath.Join(filepath.Dir(f), "pids.max")); err != nil || strings.TrimSpace(string(m)) != "20" {
					continue
				}
				b, err := os.ReadFile(f)
				if err != nil {
					continue
				}
				if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && int64(n) > hi.Load() {
					hi.Store(int64(n))
				}
			}
		}
	}()
	return func() int { wg.Wait(); return int(hi.Load()) }
}

func assertCgroupRemoved(t *testing.T, removed []removedCgroup) {
	t.Helper()
	if len(removed) != 1 {
		t.Fatalf("%d pids cgroups were removed during the run; want 1", len(removed))
	}
	if _, err := os.Stat(removed[0].dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("pids cgroup %s still exists after Run (stat err %v)", removed[0].dir, err)
	}
}

// checkForkBombStopped runs a fork loop as root with Processes=20 and a 3 s
// timeout: the pids cgroup must keep the count at or below 20, the run must
// end by timeout, and the cgroup must be gone afterwards. bash, not sh: dash
// exits at its first failed fork, bash reports it and keeps looping.
func checkForkBombStopped(t *testing.T, b Backend) {
	parent := requirePidsCgroup(t)
	removed := watchPidsCgroups(t)
	root := workspace(t)
	stop := make(chan struct{})
	highest := sampleCurrent(parent, stop)
	res, err := b.Run(t.Context(), Spec{
		Path: "/bin/bash", Args: []string{"-c", "while :; do sleep 10 & done"}, Dir: root, Root: root,
		Timeout: 3 * time.Second, MaxOutput: 1 << 20, Limits: Limits{Processes: 20},
	})
	close(stop)
	hi := highest()
	if err != nil {
		t.Fatalf("%s: fork loop with Processes=20 as root: %v", b.Name(), err)
	}
	out := strings.ToLower(string(res.Output))
	forkErrs := strings.Count(out, "fork") + strings.Count(out, "resource temporarily unavailable")
	t.Logf("%s: timed out %v, exit %d, %d fork failures in output, highest pids.current %d, removed %+v",
		b.Name(), res.TimedOut, res.ExitCode, forkErrs, hi, *removed)
	if !res.TimedOut {
		t.Errorf("%s: fork loop did not end by timeout (exit %d, output %.200q)", b.Name(), res.ExitCode, res.Output)
	}
	if forkErrs == 0 {
		t.Errorf("%s: no fork failure in the output %.200q; want the limit to stop the loop", b.Name(), res.Output)
	}
	if hi > 20 {
		t.Errorf("%s: pids.current reached %d; want <= 20", b.Name(), hi)
	}
	assertCgroupRemoved(t, *removed)
	rc := (*removed)[0]
	if rc.max != "20" {
		t.Errorf("%s: pids.max = %q; want 20", b.Name(), rc.max)
	}
	if rc.maxEvents == 0 {
		t.Errorf("%s: pids.events reports no fork refused at pids.max", b.Name())
	}
	if rc.peak > 20 {
		t.Errorf("%s: pids.peak = %d; want <= 20", b.Name(), rc.peak)
	}
}

func TestHostPidsCgroupForkBomb(t *testing.T)  { checkForkBombStopped(t, NewHost()) }
func TestBwrapPidsCgroupForkBomb(t *testing.T) { checkForkBombStopped(t, requireBwrap(t)) }

// TestPidsCgroupRemovedAfterRun: an ordinary run with a process limit as
// root leaves no cgroup behind, for every backend available.
func TestPidsCgroupRemovedAfterRun(t *testing.T) {
	requirePidsCgroup(t)
	backends := []Backend{NewHost(), requireBwrap(t)}
	if l := NewLandlock(); l.Available() == nil {
		backends = append(backends, l)
	}
	for _, b := range backends {
		removed := watchPidsCgroups(t)
		root := workspace(t)
		res := run(t, b, Spec{Mode: ModeWritable, Path: "/bin/sh", Args: []string{"-c", "echo ok; sleep 30 &"}, Dir: root, Root: root, Limits: Limits{Processes: 20}})
		if !strings.Contains(string(res.Output), "ok") {
			t.Errorf("%s: output %q; want ok", b.Name(), res.Output)
		}
		assertCgroupRemoved(t, *removed)
	}
}

// TestPidsCgroupUnusableRefused: as root, when no pids cgroup can be found
// the run is refused (fail closed), never run without a process limit. Not
// parallel: it swaps a package variable.
func TestPidsCgroupUnusableRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the pids cgroup is only used for a root child")
	}
	empty := filepath.Join(t.TempDir(), "cgroup")
	writeFile(t, empty, "")
	procSelfCgroup = empty
	defer func() { procSelfCgroup = "/proc/self/cgroup" }()
	root := workspace(t)
	marker := filepath.Join(root, "ran")
	_, err := NewHost().Run(t.Context(), Spec{Mode: ModeWritable, Path: "/bin/touch", Args: []string{marker}, Dir: root, Root: root, Limits: Limits{Processes: 20}})
	if !errors.Is(err, ErrUnenforceable) {
		t.Errorf("host as root with Processes=20 and no pids cgroup: err = %v; want ErrUnenforceable", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the program ran although its process limit could not be enforced")
	}
}

// TestStaleRunCgroupsAreSwept: an empty homard-* cgroup a killed homard
// left behind is removed by the next run's cgroup setup; a fresh one (a
// run that is just starting) is left alone.
func TestStaleRunCgroupsAreSwept(t *testing.T) {
	parent := requirePidsCgroup(t)
	stale := filepath.Join(parent, "homard-stale-test")
	fresh := filepath.Join(parent, "homard-fresh-test")
	for _, d := range []string{stale, fresh} {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(d) })
	}
	old := time.Now().Add(-2 * staleAfter)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	cg, err := newRunCgroup(cgroupLimits{pidsMax: 10})
	if err != nil {
		t.Fatal(err)
	}
	_ = cg.remove()
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale cgroup %s was not removed (%v)", stale, err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh cgroup %s was removed: %v", fresh, err)
	}
}
