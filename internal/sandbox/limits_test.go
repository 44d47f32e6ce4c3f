//go:build linux

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// limitLine finds the soft and hard value of one /proc/self/limits row.
func limitLine(t *testing.T, limits, name string) (soft, hard string) {
	t.Helper()
	for _, line := range strings.Split(limits, "\n") {
		if strings.HasPrefix(line, name) {
			f := strings.Fields(line[len(name):])
			if len(f) >= 2 {
				return f[0], f[1]
			}
		}
	}
	t.Fatalf("no %q row in /proc/self/limits:\n%s", name, limits)
	return "", ""
}

func checkLimits(t *testing.T, b Backend) {
	root := workspace(t)
	l := Limits{CPUSeconds: 7, MemoryBytes: 1 << 30, Processes: 77, FileBytes: 12345}
	nproc := "77"
	if os.Geteuid() == 0 { // refused for root (see checkRootRefused); inherited instead
		l.Processes, nproc = 0, ""
	}
	res := run(t, b, Spec{Mode: ModeWritable, Path: "/bin/cat", Args: []string{"/proc/self/limits"}, Dir: root, Root: root, Limits: l})
	out := string(res.Output)
	for _, c := range []struct{ row, soft, hard string }{
		{"Max cpu time", "7", "8"},
		{"Max address space", "1073741824", "1073741824"},
		{"Max processes", nproc, nproc},
		{"Max file size", "12345", "12345"},
	} {
		if c.soft == "" {
			continue
		}
		if soft, hard := limitLine(t, out, c.row); soft != c.soft || hard != c.hard {
			t.Errorf("%s: %s = %s/%s; want %s/%s", b.Name(), c.row, soft, hard, c.soft, c.hard)
		}
	}
}

func TestHostLimitsApplied(t *testing.T) { checkLimits(t, NewHost()) }

func TestHostFileSizeLimit(t *testing.T) {
	root := workspace(t)
	spec := Spec{Mode: ModeWritable, Path: "/bin/dd", Args: []string{"if=/dev/zero", "of=big", "bs=64k", "count=64"}, Dir: root, Root: root}
	res := run(t, NewHost(), spec) // control: 4 MiB without a limit
	if fi, err := os.Stat(filepath.Join(root, "big")); err != nil || fi.Size() != 4<<20 || res.ExitCode != 0 {
		t.Fatalf("control dd without limit: exit %d, %v; want a 4 MiB file", res.ExitCode, err)
	}
	spec.Limits.FileBytes = 1 << 20
	res = run(t, NewHost(), spec)
	fi, err := os.Stat(filepath.Join(root, "big"))
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 128+int(syscall.SIGXFSZ) || fi.Size() > 1<<20 {
		t.Errorf("dd with FileBytes=1MiB: exit %d size %d; want exit %d and size <= 1MiB (output %q)",
			res.ExitCode, fi.Size(), 128+int(syscall.SIGXFSZ), res.Output)
	}
}

func TestHostCPULimit(t *testing.T) {
	root := workspace(t)
	res := run(t, NewHost(), Spec{
		Path: "/bin/sh", Args: []string{"-c", "while :; do :; done"}, Dir: root, Root: root,
		Timeout: 30 * time.Second, Limits: Limits{CPUSeconds: 1},
	})
	if res.TimedOut || res.ExitCode != 128+int(syscall.SIGXCPU) {
		t.Errorf("busy loop with CPUSeconds=1: TimedOut=%v exit %d; want false, %d", res.TimedOut, res.ExitCode, 128+int(syscall.SIGXCPU))
	}
}

// effectiveCaps returns the CapEff mask of this process.
func effectiveCaps(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:\t"); ok {
			caps, err := strconv.ParseUint(v, 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return caps
		}
	}
	t.Fatal("no CapEff in /proc/self/status")
	return 0
}

const (
	capSysAdmin    = 21
	capSysResource = 24
)

// TestHostProcessLimit checks that RLIMIT_NPROC stops a fork loop. The
// kernel never enforces it for uid 0 nor for a child holding CAP_SYS_ADMIN or
// CAP_SYS_RESOURCE. A non-root test process without those runs the child as
// itself; root with CAP_SYS_RESOURCE runs it as nobody via Host.RunAs
// (setting limits on another uid needs that capability). Root without
// CAP_SYS_RESOURCE (Docker's default set) can do neither: there the test
// checks that the run is refused rather than run unlimited.
func TestHostProcessLimit(t *testing.T) {
	caps := effectiveCaps(t)
	h := NewHost()
	root := workspace(t)
	switch {
	case os.Geteuid() != 0 && caps&(1<<capSysAdmin|1<<capSysResource) == 0:
	case os.Geteuid() == 0 && caps&(1<<capSysResource) != 0:
		h.RunAs = &syscall.Credential{Uid: 65534, Gid: 65534}
		if err := os.Chmod(root, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Dir(root), 0o755); err != nil {
			t.Fatal(err)
		}
	case os.Geteuid() == 0:
		checkRootProcessLimit(t, h)
		return
	default:
		t.Skip("RLIMIT_NPROC is not enforced for a child holding CAP_SYS_ADMIN or CAP_SYS_RESOURCE")
	}
	checkProcessLimit(t, h, root)
}

// checkRootProcessLimit: as root the limit is a pids cgroup; the fork loop
// must be stopped. Without a usable pids cgroup (outside CI, where
// requirePidsCgroup fails) the run must be refused instead.
func checkRootProcessLimit(t *testing.T, b Backend) {
	if _, err := controllerParents([]string{"pids"}); err != nil && os.Getenv("CI") == "" {
		checkRootRefused(t, b)
		return
	}
	requirePidsCgroup(t)
	checkProcessLimit(t, b, workspace(t))
}

// checkRootRefused expects a Processes limit for a uid-0 child to be refused.
func checkRootRefused(t *testing.T, b Backend) {
	root := workspace(t)
	_, err := b.Run(t.Context(), Spec{Mode: ModeWritable, Path: "/bin/true", Dir: root, Root: root, Limits: Limits{Processes: 3}})
	if os.Geteuid() == 0 && !errors.Is(err, ErrUnenforceable) {
		t.Errorf("%s as root with Processes=3: err = %v; want ErrUnenforceable", b.Name(), err)
	}
}

// checkProcessLimit runs a fork loop without and then with Processes=3.
func checkProcessLimit(t *testing.T, b Backend, root string) {
	spec := Spec{
		Path: "/bin/sh", Args: []string{"-c", "for i in 1 2 3 4 5 6 7 8 9 10; do /bin/sleep 1 & done; wait; echo done"},
		Dir: root, Root: root,
	}
	res := run(t, b, spec) // control
	if strings.Contains(strings.ToLower(string(res.Output)), "fork") || !strings.Contains(string(res.Output), "done") {
		t.Fatalf("%s: control fork loop failed without a limit: %q", b.Name(), res.Output)
	}
	spec.Limits.Processes = 3
	res = run(t, b, spec)
	// bwrap may itself be unable to fork the sandbox (the count is per uid
	// and includes homard): nothing ran, which also honours the limit.
	if out := strings.ToLower(string(res.Output)); !strings.Contains(out, "fork") && !strings.Contains(out, "resource temporarily unavailable") || strings.Contains(out, "done") {
		t.Errorf("%s: fork loop with Processes=3: exit %d output %q; want a fork failure", b.Name(), res.ExitCode, res.Output)
	}
}
