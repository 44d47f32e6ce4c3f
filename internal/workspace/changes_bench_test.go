package workspace

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// BenchmarkChangeSet reads, grades and applies a change set that
// rewrites n files (created on the first round, replaced after, so each
// round also saves the old content in a checkpoint).
func BenchmarkChangeSet(b *testing.B) {
	for _, n := range []int{1, 1000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			base := b.TempDir()
			if err := os.Mkdir(base+"/root", 0o755); err != nil {
				b.Fatal(err)
			}
			ws, err := Open(Options{Roots: []Root{{Name: "main", Path: base + "/root"}}, CheckpointDir: base + "/cp"})
			if err != nil {
				b.Fatal(err)
			}
			defer ws.Close()
			streams := [2][]byte{}
			for v := range streams {
				u := upper{}
				for i := range n {
					u = u.file(fmt.Sprintf("w/%02d/f%04d.txt", i%50, i), fmt.Sprintf("version %d of file %d\n", v, i))
				}
				streams[v] = u.stream(b)
			}
			o := GradeOptions{RunsCode: true, MaxFiles: 10 * n}
			b.ReportAllocs()
			round := 0
			for b.Loop() {
				cs, err := ReadChanges(bytes.NewReader(streams[round%2]), ReadOptions{SpoolDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				res, err := ws.ApplyChanges(context.Background(), "main", cs, time.Time{}, ApplyOptions{Grade: o, Approved: GradeMedium})
				cs.Close()
				if err != nil {
					b.Fatal(err)
				}
				if err := ws.Unpin(res.CheckpointID); err != nil {
					b.Fatal(err)
				}
				round++
			}
		})
	}
}
