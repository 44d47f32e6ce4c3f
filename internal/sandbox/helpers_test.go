package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// workspace returns a fresh workspace root without symlinks in its path.
func workspace(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// run executes spec and fails the test on a Go error.
func run(t testing.TB, b Backend, spec Spec) Result {
	t.Helper()
	if spec.Timeout == 0 {
		spec.Timeout = 20 * time.Second
	}
	res, err := b.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("%s.Run(%s %q) error: %v", b.Name(), spec.Path, spec.Args, err)
	}
	return res
}

// requireBwrap returns a working bwrap backend. Without one the test is
// skipped locally but fails when CI is set: CI must never pass silently
// without exercising the sandbox.
func requireBwrap(t testing.TB) *Bwrap {
	t.Helper()
	b := NewBwrap()
	if err := b.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("bwrap backend unavailable in CI: %v", err)
		}
		t.Skipf("bwrap backend unavailable (set CI=1 to make this fatal): %v", err)
	}
	return b
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
