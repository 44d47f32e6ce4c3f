//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// requireGo returns the go command of the toolchain running the tests
// and the program folders a sandbox must show for it. Without one the
// test is skipped locally but fails when CI is set (see requireBwrap).
func requireGo(t testing.TB) (goBin string, programDirs []string) {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	goroot := strings.TrimSpace(string(out))
	if err == nil && goroot != "" {
		goroot, err = filepath.EvalSymlinks(goroot)
	}
	if err == nil {
		goBin = filepath.Join(goroot, "bin", "go")
		_, err = os.Stat(goBin)
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no go toolchain in CI: %v", err)
		}
		t.Skipf("no go toolchain (set CI=1 to make this fatal): %v", err)
	}
	// /usr is in every view; a GOROOT elsewhere is shown read-only.
	if !strings.HasPrefix(goroot, "/usr/") {
		programDirs = []string{goroot}
	}
	return goBin, programDirs
}

// smallModule writes a one-function package and its test into root.
func smallModule(t testing.TB, root string) {
	t.Helper()
	writeFile(t, filepath.Join(root, "go.mod"), "module example.com/small\n\ngo 1.21\n")
	writeFile(t, filepath.Join(root, "small.go"), "package small\n\nfunc Add(a, b int) int { return a + b }\n")
	writeFile(t, filepath.Join(root, "small_test.go"), `package small

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Errorf("Add(2, 3) = %d; want 5", got)
	}
}
`)
}

// compiles counts the compiler runs in `go test -x` output.
func compiles(out string) int {
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "/pkg/tool/") && strings.Contains(line, "/compile ") {
			n++
		}
	}
	return n
}

// countFiles counts the regular files under dir.
func countFiles(t testing.TB, dir string) int {
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

func goSpec(goBin string, dirs []string, root, cache string, args ...string) Spec {
	return Spec{Path: goBin, Args: args, Dir: root, Root: root, Mode: ModeOverlay, Cache: cache,
		ProgramDirs: dirs, Env: []string{"PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin", "LANG=C.UTF-8"},
		Timeout: 5 * time.Minute, MaxOutput: 1 << 20}
}

// TestCacheRefreshWarmsGoTest is the legitimate path: a sandboxed
// `go test` compiles everything (a cold cache; and nothing it compiled
// reaches the persistent cache), homard's refresh fills the persistent
// go-build folder, and the same `go test` run again compiles nothing.
func TestCacheRefreshWarmsGoTest(t *testing.T) {
	b := requireBwrap(t)
	goBin, dirs := requireGo(t)
	root := workspace(t)
	smallModule(t, root)
	c := NewCaches(filepath.Join(workspace(t), "cache"), 10*time.Minute)
	defer c.Close()
	dir, err := c.Dir(root)
	if err != nil || dir == "" {
		t.Fatalf("Dir = %q, %v", dir, err)
	}
	gobuild := filepath.Join(dir, cacheGoBuild)

	res := run(t, b, goSpec(goBin, dirs, root, dir, "test", "-x", "-count=1", "."))
	if res.Changes != nil {
		res.Changes.Close()
	}
	if res.ExitCode != 0 || compiles(string(res.Output)) == 0 {
		t.Fatalf("cold go test: exit %d, %d compiles; want 0 and some:\n%s", res.ExitCode, compiles(string(res.Output)), tail(res.Output))
	}
	if n := countFiles(t, gobuild); n != 0 {
		t.Fatalf("after a command's go test the persistent go-build holds %d files; want 0", n)
	}

	if err := c.Refresh(context.Background(), Warmup{Backend: b, Go: goBin, Root: root, Dir: root, ProgramDirs: dirs}); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if n := countFiles(t, gobuild); n < 10 {
		t.Fatalf("after the refresh the persistent go-build holds %d files; want the compiled packages", n)
	}

	res = run(t, b, goSpec(goBin, dirs, root, dir, "test", "-x", "-count=1", "."))
	if res.Changes != nil {
		res.Changes.Close()
	}
	out := string(res.Output)
	if res.ExitCode != 0 || !strings.Contains(out, "ok  \texample.com/small") {
		t.Fatalf("warm go test: exit %d; want 0 and ok:\n%s", res.ExitCode, tail(res.Output))
	}
	if n := compiles(out); n != 0 {
		t.Errorf("warm go test ran the compiler %d times; want 0 (every package from the refreshed cache):\n%s", n, compileLines(out))
	}
}

// compileLines are the compiler runs in `go test -x` output, and the line
// before each (the package's folder).
func compileLines(out string) string {
	var keep []string
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		if strings.Contains(line, "/pkg/tool/") && strings.Contains(line, "/compile ") {
			if i > 0 {
				keep = append(keep, lines[i-1])
			}
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// TestCacheRefreshRunsNothing: homard's refresh compiles a hostile root
// without running any of it and without anything the root (or homard's
// own environment) says about how to build: a TestMain, a package init
// and a command's init that would each plant a marker in the cache they
// can write are compiled, never run; a go.work naming a missing folder
// is ignored (GOWORK=off: the rest still compiles); go.mod's toolchain
// line does not switch Go (GOTOOLCHAIN=local); a go.env in the root
// means nothing to go; homard's GOFLAGS never reaches the sandbox; and a
// hidden file that a package embeds is not compiled into the cache.
func TestCacheRefreshRunsNothing(t *testing.T) {
	b := requireBwrap(t)
	goBin, dirs := requireGo(t)
	t.Setenv("GOFLAGS", "-toolexec=/usr/bin/touch")
	root := workspace(t)
	const secret = "s3cr3t-never-in-the-cache"
	plant := func(name string) string {
		return `os.WriteFile(os.Getenv("GOCACHE")+"/marker-` + name + `", []byte("ran"), 0o644)`
	}
	files := map[string]string{
		"go.mod":  "module example.com/hostile\n\ngo 1.21\n\ntoolchain go1.99.0\n",
		"go.work": "go 1.21\n\nuse ./nowhere\n",
		"go.env":  "GOFLAGS=-toolexec=/usr/bin/touch\n",
		"hostile.go": "package hostile\n\nimport \"os\"\n\nfunc init() { " + plant("init") + " }\n\n" +
			"func Add(a, b int) int { return a + b }\n",
		"hostile_test.go": "package hostile\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n" +
			"func TestMain(m *testing.M) { " + plant("testmain") + "; os.Exit(m.Run()) }\n\n" +
			"func TestAdd(t *testing.T) {}\n",
		"cmd/tool/main.go":    "package main\n\nimport \"os\"\n\nfunc init() { " + plant("main") + " }\n\nfunc main() {}\n",
		"embedder/embed.go":   "package embedder\n\nimport _ \"embed\"\n\n//go:embed secret.txt\nvar Secret string\n",
		"embedder/secret.txt": secret,
	}
	for name, content := range files {
		writeFile(t, filepath.Join(root, name), content)
	}
	c := NewCaches(filepath.Join(workspace(t), "cache"), 10*time.Minute)
	defer c.Close()
	dir, err := c.Dir(root)
	if err != nil || dir == "" {
		t.Fatalf("Dir = %q, %v", dir, err)
	}
	held := false
	hold := func(context.Context) ([]string, func(), error) {
		held = true
		return []string{filepath.Join(root, "embedder", "secret.txt")}, func() {}, nil
	}
	if err := c.Refresh(context.Background(), Warmup{Backend: b, Go: goBin, Root: root, Dir: root, ProgramDirs: dirs, Hold: hold}); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if !held {
		t.Errorf("Refresh did not take the root's lock (Warmup.Hold)")
	}
	gobuild := filepath.Join(dir, cacheGoBuild)
	if n := countFiles(t, gobuild); n < 10 {
		t.Fatalf("after the refresh the persistent go-build holds %d files; want the compiled packages (was the go.work or the toolchain line obeyed?)", n)
	}
	err = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(fi.Name(), "marker") {
			t.Errorf("the refresh ran the root's code: %s exists", p)
		}
		if fi.Mode().IsRegular() {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), secret) {
				t.Errorf("the hidden file's content is in the cache: %s", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "nowhere")); err == nil {
		t.Errorf("the refresh wrote into the root")
	}
}

// benchGo is the state BenchmarkGoTestWarm shares across its -count
// repetitions: warming a cache compiles the standard library once.
var benchGo struct {
	once        sync.Once
	err         error
	base        string // removed by TestMain
	root        string
	cache       string // the root's persistent cache, warmed by Refresh
	hostCache   string // the host run's GOCACHE, a copy of the warmed go-build
	goBin       string
	programDirs []string
}

func removeBenchState() {
	if benchGo.base != "" {
		os.RemoveAll(benchGo.base)
	}
}

// BenchmarkGoTestWarm: a second `go test -count=1` of a one-function
// package, its build cache warm: on the host backend with a GOCACHE of
// its own, and sandboxed (overlay view, as run_command runs it) with the
// root's cache warmed by homard's refresh. -count=1 runs the test every
// time (a sandboxed run never finds a cached test result: the refresh
// writes none and the command's own die with it).
func BenchmarkGoTestWarm(b *testing.B) {
	be := requireBwrap(b)
	goBin, dirs := requireGo(b)
	benchGo.once.Do(func() { benchGo.err = warmBench(be, goBin, dirs) })
	if benchGo.err != nil {
		b.Fatal(benchGo.err)
	}
	backends := []Backend{NewHost(), be}
	if l := NewLandlock(); l.Available() == nil {
		backends = append(backends, l)
	}
	for _, x := range backends {
		b.Run(x.Name(), func(b *testing.B) {
			spec := goSpec(goBin, dirs, benchGo.root, benchGo.cache, "test", "-count=1", ".")
			if x.Name() == "host" {
				home := b.TempDir()
				spec.Mode, spec.Cache = ModeWritable, ""
				spec.Env = cleanEnv(spec.Env, home, false)
				for i, e := range spec.Env {
					if strings.HasPrefix(e, "GOCACHE=") {
						spec.Env[i] = "GOCACHE=" + benchGo.hostCache
					}
				}
			}
			for b.Loop() {
				res, err := x.Run(context.Background(), spec)
				if res.Changes != nil {
					res.Changes.Close()
				}
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("go test: exit %d, %v:\n%s", res.ExitCode, err, tail(res.Output))
				}
			}
		})
	}
}

func warmBench(be Backend, goBin string, dirs []string) error {
	base, err := os.MkdirTemp("", "homard-bench-go-")
	if err != nil {
		return err
	}
	if base, err = filepath.EvalSymlinks(base); err != nil {
		return err
	}
	benchGo.base = base
	benchGo.root = filepath.Join(base, "small")
	if err := os.Mkdir(benchGo.root, 0o755); err != nil {
		return err
	}
	for name, content := range map[string]string{
		"go.mod":        "module example.com/small\n\ngo 1.21\n",
		"small.go":      "package small\n\nfunc Add(a, b int) int { return a + b }\n",
		"small_test.go": "package small\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Error(\"Add\")\n\t}\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(benchGo.root, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	c := NewCaches(filepath.Join(base, "cache"), 30*time.Minute)
	defer c.Close()
	if benchGo.cache, err = c.Dir(benchGo.root); err != nil {
		return err
	}
	if err := c.Refresh(context.Background(), Warmup{Backend: be, Go: goBin, Root: benchGo.root, Dir: benchGo.root, ProgramDirs: dirs}); err != nil {
		return err
	}
	benchGo.hostCache = filepath.Join(base, "host-go-build")
	return os.CopyFS(benchGo.hostCache, os.DirFS(filepath.Join(benchGo.cache, cacheGoBuild)))
}
