package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/sandbox"
)

func TestWarmsGoCache(t *testing.T) {
	for _, c := range []struct {
		real string
		args []string
		want bool
	}{
		{"/usr/local/go/bin/go", []string{"test", "./..."}, true},
		{"/usr/lib/go-1.22/bin/go", []string{"build"}, true},
		{"/usr/local/go/bin/go", []string{"vet", "."}, true},
		{"/usr/local/go/bin/go", []string{"run", "."}, true},
		{"/usr/local/go/bin/go", []string{"install", "./cmd/x"}, true},
		{"/usr/local/go/bin/go", []string{"env"}, false},
		{"/usr/local/go/bin/go", []string{"mod", "tidy"}, false},
		{"/usr/local/go/bin/go", nil, false},
		{"/usr/local/go/bin/gofmt", []string{"test"}, false},
		{"/usr/bin/make", []string{"test"}, false},
	} {
		if got := warmsGoCache(c.real, c.args); got != c.want {
			t.Errorf("warmsGoCache(%s, %q) = %v; want %v", c.real, c.args, got, c.want)
		}
	}
}

// TestRunCommandRefreshesGoCache: run_command with warm caches runs a
// `go build` and homard then refreshes the root's Go build cache in the
// background (nothing before: the command's own writes are thrown away);
// its twin, a command that is not a Go build, leaves the cache empty.
func TestRunCommandRefreshesGoCache(t *testing.T) {
	b := confinedBackend(t)
	out, err := exec.Command("go", "env", "GOROOT").Output()
	goroot := strings.TrimSpace(string(out))
	if err == nil {
		goroot, err = filepath.EvalSymlinks(goroot)
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no go toolchain in CI: %v", err)
		}
		t.Skipf("no go toolchain: %v", err)
	}
	e := newEnv(t)
	writeFile(t, e.root, "go.mod", "module example.com/lib\n\ngo 1.21\n")
	writeFile(t, e.root, "lib.go", "package lib\n\nfunc Add(a, b int) int { return a + b }\n")
	caches := sandbox.NewCaches(filepath.Join(e.outside, "cache"), 0)
	defer caches.Close()
	rc := NewRunCommand(changeset.New(e.ws, changeset.Options{HoldDir: filepath.Join(e.outside, "held")}), CommandOptions{
		Backend: func() (sandbox.Backend, error) { return b, nil },
		Path:    []string{filepath.Join(goroot, "bin")},
		Caches:  caches,
	})
	dir, err := caches.Dir(e.root)
	if err != nil || dir == "" {
		t.Fatalf("Dir = %q, %v", dir, err)
	}
	gobuild := filepath.Join(dir, "go-build")

	if _, res, err := command(t, rc, `{"program":"ls"}`); err != nil || res.IsError {
		t.Fatalf("ls = %+v, %v", res, err)
	}
	caches.Wait()
	if n := filesUnder(t, gobuild); n != 0 {
		t.Fatalf("after ls the Go build cache holds %d files; want 0 (no refresh)", n)
	}
	if _, res, err := command(t, rc, `{"program":"go","args":["build","./..."],"timeout_s":300}`); err != nil || res.IsError {
		t.Fatalf("go build = %+v, %v", res, err)
	}
	caches.Wait()
	if n := filesUnder(t, gobuild); n == 0 {
		t.Fatalf("after go build and the refresh the Go build cache is empty; want the package compiled")
	}
}

func filesUnder(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
