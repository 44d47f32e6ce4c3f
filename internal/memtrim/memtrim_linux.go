//go:build linux

package memtrim

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// AfterStart pages out the executable's read-only mappings (code and
// constant data). It is safe to call at any time:
// a page it reclaims is read back when next used. An error means nothing
// was advised (an old kernel without MADV_PAGEOUT: EINVAL).
func AfterStart() (Result, error) {
	exe, err := os.Executable()
	if err != nil {
		return Result{}, err
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return Result{}, err
	}
	regions, err := readOnlyRegions(maps, exe)
	if err != nil {
		return Result{}, err
	}
	var res Result
	for _, r := range regions {
		// Raw syscall with addresses as integers: the regions are not Go
		// memory, and a []byte over them would only be for madvise.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, r[0], r[1]-r[0], unix.MADV_PAGEOUT); errno != 0 {
			return res, fmt.Errorf("madvise(MADV_PAGEOUT) %#x-%#x: %w", r[0], r[1], errno)
		}
		res.Regions++
		res.Bytes += uint64(r[1] - r[0])
	}
	return res, nil
}

// readOnlyRegions returns the [start, end) of each private, not writable
// mapping of the file exe in a /proc/PID/maps listing.
func readOnlyRegions(maps []byte, exe string) ([][2]uintptr, error) {
	var out [][2]uintptr
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// address perms offset dev inode pathname
		f := strings.Fields(sc.Text())
		if len(f) < 6 || strings.Join(f[5:], " ") != exe {
			continue
		}
		perms := f[1]
		if len(perms) != 4 || perms[1] == 'w' || perms[3] != 'p' {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			return nil, fmt.Errorf("maps: bad address range %q", f[0])
		}
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || b <= a {
			return nil, fmt.Errorf("maps: bad address range %q", f[0])
		}
		out = append(out, [2]uintptr{uintptr(a), uintptr(b)})
	}
	return out, sc.Err()
}
