package app

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/store/storetest"
)

// newTestRuntime initialises a home in a temp dir and opens it.
func newTestRuntime(tb testing.TB, mode string) *Runtime {
	tb.Helper()
	home := tb.TempDir()
	paths, err := config.ResolvePaths(home, func(string) string { return "" })
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := Init(context.Background(), paths, config.InitOptions{StoreURL: storetest.URL(tb), Mode: mode}); err != nil {
		tb.Fatal(err)
	}
	r, err := Open(context.Background(), paths, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// storeWhere is where r's store lives: its PostgreSQL URL under
// scripts/pg-test, else its SQLite file.
func storeWhere(r *Runtime) string {
	if r.Config.Store.URL != "" {
		return r.Config.Store.URL
	}
	return r.Paths.DBFile
}

// rawDB is a connection to r's database behind homard's back (storetest.Raw).
func rawDB(t testing.TB, r *Runtime) *sql.DB { return storetest.Raw(t, storeWhere(r)) }

func writeWorkspaceFile(tb testing.TB, r *Runtime, rel, content string) {
	tb.Helper()
	p := filepath.Join(r.Config.Workspace.Roots[0].Path, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkPipelineReadFile measures one allowed read_file of a small file
// through all eleven stages, including both SQLite commits (the ToolRun row
// before the run, the ToolRun result and the audit record after it).
func BenchmarkPipelineReadFile(b *testing.B) {
	r := newTestRuntime(b, "smart")
	writeWorkspaceFile(b, r, "notes/small.txt", "one\ntwo\nthree\n")
	ctx := context.Background()
	req := CallRequest{Tool: "read_file", Args: `{"path":"notes/small.txt"}`}
	b.ReportAllocs()
	for b.Loop() {
		out, err := r.Call(ctx, req)
		if err != nil || out.Decision != "ran" {
			b.Fatalf("Call = %+v, %v", out, err)
		}
	}
}
