package sandbox

import (
	"bufio"
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

// pidsCgroup is a fresh cgroup with a pids.max limit that holds one run:
// the child is moved into it while it is stopped at exec, and everything it
// forks (bwrap's sandbox, the landlock helper's program) inherits it. Unlike
// RLIMIT_NPROC it also holds for uid 0.
type pidsCgroup struct {
	dir string
	v2  bool
}

// procSelfCgroup is where homard's own cgroups are read (a variable so
// tests can make every hierarchy unusable).
var procSelfCgroup = "/proc/self/cgroup"

// pidsCgroupRemoved, if set (tests only), is called with the cgroup
// directory after its processes are gone and just before it is removed.
var pidsCgroupRemoved func(dir string)

// newPidsCgroup creates <hierarchy>/<homard's pids cgroup>/homard-<random>
// with pids.max = max, in the cgroup v1 pids hierarchy or the cgroup v2
// hierarchy (enabling the pids controller in homard's cgroup's
// subtree_control if it is available there and not yet enabled).
func newPidsCgroup(max uint64) (*pidsCgroup, error) {
	parent, v2, err := pidsCgroupParent()
	if err != nil {
		return nil, err
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, err
	}
	dir := filepath.Join(parent, "homard-"+hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create pids cgroup: %w", err)
	}
	cg := &pidsCgroup{dir: dir, v2: v2}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.FormatUint(max, 10)), 0); err != nil {
		_ = cg.remove()
		return nil, fmt.Errorf("set pids.max in %s: %w", dir, err)
	}
	return cg, nil
}

// add moves pid into the cgroup.
func (cg *pidsCgroup) add(pid int) error {
	if err := os.WriteFile(filepath.Join(cg.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("move pid %d into pids cgroup %s: %w", pid, cg.dir, err)
	}
	return nil
}

// remove kills whatever is left in the cgroup and removes it, retrying
// briefly while the kernel finishes releasing exited members.
func (cg *pidsCgroup) remove() error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		cg.killAll()
		if time.Now().After(deadline) || cg.empty() {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if pidsCgroupRemoved != nil {
		pidsCgroupRemoved(cg.dir)
	}
	for {
		err := unix.Rmdir(cg.dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("remove pids cgroup %s: %w", cg.dir, err)
		}
		cg.killAll()
		time.Sleep(5 * time.Millisecond)
	}
}

// killAll sends SIGKILL to every member (cgroup.kill on v2 when the kernel
// has it, otherwise each pid listed in cgroup.procs).
func (cg *pidsCgroup) killAll() {
	if cg.v2 {
		if err := os.WriteFile(filepath.Join(cg.dir, "cgroup.kill"), []byte("1"), 0); err == nil {
			return
		}
	}
	for _, pid := range cg.pids() {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
}

func (cg *pidsCgroup) empty() bool { return len(cg.pids()) == 0 }

func (cg *pidsCgroup) pids() []int {
	b, err := os.ReadFile(filepath.Join(cg.dir, "cgroup.procs"))
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

// pidsCgroupParent returns the directory of homard's own cgroup in a
// hierarchy where the pids controller can be used for a child cgroup.
func pidsCgroupParent() (dir string, v2 bool, err error) {
	own, err := os.ReadFile(procSelfCgroup)
	if err != nil {
		return "", false, err
	}
	var v1Path, v2Path string
	hasV2 := false
	for _, line := range strings.Split(string(own), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2Path, hasV2 = f[2], true
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "pids" {
				v1Path = f[2]
			}
		}
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return "", false, err
	}
	var why []string
	if v1Path != "" {
		for _, m := range mounts {
			if m.fstype == "cgroup" && m.hasOption("pids") {
				if d, ok := m.dirFor(v1Path); ok && writableDir(d) {
					return d, false, nil
				}
			}
		}
		why = append(why, fmt.Sprintf("no writable cgroup v1 pids hierarchy mounted for %s", v1Path))
	}
	if hasV2 {
		for _, m := range mounts {
			if m.fstype != "cgroup2" {
				continue
			}
			d, ok := m.dirFor(v2Path)
			if !ok {
				continue
			}
			if err := enableV2Pids(d); err != nil {
				why = append(why, err.Error())
				continue
			}
			return d, true, nil
		}
		if len(why) == 0 || v1Path == "" {
			why = append(why, "no usable cgroup2 mount")
		}
	}
	if len(why) == 0 {
		why = append(why, "no pids cgroup found in /proc/self/cgroup")
	}
	return "", false, errors.New(strings.Join(why, "; "))
}

// enableV2Pids makes sure a child of the cgroup v2 directory d gets a
// pids.max: pids must be in d's subtree_control, which is enabled only if it
// is available in cgroup.controllers and the kernel allows it.
func enableV2Pids(d string) error {
	sub, err := os.ReadFile(filepath.Join(d, "cgroup.subtree_control"))
	if err != nil {
		return fmt.Errorf("cgroup v2 %s: %v", d, err)
	}
	if hasWord(string(sub), "pids") {
		return nil
	}
	ctl, err := os.ReadFile(filepath.Join(d, "cgroup.controllers"))
	if err != nil || !hasWord(string(ctl), "pids") {
		return fmt.Errorf("cgroup v2 %s has no pids controller", d)
	}
	if err := os.WriteFile(filepath.Join(d, "cgroup.subtree_control"), []byte("+pids"), 0); err != nil {
		return fmt.Errorf("cannot enable the pids controller in %s: %v", d, err)
	}
	return nil
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

func writableDir(d string) bool {
	fi, err := os.Stat(d)
	return err == nil && fi.IsDir() && unix.Access(d, unix.W_OK) == nil
}

type cgroupMount struct {
	root, point, fstype string
	options             []string
}

func (m cgroupMount) hasOption(o string) bool {
	for _, x := range m.options {
		if x == o {
			return true
		}
	}
	return false
}

// dirFor maps a cgroup path from /proc/self/cgroup to a directory of this
// mount; it fails when the cgroup lies outside what the mount shows.
func (m cgroupMount) dirFor(path string) (string, bool) {
	rel, err := filepath.Rel(m.root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return filepath.Join(m.point, rel), true
}

// cgroupMounts lists cgroup and cgroup2 mounts from /proc/self/mountinfo.
func cgroupMounts() ([]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []cgroupMount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root point options [optional...] - fstype source super
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		a, b := strings.Fields(pre), strings.Fields(post)
		if len(a) < 5 || len(b) < 3 || (b[0] != "cgroup" && b[0] != "cgroup2") {
			continue
		}
		out = append(out, cgroupMount{
			root: unescapeMount(a[3]), point: unescapeMount(a[4]), fstype: b[0],
			options: strings.Split(b[2], ","),
		})
	}
	return out, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, ...).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
