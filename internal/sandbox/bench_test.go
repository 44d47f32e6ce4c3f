package sandbox

import (
	"context"
	"testing"
)

func benchmarkSpawn(b *testing.B, be Backend) {
	root := workspace(b)
	spec := Spec{Path: "/bin/true", Dir: root, Root: root}
	b.ReportAllocs()
	for b.Loop() {
		res, err := be.Run(context.Background(), spec)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%s /bin/true: exit %d, %v, %q", be.Name(), res.ExitCode, err, res.Output)
		}
	}
}

func BenchmarkSpawnHost(b *testing.B) { benchmarkSpawn(b, NewHost()) }

func BenchmarkSpawnBwrap(b *testing.B) { benchmarkSpawn(b, requireBwrap(b)) }
