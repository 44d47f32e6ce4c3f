//go:build linux

package sandbox

import (
	"strings"
	"testing"
)

const enospc = "No space left on device"

// TestBwrapTmpAndShmCapped: bubblewrap's /tmp (the command's home) holds
// at most ScratchBytes and /dev/shm at most bwrapShmBytes, writing past
// either fails with ENOSPC, and the rest of /dev is read-only; the twins,
// small files in both and writing to /dev/null, work.
func TestBwrapTmpAndShmCapped(t *testing.T) {
	b := requireBwrap(t)
	for _, mode := range []Mode{ModeReadOnly, ModeOverlay, ModeWritable} {
		t.Run(mode.String(), func(t *testing.T) {
			root := workspace(t)
			p, a := sh(`
head -c 1M /dev/zero > /tmp/small && echo tmp-small-ok
head -c 1M /dev/zero > /dev/shm/small && echo shm-small-ok
echo x > /dev/null && echo null-ok
head -c 16M /dev/zero > /tmp/big; echo "tmp=$?"
head -c 80M /dev/zero > /dev/shm/big; echo "shm=$?"
touch /dev/planted; echo "dev=$?"`)
			res := run(t, b, Spec{Path: p, Args: a, Dir: root, Root: root, Mode: mode, ScratchBytes: 8 << 20})
			if res.Changes != nil {
				res.Changes.Close()
			}
			out := string(res.Output)
			for _, want := range []string{"tmp-small-ok", "shm-small-ok", "null-ok", "tmp=1", "shm=1", "dev=1", "Read-only file system"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if strings.Count(out, enospc) != 2 {
				t.Errorf("want ENOSPC for /tmp and /dev/shm:\n%s", out)
			}
		})
	}
}

// TestLandlockScratchCapped: the landlock command cannot reach the host's
// /dev/shm at all, and its home (on the mount stage's scratch tmpfs) holds
// at most ScratchBytes; the twins work.
func TestLandlockScratchCapped(t *testing.T) {
	l := requireLandlock(t)
	root := workspace(t)
	p, a := sh(`
echo x > /dev/shm/homard-planted; echo "shm-write=$?"
ls /dev/shm >/dev/null; echo "shm-list=$?"
head -c 1M /dev/zero > "$HOME/small" && echo home-small-ok
head -c 16M /dev/zero > "$HOME/big"; echo "home=$?"`)
	res := run(t, l, Spec{Path: p, Args: a, Dir: root, Root: root, Mode: ModeOverlay, ScratchBytes: 8 << 20})
	if res.Changes != nil {
		res.Changes.Close()
	}
	out := string(res.Output)
	for _, want := range []string{"shm-write=", "shm-list=2", "home-small-ok", "home=1", enospc} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "shm-write=0") {
		t.Errorf("the command wrote to the host's /dev/shm:\n%s", out)
	}
}

// TestOverlayUpperCapped: a command that creates more files than
// ScratchFiles, or writes more bytes than ScratchBytes, gets ENOSPC from
// the overlay, and the run still returns a complete, readable change set
// of what did fit (homard grades that, never a stream cut short); the
// twin, a command within the caps, has all of its changes returned.
func TestOverlayUpperCapped(t *testing.T) {
	for _, b := range confining(t) {
		t.Run(b.Name(), func(t *testing.T) {
			root := workspace(t)
			p, a := sh(`i=0; while [ $i -lt 400 ]; do i=$((i+1)); : > f$i || break; done; echo "stopped=$i"`)
			res := run(t, b, Spec{Path: p, Args: a, Dir: root, Root: root, Mode: ModeOverlay, ScratchFiles: 200})
			if !strings.Contains(string(res.Output), enospc) || strings.Contains(string(res.Output), "stopped=400") {
				t.Errorf("400 files under ScratchFiles=200: %q; want ENOSPC before the 400th", res.Output)
			}
			got := readChanges(t, res.Changes)
			if len(got) == 0 || len(got) >= 200 {
				t.Errorf("change set of the inode-capped run has %d entries; want some, fewer than 200", len(got))
			}

			p, a = sh(`head -c 16M /dev/zero > big; echo "big=$?"`)
			res = run(t, b, Spec{Path: p, Args: a, Dir: root, Root: root, Mode: ModeOverlay, ScratchBytes: 8 << 20})
			if out := string(res.Output); !strings.Contains(out, enospc) || !strings.Contains(out, "big=1") {
				t.Errorf("16 MiB under ScratchBytes=8MiB: %q; want ENOSPC", out)
			}
			got = readChanges(t, res.Changes)
			if big, ok := got["big"]; !ok || len(big) > len("file ")+8<<20 {
				t.Errorf("change set of the byte-capped run: big present %v, %d bytes; want at most 8 MiB", ok, len(big))
			}

			p, a = sh(`head -c 1M /dev/zero > ok.bin; i=0; while [ $i -lt 50 ]; do i=$((i+1)); : > g$i; done; echo "done=$?"`)
			res = run(t, b, Spec{Path: p, Args: a, Dir: root, Root: root, Mode: ModeOverlay, ScratchBytes: 8 << 20, ScratchFiles: 200})
			if out := string(res.Output); res.ExitCode != 0 || strings.Contains(out, enospc) {
				t.Errorf("within the caps: exit %d %q", res.ExitCode, out)
			}
			got = readChanges(t, res.Changes)
			if len(got["ok.bin"]) != len("file ")+1<<20 || len(got) != 51 {
				t.Errorf("within the caps: %d entries, ok.bin %d bytes; want 51 and 1 MiB", len(got), len(got["ok.bin"]))
			}
		})
	}
}
