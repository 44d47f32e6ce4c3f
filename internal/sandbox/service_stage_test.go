//go:build linux

package sandbox

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	changeset "github.com/homard/homard/internal/workspace"
)

// stagedRun starts spec with an empty stdin, waits for it and returns its
// stdout, the paths of its change set (nil when Changes returned none)
// and Wait's error.
func stagedRun(t *testing.T, b *Bwrap, spec ServiceSpec) (out string, changed []string, err error) {
	t.Helper()
	s, out, err := serviceRunning(t, b, spec)
	f := s.Changes()
	if f == nil {
		return out, nil, err
	}
	defer f.Close()
	if s.Changes() != nil {
		t.Error("Changes returned the stream twice")
	}
	cs, rerr := changeset.ReadChanges(f, changeset.ReadOptions{})
	if rerr != nil {
		t.Fatalf("read the change set: %v", rerr)
	}
	defer cs.Close()
	changed = []string{}
	for _, e := range cs.Entries {
		changed = append(changed, e.Rel)
	}
	return out, changed, err
}

// TestServiceWritableRootIsAChangeSet: what a service writes to its
// writable root — an ordinary file, a changed one, a deletion, a planted
// git hook — lands in the change set and never on the real folder; the
// twin: the service reads and writes there as on a normal folder, and
// the change set holds exactly its changes. A service stopped before it
// ended keeps nothing, and one without a writable root has no change set.
func TestServiceWritableRootIsAChangeSet(t *testing.T) {
	b := requireBwrap(t)
	f := newServiceFiles(t)
	writeFile(t, filepath.Join(f.rw, "gone.txt"), "GONE")
	script := `cd "$0" && cat rw.txt && echo new > new.txt && echo changed >> rw.txt && rm gone.txt &&
mkdir -p .git/hooks && printf '#!/bin/sh\necho hook\n' > .git/hooks/post-commit && cat new.txt rw.txt`
	out, changed, err := stagedRun(t, b, f.spec("/bin/sh", "-c", script, f.rw))
	if err != nil || out != "RWTEXTnew\nRWTEXTchanged\n" {
		t.Fatalf("service in its writable root: output %q, Wait() = %v; want its own reads and writes to work", out, err)
	}
	slices.Sort(changed)
	want := []string{".git", ".git/hooks", ".git/hooks/post-commit", "gone.txt", "new.txt", "rw.txt"}
	if !slices.Equal(changed, want) {
		t.Errorf("change set = %q; want %q", changed, want)
	}
	for path, content := range map[string]string{"rw.txt": "RWTEXT", "gone.txt": "GONE"} {
		if b, err := os.ReadFile(filepath.Join(f.rw, path)); err != nil || string(b) != content {
			t.Errorf("real %s = %q, %v; want it untouched (%q)", path, b, err, content)
		}
	}
	for _, path := range []string{"new.txt", ".git/hooks"} {
		if _, err := os.Lstat(filepath.Join(f.rw, path)); err == nil {
			t.Errorf("real %s exists: the service wrote the real folder", path)
		}
	}

	t.Run("stopped before it ended", func(t *testing.T) {
		s := startService(t, b, f.spec("/bin/sh", "-c", `echo x > "$0/kept.txt"; echo ready; sleep 60`, f.rw))
		line := make([]byte, 6)
		if _, err := io.ReadFull(s.Stdout, line); err != nil || string(line) != "ready\n" {
			t.Fatalf("service did not start: %q, %v", line, err)
		}
		_ = s.Stop()
		if c := s.Changes(); c != nil {
			c.Close()
			t.Error("a stopped service returned a change set; nothing it did may be kept")
		}
	})
	t.Run("no writable root", func(t *testing.T) {
		spec := f.spec("/bin/sh", "-c", `echo x > "$0/new.txt" 2>&1; cat "$0/ro.txt"`, f.ro)
		spec.Roots = spec.Roots[:1]
		out, changed, err := stagedRun(t, b, spec)
		if err != nil || !strings.HasSuffix(out, "ROTEXT") || changed != nil {
			t.Errorf("read-only roots only: output %q, Wait() = %v, change set %q; want the read to work, no change set", out, err, changed)
		}
	})
}

// TestServiceRootsHideAndSanitize: a root's Hide paths are masked in the
// read-only and the writable root, and each repository's config is a
// sanitized copy; the twin: the files next to them read normally.
func TestServiceRootsHideAndSanitize(t *testing.T) {
	b := requireBwrap(t)
	f := newServiceFiles(t)
	writeFile(t, filepath.Join(f.ro, ".env"), "ROSECRET")
	writeFile(t, filepath.Join(f.rw, "keys", "id"), "RWSECRET")
	writeFile(t, filepath.Join(f.ro, ".git", "config"), "[core]\n\tfsmonitor = /tmp/evil\n\tbare = false\n")
	spec := f.spec("/bin/sh", "-c", `cat "$0/.env" "$1/keys/id" 2>&1; cat "$0/ro.txt" "$1/rw.txt" "$0/.git/config"`, f.ro, f.rw)
	spec.Roots[0].Hide = []string{filepath.Join(f.ro, ".env")}
	spec.Roots[1].Hide = []string{filepath.Join(f.rw, "keys")}
	out, _, err := stagedRun(t, b, spec)
	if strings.Contains(out, "ROSECRET") || strings.Contains(out, "RWSECRET") {
		t.Errorf("service read a hidden file: %q", out)
	}
	if strings.Contains(out, "fsmonitor") {
		t.Errorf("service saw the repository's fsmonitor: %q", out)
	}
	if err != nil || !strings.Contains(out, "ROTEXTRWTEXT") || !strings.Contains(out, "bare = false") {
		t.Errorf("service read its roots: output %q, Wait() = %v; want the files next to the hidden ones and the sanitized config", out, err)
	}
}

// TestServiceLimits: a service's whole tree is held to its process and
// memory limits — a fork loop stops at the process limit, and filling
// /tmp (a tmpfs the memory cgroup counts) past the memory limit is killed
// by the cgroup's OOM killer — in both starts (plain bwrap, and through
// the mount stage for a service with a writable root). The twins: a few
// processes and a few MiB run under the same limits.
func TestServiceLimits(t *testing.T) {
	b := requireBwrap(t)
	requireMemoryCgroup(t)
	f := newServiceFiles(t)
	forks := `n=0; for i in $(seq $0); do (sleep 2 &) 2>/dev/null && n=$((n+1)); done; echo started $n`
	fill := `head -c $(($0 << 20)) /dev/zero > /tmp/fill && echo filled`
	for _, withRoot := range []bool{false, true} {
		t.Run(fmt.Sprintf("writable root=%t", withRoot), func(t *testing.T) {
			spec := func(script, arg string) ServiceSpec {
				s := ServiceSpec{Argv: []string{"/bin/sh", "-c", script, arg},
					Limits: Limits{Processes: 40, TreeMemoryBytes: 96 << 20}}
				if withRoot {
					s.Roots = []Root{{Path: f.rw, Writable: true}}
				}
				return s
			}
			seen := watchMemoryCgroups(t)
			for _, tc := range []struct {
				name, script, arg, want string
				within                  bool
			}{
				{"a few processes", forks, "5", "started 5", true},
				{"a fork loop", forks, "200", "started 200", false},
				{"a few MiB of /tmp", fill, "8", "filled", true},
				{"/tmp past the memory limit", fill, "256", "filled", false},
			} {
				out, err := serviceRun(t, b, spec(tc.script, tc.arg))
				got := strings.Contains(out, tc.want)
				if got != tc.within {
					t.Errorf("%s: output %q, Wait() = %v; want %q printed=%v", tc.name, out, err, tc.want, tc.within)
				}
			}
			if len(*seen) == 0 || (*seen)[0].limit != strconv.Itoa(96<<20) {
				t.Errorf("memory cgroups seen %+v; want each run in one limited to %d bytes", *seen, 96<<20)
			}
		})
	}
}
