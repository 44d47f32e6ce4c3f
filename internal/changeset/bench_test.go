package changeset

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/homard/homard/internal/workspace"
)

// BenchmarkGateOneFileWrite grades a one-file write on a 10,000-file root
// holding a git repository, as write_file's Prepare does: the gate looks
// only at the folders above the file (repository shapes, configs), never
// at the rest of the tree. It reports the median and 99th percentile of
// the iterations besides the mean (docs/PERFORMANCE.md):
//
//	go test -run='^$' -bench=GateOneFileWrite -benchtime=2000x -count=5 ./internal/changeset
func BenchmarkGateOneFileWrite(b *testing.B) {
	root := b.TempDir()
	for d := range 100 {
		dir := filepath.Join(root, "src", fmt.Sprintf("pkg%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", f)), []byte("package x\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(root, ".git", "objects"), 0o755); err != nil {
		b.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, ".git", "refs"), 0o755)
	os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n\thooksPath = tools/hooks\n"), 0o644)
	ws, err := workspace.Open(workspace.Options{Roots: []workspace.Root{{Name: "main", Path: root}}, CheckpointDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	g := New(ws, Options{HoldDir: b.TempDir()})
	files := []File{{Rel: "src/pkg42/new.go", Data: []byte("package x\n\nfunc New() {}\n")}}
	times := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		gr, err := g.GradeFiles("main", files)
		times = append(times, time.Since(start))
		if err != nil || gr.Grade != workspace.GradeMedium {
			b.Fatalf("GradeFiles = %v, %v; want medium", gr, err)
		}
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds()), "p99-ns")
}
