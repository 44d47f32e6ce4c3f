package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// selfLeaf is the cgroup v2 folder homard moves itself into when its own
// cgroup must hand the memory controller to its children: v2 lets a
// cgroup that still holds processes enable no domain controller (memory)
// for its children, so homard, alone in a delegated cgroup (a systemd
// service with Delegate=yes), steps into this leaf once and creates each
// run's cgroup next to it.
const selfLeaf = "homard-self"

// procSelfMountinfo is where the cgroup mounts are read (a variable so
// tests can describe a cgroup v2 machine).
var procSelfMountinfo = "/proc/self/mountinfo"

// controllerParents returns, for each controller, the directory the run's
// cgroup is created in: homard's own cgroup in the cgroup v1 hierarchy
// holding the controller, or in the cgroup v2 hierarchy (with the
// controllers enabled for its children).
func controllerParents(ctrls []string) (map[string]cgroupDir, error) {
	own, err := os.ReadFile(procSelfCgroup)
	if err != nil {
		return nil, err
	}
	v1Paths := map[string]string{} // controller → homard's cgroup in its v1 hierarchy
	var v2Path string
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
			v1Paths[c] = f[2]
		}
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	out := map[string]cgroupDir{}
	var onV2 []string
	for _, ctrl := range ctrls {
		path, ok := v1Paths[ctrl]
		if !ok {
			onV2 = append(onV2, ctrl)
			continue
		}
		// A controller bound to a v1 hierarchy cannot be used on v2.
		found := false
		for _, m := range mounts {
			if m.fstype == "cgroup" && m.hasOption(ctrl) {
				if d, ok := m.dirFor(path); ok && writableDir(d) {
					out[ctrl], found = cgroupDir{path: d}, true
					break
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("no writable cgroup v1 %s hierarchy mounted for %s", ctrl, path)
		}
	}
	if len(onV2) == 0 {
		return out, nil
	}
	if !hasV2 {
		return nil, fmt.Errorf("no %s cgroup found in %s", strings.Join(onV2, " or "), procSelfCgroup)
	}
	d, err := v2Parent(mounts, v2Path, onV2)
	if err != nil {
		return nil, err
	}
	for _, ctrl := range onV2 {
		out[ctrl] = d
	}
	return out, nil
}

// v2Parent finds a cgroup v2 directory whose children get ctrls: homard's
// own cgroup (stepping into selfLeaf when it must), else the root of the
// hierarchy as this process sees it (writable only to a root homard; the
// run's own limits still hold there).
func v2Parent(mounts []cgroupMount, v2Path string, ctrls []string) (cgroupDir, error) {
	var why []string
	for _, m := range mounts {
		if m.fstype != "cgroup2" {
			continue
		}
		own, ok := m.dirFor(v2Path)
		if !ok {
			continue
		}
		if filepath.Base(own) == selfLeaf {
			own = filepath.Dir(own) // homard stepped into its leaf earlier
		}
		err := enableV2(own, ctrls)
		if errors.Is(err, unix.EBUSY) {
			if err = enterSelfLeaf(own); err == nil {
				err = enableV2(own, ctrls)
			}
		}
		if err == nil {
			return cgroupDir{path: own, v2: true}, nil
		}
		why = append(why, err.Error())
		if own != m.point {
			if err := enableV2(m.point, ctrls); err == nil && writableDir(m.point) {
				return cgroupDir{path: m.point, v2: true}, nil
			}
		}
	}
	if len(why) == 0 {
		why = append(why, "no usable cgroup2 mount")
	}
	return cgroupDir{}, errors.New(strings.Join(why, "; "))
}

// enableV2 makes sure children of the cgroup v2 directory d get ctrls:
// each must be in d's subtree_control, and is enabled there if it is
// available in cgroup.controllers and the kernel allows it.
func enableV2(d string, ctrls []string) error {
	sub, err := os.ReadFile(filepath.Join(d, "cgroup.subtree_control"))
	if err != nil {
		return fmt.Errorf("cgroup v2 %s: %w", d, err)
	}
	var missing []string
	for _, c := range ctrls {
		if !hasWord(string(sub), c) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	avail, _ := os.ReadFile(filepath.Join(d, "cgroup.controllers"))
	var enable []string
	for _, c := range missing {
		if !hasWord(string(avail), c) {
			return fmt.Errorf("cgroup v2 %s has no %s controller (it is not delegated to homard's cgroup)", d, c)
		}
		enable = append(enable, "+"+c)
	}
	if err := os.WriteFile(filepath.Join(d, "cgroup.subtree_control"), []byte(strings.Join(enable, " ")), 0); err != nil {
		return fmt.Errorf("cannot enable the %s controller in %s: %w", strings.Join(missing, " and "), d, err)
	}
	return nil
}

// enterSelfLeaf moves homard into <d>/selfLeaf when it is the only process
// in d, so that d may enable domain controllers for its children.
func enterSelfLeaf(d string) error {
	pids := cgroupPids(d)
	if !slices.Equal(pids, []int{os.Getpid()}) {
		return fmt.Errorf("homard's cgroup %s holds other processes (%d), so cgroup v2 cannot give a child its own memory limit; run homard alone in a delegated cgroup (systemd: Delegate=yes)", d, len(pids))
	}
	leaf := filepath.Join(d, selfLeaf)
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create %s: %w", leaf, err)
	}
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		return fmt.Errorf("move homard into %s: %w", leaf, err)
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
	f, err := os.Open(procSelfMountinfo)
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
