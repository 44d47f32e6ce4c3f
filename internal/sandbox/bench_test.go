//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

func benchmarkSpawn(b *testing.B, be Backend, mode Mode) {
	root := workspace(b)
	spec := Spec{Mode: mode, Path: "/bin/true", Dir: root, Root: root}
	b.ReportAllocs()
	for b.Loop() {
		res, err := be.Run(context.Background(), spec)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%s /bin/true: exit %d, %v, %q", be.Name(), res.ExitCode, err, res.Output)
		}
		if res.Changes != nil {
			res.Changes.Close()
		}
	}
}

func BenchmarkSpawnHost(b *testing.B) { benchmarkSpawn(b, NewHost(), ModeWritable) }

// BenchmarkSpawnBwrap: the same /bin/true with the root bound read-write
// (the old way), read-only behind the mount stage, and on an overlay whose
// (empty) change set is read back: the difference is the cost of the
// read-only mounts and of the overlay.
func BenchmarkSpawnBwrap(b *testing.B) {
	be := requireBwrap(b)
	for _, m := range []Mode{ModeWritable, ModeReadOnly, ModeOverlay} {
		b.Run(m.String(), func(b *testing.B) { benchmarkSpawn(b, be, m) })
	}
}

func BenchmarkSpawnLandlock(b *testing.B) {
	be := requireLandlock(b)
	for _, m := range []Mode{ModeWritable, ModeReadOnly, ModeOverlay} {
		b.Run(m.String(), func(b *testing.B) { benchmarkSpawn(b, be, m) })
	}
}

// BenchmarkOverlayTouch: an overlay run whose command writes n files, with
// the change set read back (grading and applying are measured in package
// workspace).
func BenchmarkOverlayTouch(b *testing.B) {
	be := requireBwrap(b)
	for _, n := range []int{1, 1000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			root := workspace(b)
			writeFile(b, filepath.Join(root, "keep"), "")
			p, a := sh(fmt.Sprintf(`i=0; while [ $i -lt %d ]; do echo $i > f$i; i=$((i+1)); done`, n))
			spec := Spec{Mode: ModeOverlay, Path: p, Args: a, Dir: root, Root: root}
			b.ReportAllocs()
			for b.Loop() {
				res, err := be.Run(context.Background(), spec)
				if err != nil || res.ExitCode != 0 || res.Changes == nil {
					b.Fatalf("exit %d, %v, %q", res.ExitCode, err, res.Output)
				}
				res.Changes.Close()
			}
		})
	}
}
