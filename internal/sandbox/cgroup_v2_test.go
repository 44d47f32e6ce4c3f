//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeV2 describes a cgroup v2-only machine: /proc/self/cgroup puts
// homard at own, and mountinfo mounts the hierarchy's root at a temporary
// folder, whose cgroup files are plain files the test fills. Not for
// parallel tests: it swaps package variables.
func fakeV2(t *testing.T, own string) (mount string) {
	t.Helper()
	mount = t.TempDir()
	dir := t.TempDir()
	cg, mi := filepath.Join(dir, "cgroup"), filepath.Join(dir, "mountinfo")
	writeFile(t, cg, "0::"+own+"\n")
	writeFile(t, mi, "30 1 0:26 / "+mount+" rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n")
	procSelfCgroup, procSelfMountinfo = cg, mi
	t.Cleanup(func() { procSelfCgroup, procSelfMountinfo = "/proc/self/cgroup", "/proc/self/mountinfo" })
	return mount
}

// TestCgroupV2Parent: on cgroup v2 the run's cgroup is made next to
// homard's own, with pids and memory enabled for its children when they
// are delegated; a controller that is not delegated is an error naming
// it; a homard that stepped into its leaf earlier makes runs next to the
// leaf, not inside it.
func TestCgroupV2Parent(t *testing.T) {
	for _, tc := range []struct {
		name, own      string
		controllers    string // the own cgroup's cgroup.controllers
		subtree        string // and cgroup.subtree_control
		wantDir        string // relative to the mount; "" wants an error
		wantSubtree    string
		wantErrContain string
	}{
		{"delegated", "/svc", "cpu memory pids", "", "svc", "+pids +memory", ""},
		{"already enabled", "/svc", "memory pids", "memory pids", "svc", "memory pids", ""},
		{"memory not delegated", "/svc", "pids", "", "", "", "no memory controller"},
		{"stepped into its leaf", "/svc/" + selfLeaf, "memory pids", "memory pids", "svc", "memory pids", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mount := fakeV2(t, tc.own)
			own := filepath.Join(mount, strings.TrimSuffix(tc.own, "/"+selfLeaf))
			writeFile(t, filepath.Join(own, "cgroup.controllers"), tc.controllers)
			writeFile(t, filepath.Join(own, "cgroup.subtree_control"), tc.subtree)
			got, err := controllerParents([]string{"pids", "memory"})
			if tc.wantDir == "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrContain) {
					t.Fatalf("controllerParents = %v, %v; want an error containing %q", got, err, tc.wantErrContain)
				}
				return
			}
			if err != nil {
				t.Fatalf("controllerParents: %v", err)
			}
			want := cgroupDir{path: filepath.Join(mount, tc.wantDir), v2: true}
			if got["pids"] != want || got["memory"] != want {
				t.Errorf("controllerParents = %v; want both in %v", got, want)
			}
			if b, _ := os.ReadFile(filepath.Join(own, "cgroup.subtree_control")); string(b) != tc.wantSubtree {
				t.Errorf("subtree_control = %q; want %q", b, tc.wantSubtree)
			}
		})
	}
}

// TestRunCgroupV2Files: one v2 directory holds both limits, swap off.
func TestRunCgroupV2Files(t *testing.T) {
	mount := fakeV2(t, "/svc")
	own := filepath.Join(mount, "svc")
	writeFile(t, filepath.Join(own, "cgroup.controllers"), "memory pids")
	writeFile(t, filepath.Join(own, "cgroup.subtree_control"), "memory pids")
	cg, err := newRunCgroup(cgroupLimits{pidsMax: 64, memoryMax: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if len(cg.dirs) != 1 || !cg.dirs[0].v2 || filepath.Dir(cg.dirs[0].path) != own {
		t.Fatalf("run cgroup dirs = %+v; want one v2 folder in %s", cg.dirs, own)
	}
	for file, want := range map[string]string{"pids.max": "64", "memory.max": strconv.Itoa(1 << 30), "memory.swap.max": "0"} {
		if b, _ := os.ReadFile(filepath.Join(cg.dirs[0].path, file)); string(b) != want {
			t.Errorf("%s = %q; want %q", file, b, want)
		}
	}
}

// TestEnterSelfLeaf: homard moves itself into its leaf only when it is
// alone in its cgroup; with another process there it says what to do.
func TestEnterSelfLeaf(t *testing.T) {
	d := t.TempDir()
	writeFile(t, filepath.Join(d, "cgroup.procs"), strconv.Itoa(os.Getpid())+"\n")
	if err := enterSelfLeaf(d); err != nil {
		t.Fatalf("enterSelfLeaf alone: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(d, selfLeaf, "cgroup.procs")); string(b) != strconv.Itoa(os.Getpid()) {
		t.Errorf("leaf cgroup.procs = %q; want homard's pid", b)
	}
	other := t.TempDir()
	writeFile(t, filepath.Join(other, "cgroup.procs"), "1\n"+strconv.Itoa(os.Getpid())+"\n")
	if err := enterSelfLeaf(other); err == nil || !strings.Contains(err.Error(), "Delegate=yes") {
		t.Errorf("enterSelfLeaf with another process = %v; want an error saying what to do", err)
	}
	if _, err := os.Stat(filepath.Join(other, selfLeaf)); err == nil {
		t.Error("a leaf was made although homard is not alone")
	}
}
