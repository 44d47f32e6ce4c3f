package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkRunCommandChanges: one run_command through the whole pipeline
// in autopilot whose command creates n files in a new folder: the sandbox
// (mount stage, overlay, pid namespace), the change-set stream, grading
// and applying (journal, checkpoint, one syncfs per phase). Compare with
// BenchmarkRunCommandRead, the same pipeline for a command on the
// read-only view, and internal/sandbox's BenchmarkSpawnBwrap for the
// views alone.
func BenchmarkRunCommandChanges(b *testing.B) {
	for _, n := range []int{1, 1000} {
		// Made by the parent: a sub-benchmark's temp folder would carry
		// "=" from its name, which a program path may not contain.
		r := newTestRuntime(b, "autopilot")
		i := 0 // across the calls of the sub-benchmark: every run makes a new folder
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			root := r.Config.Workspace.Roots[0].Path
			script := fmt.Sprintf("#!/bin/sh\nmkdir \"$1\" && cd \"$1\" && i=0 && while [ $i -lt %d ]; do echo $i > f$i; i=$((i+1)); done\n", n)
			writeWorkspaceFile(b, r, "gen.sh", script)
			if err := os.Chmod(filepath.Join(root, "gen.sh"), 0o755); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				i++
				out, err := r.Call(b.Context(), CallRequest{Tool: "run_command",
					Args: fmt.Sprintf(`{"program":%q,"args":["d%d"]}`, filepath.Join(root, "gen.sh"), i)})
				if err != nil || string(out.Decision) != "ran" || out.Result == nil || !strings.Contains(out.Result.Text, "applied") {
					b.Fatalf("%v %+v", err, out)
				}
			}
		})
	}
}

// BenchmarkRunCommandRead: `cat` of a small file through the pipeline,
// on the read-only view with the sensitive-file scan.
func BenchmarkRunCommandRead(b *testing.B) {
	r := newTestRuntime(b, "autopilot")
	writeWorkspaceFile(b, r, "notes.txt", "hello\n")
	b.ReportAllocs()
	for b.Loop() {
		out, err := r.Call(b.Context(), CallRequest{Tool: "run_command", Args: `{"program":"cat","args":["notes.txt"]}`})
		if err != nil || string(out.Decision) != "ran" || out.Result == nil || !strings.Contains(out.Result.Text, "hello") {
			b.Fatalf("%v %+v", err, out)
		}
	}
}
