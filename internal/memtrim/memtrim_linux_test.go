//go:build linux

package memtrim

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestReadOnlyRegions(t *testing.T) {
	maps := `00400000-00e4a000 r-xp 00000000 fc:00 123 /opt/homard bin
00e4a000-018ec000 r--p 00a4a000 fc:00 123 /opt/homard bin
018ec000-0199e000 rw-p 014ec000 fc:00 123 /opt/homard bin
0199e000-039ee000 rw-p 00000000 00:00 0
7f0000000000-7f0000001000 r--p 00000000 fc:00 456 /opt/homard bin.old
7f0000002000-7f0000003000 r--s 00000000 fc:00 123 /opt/homard bin
7f0000004000-7f0000005000 r-xp 00000000 fc:00 789 /usr/lib/libc.so.6
`
	got, err := readOnlyRegions([]byte(maps), "/opt/homard bin")
	want := [][2]uintptr{{0x400000, 0xe4a000}, {0xe4a000, 0x18ec000}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("readOnlyRegions = %#x, %v; want the executable's code and constant data only (not its writable data, a shared mapping, another file)", got, err)
	}
	if _, err := readOnlyRegions([]byte("zz-00e4a000 r-xp 0 fc:00 1 /opt/homard bin\n"), "/opt/homard bin"); err == nil {
		t.Error("a bad address range was accepted")
	}
}

// rssFile is this process's RssFile in kB.
func rssFile(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

// TestAfterStartGivesBackPages: the kernel takes back the test binary's
// resident pages, and the process goes on running code from them (this
// test's own code after the call is such code).
func TestAfterStartGivesBackPages(t *testing.T) {
	before := rssFile(t)
	res, err := AfterStart()
	if errors.Is(err, unix.EINVAL) {
		t.Skip("this kernel has no MADV_PAGEOUT (Linux 5.4 and later have it)")
	}
	if err != nil || res.Regions == 0 || res.Bytes == 0 {
		t.Fatalf("AfterStart = %+v, %v; want the executable's mappings advised", res, err)
	}
	after := rssFile(t)
	if after >= before {
		t.Errorf("RssFile %d kB before, %d kB after; want fewer resident file pages", before, after)
	}
	t.Logf("RssFile %d kB → %d kB (%d mappings, %d bytes advised)", before, after, res.Regions, res.Bytes)
}
