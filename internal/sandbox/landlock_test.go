//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// probeEnv makes this test binary, copied into a workspace and run inside a
// sandbox, try one network action and print the outcome instead of running
// tests: "unix:PATH" connects to a UNIX socket, "mptcp:ADDR" and "tcp:ADDR"
// connect over MPTCP or TCP, "http:URL" gets URL through $HTTP_PROXY (see
// probeHTTP); "syscalls" tries each syscall the seccomp filter denies and
// a few it allows (see probeSyscalls).
const probeEnv = "HOMARD_SANDBOX_PROBE"

// TestMain lets the test binary act as the landlock helper, as homard's
// main does, and as the network probe.
func TestMain(m *testing.M) {
	MaybeRunHelper()
	if p := os.Getenv(probeEnv); p != "" {
		os.Exit(runProbe(p))
	}
	code := m.Run()
	removeBenchState()
	os.Exit(code)
}

func runProbe(p string) int {
	kind, addr, _ := strings.Cut(p, ":")
	var err error
	switch kind {
	case "unix":
		var c net.Conn
		if c, err = net.Dial("unix", addr); err == nil {
			c.Close()
		}
	case "syscalls":
		return probeSyscalls()
	case "http":
		return probeHTTP(addr)
	case "tcp", "mptcp":
		var d net.Dialer
		d.SetMultipathTCP(kind == "mptcp")
		d.Timeout = 2 * time.Second
		var c net.Conn
		if c, err = d.Dial("tcp", addr); err == nil {
			c.Close()
		}
	default:
		err = fmt.Errorf("unknown probe %q", p)
	}
	if err != nil {
		fmt.Println("probe failed:", err)
		return 1
	}
	fmt.Println("probe connected")
	return 0
}

// requireLandlock returns a working landlock backend; like requireBwrap it
// skips locally but fails when CI is set.
func requireLandlock(t testing.TB) *Landlock {
	t.Helper()
	l := NewLandlock()
	if err := l.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("landlock backend unavailable in CI: %v", err)
		}
		t.Skipf("landlock backend unavailable (set CI=1 to make this fatal): %v", err)
	}
	return l
}

// probeBinary copies this test binary into root, where the sandbox may
// execute it.
func probeBinary(t *testing.T, root string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst := filepath.Join(root, "probe")
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, src); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestLandlockCannotReadOutsideRoot(t *testing.T) {
	l := requireLandlock(t)
	root := workspace(t)
	secret := filepath.Join(workspace(t), "secret.txt") // a sibling of root
	writeFile(t, secret, "TOPSECRET")
	spec := Spec{Mode: ModeWritable, Path: "/bin/cat", Args: []string{secret}, Dir: root, Root: root}
	if res := run(t, NewHost(), spec); !strings.Contains(string(res.Output), "TOPSECRET") {
		t.Fatalf("control: host cannot read %s: %q", secret, res.Output)
	}
	for _, path := range []string{secret, "/etc/shadow", "/etc/hostname", "/root", "/proc/1/status", os.Getenv("HOME")} {
		if path == "" {
			continue
		}
		spec.Args = []string{path}
		res := run(t, l, spec)
		if res.ExitCode == 0 || strings.Contains(string(res.Output), "TOPSECRET") {
			t.Errorf("landlock cat %s: exit %d output %q; want a failure", path, res.ExitCode, res.Output)
		}
	}
	writeFile(t, filepath.Join(root, "in.txt"), "inside")
	spec.Args = []string{"in.txt", "/etc/passwd"}
	if res := run(t, l, spec); res.ExitCode != 0 || !strings.HasPrefix(string(res.Output), "inside") {
		t.Errorf("landlock cat in.txt /etc/passwd: exit %d output %q; want both readable", res.ExitCode, res.Output)
	}
}

func TestLandlockWrites(t *testing.T) {
	l := requireLandlock(t)
	root := workspace(t)
	writeFile(t, filepath.Join(root, "sub", "keep"), "")
	outside := filepath.Join(workspace(t), "outside.txt")
	for _, tc := range []struct {
		path  string
		allow bool
	}{
		{filepath.Join(root, "sub", "new.txt"), true},
		{filepath.Join(root, "top.txt"), true},
		{"/dev/null", true},
		{outside, false},
		{"/usr/homard-sandbox-test", false},
		{"/etc/homard-sandbox-test", false},
		{"/tmp/homard-sandbox-test", false},
	} {
		res := run(t, l, Spec{Mode: ModeWritable, Path: "/bin/sh", Args: []string{"-c", `echo pwned > "$0"`, tc.path}, Dir: root, Root: root})
		got, _ := os.ReadFile(tc.path)
		wrote := res.ExitCode == 0 && (tc.path == "/dev/null" || string(got) == "pwned\n")
		if wrote != tc.allow {
			t.Errorf("landlock write %s: exit %d, file %q (output %q); want allowed=%v", tc.path, res.ExitCode, got, res.Output, tc.allow)
		}
		if !tc.allow && strings.Contains(string(got), "pwned") {
			t.Errorf("landlock changed %s on the host", tc.path)
		}
	}
	// Renames across workspace directories work (the refer right).
	res := run(t, l, Spec{Mode: ModeWritable, Path: "/bin/mv", Args: []string{"sub/keep", "moved"}, Dir: root, Root: root})
	if _, err := os.Stat(filepath.Join(root, "moved")); res.ExitCode != 0 || err != nil {
		t.Errorf("landlock mv sub/keep moved: exit %d output %q; want it moved", res.ExitCode, res.Output)
	}
	fi, err := os.Stat(filepath.Join(root, "top.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Getuid() {
		t.Errorf("file written in the sandbox belongs to uid %d; want homard's uid %d", st.Uid, os.Getuid())
	}
}

func TestLandlockGitRefused(t *testing.T) {
	l := requireLandlock(t)
	for _, mk := range []func(string) error{
		func(git string) error { return os.Mkdir(git, 0o755) },
		func(git string) error { return os.Symlink("/etc", git) },
		func(git string) error { return os.WriteFile(git, []byte("gitdir: /elsewhere\n"), 0o644) },
	} {
		root := workspace(t)
		if err := mk(filepath.Join(root, ".git")); err != nil {
			t.Fatal(err)
		}
		res, err := l.Run(t.Context(), Spec{Mode: ModeWritable, Path: "/bin/true", Dir: root, Root: root})
		if !errors.Is(err, ErrUnenforceable) {
			t.Errorf("landlock with a .git in the root: err = %v (output %q); want ErrUnenforceable", err, res.Output)
		}
	}
	// A nested repository's .git is refused too.
	nested := workspace(t)
	if err := os.MkdirAll(filepath.Join(nested, "sub", "repo", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Run(t.Context(), Spec{Mode: ModeWritable, Path: "/bin/true", Dir: nested, Root: nested}); !errors.Is(err, ErrUnenforceable) {
		t.Errorf("landlock with a nested .git: err = %v; want ErrUnenforceable", err)
	}
	root := workspace(t)
	link := filepath.Join(workspace(t), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Run(t.Context(), Spec{Mode: ModeWritable, Path: "/bin/true", Dir: link, Root: link}); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("landlock with a symlinked root: err = %v; want ErrInvalidSpec", err)
	}
}

// listen opens a TCP listener that counts accepted connections.
func listen(t *testing.T) (addr string, accepted chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = make(chan struct{}, 8)
	go func() { // ends when ln is closed by the cleanup
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	return ln.Addr().String(), accepted
}

func TestLandlockNoNetwork(t *testing.T) {
	l := requireLandlock(t)
	addr, accepted := listen(t)
	_, port, _ := net.SplitHostPort(addr)
	root := workspace(t)
	// Landlock's TCP rules deny the connects below on ABI v4+, but the
	// boundary is the network namespace: check that it is a new one.
	hostNS, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, l, Spec{Mode: ModeWritable, Path: "/bin/readlink", Args: []string{"/proc/self/ns/net"}, Dir: root, Root: root})
	if ns := strings.TrimSpace(string(res.Output)); res.ExitCode != 0 || !strings.HasPrefix(ns, "net:[") || ns == hostNS {
		t.Errorf("landlock child network namespace = %q (exit %d); want a new one, not %q", ns, res.ExitCode, hostNS)
	}
	probe := probeBinary(t, root)
	specs := map[string]Spec{
		"bash /dev/tcp": {Path: "/bin/bash", Args: []string{"-c", "echo hi > /dev/tcp/127.0.0.1/" + port}},
		"tcp":           {Path: probe, Env: []string{probeEnv + "=tcp:" + addr}},
		"mptcp":         {Path: probe, Env: []string{probeEnv + "=mptcp:" + addr}},
	}
	for name, spec := range specs {
		spec.Dir, spec.Root = root, root
		if res := run(t, NewHost(), spec); res.ExitCode != 0 {
			t.Fatalf("control %s: host cannot connect to the listener: %q", name, res.Output)
		}
		<-accepted
		res := run(t, l, spec)
		if res.ExitCode == 0 {
			t.Errorf("landlock %s connected to %s (output %q); want no network", name, addr, res.Output)
		}
		select {
		case <-accepted:
			t.Errorf("listener accepted a %s connection from inside landlock", name)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func TestLandlockNoUnixSockets(t *testing.T) {
	l := requireLandlock(t)
	sock := filepath.Join(workspace(t), "s") // outside the sandbox's root
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // ends when ln is closed
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	root := workspace(t)
	spec := Spec{Mode: ModeWritable, Path: probeBinary(t, root), Env: []string{probeEnv + "=unix:" + sock}, Dir: root, Root: root}
	if res := run(t, NewHost(), spec); res.ExitCode != 0 {
		t.Fatalf("control: host cannot connect to %s: %q", sock, res.Output)
	}
	if res := run(t, l, spec); res.ExitCode == 0 || !strings.Contains(string(res.Output), "permission denied") {
		t.Errorf("landlock connect %s: exit %d output %q; want permission denied", sock, res.ExitCode, res.Output)
	}
}

func TestLandlockProcessStatus(t *testing.T) {
	l := requireLandlock(t)
	root := workspace(t)
	res := run(t, l, Spec{Mode: ModeWritable, Path: "/bin/cat", Args: []string{"/proc/self/status"}, Dir: root, Root: root})
	for _, want := range []string{"NoNewPrivs:\t1", "CapEff:\t0000000000000000", "CapPrm:\t0000000000000000",
		"Uid:\t" + sandboxUID + "\t", "Gid:\t" + sandboxUID + "\t", "Seccomp:\t2"} {
		if !strings.Contains(string(res.Output), want) {
			t.Errorf("landlock /proc/self/status lacks %q:\n%s", want, res.Output)
		}
	}
	// The helper never touches homard itself.
	self, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(self), "NoNewPrivs:\t1") {
		t.Errorf("the test process itself has no_new_privs set")
	}
}

func TestLandlockCwdEnvArgv(t *testing.T) {
	l := requireLandlock(t)
	root := workspace(t)
	sub := filepath.Join(root, "a b")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOMARD_SANDBOX_LEAK", "secret")
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + root, "LANG=C.UTF-8", "TERM=dumb", "LD_PRELOAD="}
	res := run(t, l, Spec{Mode: ModeWritable, Path: "/usr/bin/env", Dir: sub, Root: root, Env: env})
	if got, want := string(res.Output), strings.Join(env, "\n")+"\n"; got != want {
		t.Errorf("landlock env = %q; want %q", got, want)
	}
	if res := run(t, l, Spec{Mode: ModeWritable, Path: "/usr/bin/env", Dir: sub, Root: root}); len(res.Output) != 0 {
		t.Errorf("landlock nil Env: child saw %q; want an empty environment", res.Output)
	}
	res = run(t, l, Spec{Mode: ModeWritable, Path: "/bin/pwd", Args: []string{"-P"}, Dir: sub, Root: root})
	if got := strings.TrimSpace(string(res.Output)); got != sub {
		t.Errorf("landlock pwd = %q; want %q", got, sub)
	}
	args := []string{"--", "a;", "&&", "$(id)", helperArg}
	res = run(t, l, Spec{Mode: ModeWritable, Path: "/bin/echo", Args: args, Dir: root, Root: root})
	if got, want := string(res.Output), strings.Join(args, " ")+"\n"; got != want {
		t.Errorf("landlock echo = %q; want %q", got, want)
	}
	res = run(t, l, Spec{Mode: ModeWritable, Path: "/bin/cat", Dir: root, Root: root, Stdin: []byte("hello\x00world")})
	if string(res.Output) != "hello\x00world" {
		t.Errorf("landlock cat stdin = %q; want %q", res.Output, "hello\x00world")
	}
	res = run(t, l, Spec{Mode: ModeWritable, Path: "/bin/sh", Args: []string{"-c", "exit 3"}, Dir: root, Root: root})
	if res.ExitCode != 3 {
		t.Errorf("landlock exit 3: got %d", res.ExitCode)
	}
}

func TestLandlockSetupErrorIsAnError(t *testing.T) {
	l := requireLandlock(t)
	root := workspace(t)
	res, err := l.Run(t.Context(), Spec{Mode: ModeWritable, Path: "/nonexistent/prog", Dir: root, Root: root})
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("landlock run of a missing program: err = %v, exit %d, output %q; want a setup error", err, res.ExitCode, res.Output)
	}
	// A program outside the allowed paths may not even be executed.
	outside := filepath.Join(workspace(t), "true")
	writeFile(t, outside, "#!/bin/sh\nexit 0\n")
	if err := os.Chmod(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Run(t.Context(), Spec{Mode: ModeWritable, Path: outside, Dir: root, Root: root}); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("landlock exec of %s: err = %v; want permission denied", outside, err)
	}
}

func TestLandlockTimeoutAndCap(t *testing.T) {
	l := requireLandlock(t)
	root := workspace(t)
	res := run(t, l, Spec{Mode: ModeWritable, Path: "/bin/sh", Args: []string{"-c", "while :; do :; done"}, Dir: root, Root: root, Timeout: 300 * time.Millisecond})
	if !res.TimedOut || res.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("landlock busy loop: TimedOut = %v exit %d (%q); want true, %d", res.TimedOut, res.ExitCode, res.Output, 128+int(syscall.SIGKILL))
	}
	res = run(t, l, Spec{Mode: ModeWritable, Path: "/bin/sh", Args: []string{"-c", "sleep 30 & echo $!; sleep 30"}, Dir: root, Root: root, Timeout: outputTimeout})
	if !res.TimedOut {
		t.Errorf("landlock sleep 30: TimedOut = false (exit %d, %q); want true", res.ExitCode, res.Output)
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(res.Output))); err == nil {
		assertGone(t, pid)
	} else {
		t.Errorf("background pid not printed: %q", res.Output)
	}
	res = run(t, l, Spec{Mode: ModeWritable, Path: "/bin/sh", Args: []string{"-c", floodThenExit}, Dir: root, Root: root, MaxOutput: 10})
	if !res.Truncated || string(res.Output) != "y\ny\ny\ny\ny\n\n[output truncated at 10 bytes]" {
		t.Errorf("landlock yes: Truncated=%v output %q; want 10 bytes + marker", res.Truncated, res.Output)
	}
}

func TestLandlockLimitsApplied(t *testing.T) { checkLimits(t, requireLandlock(t)) }

func TestLandlockFileSizeLimit(t *testing.T) {
	l := requireLandlock(t)
	root := workspace(t)
	res := run(t, l, Spec{Mode: ModeWritable, Path: "/bin/dd", Args: []string{"if=/dev/zero", "of=big", "bs=64k", "count=64"}, Dir: root, Root: root,
		Limits: Limits{FileBytes: 1 << 20}})
	fi, err := os.Stat(filepath.Join(root, "big"))
	if err != nil {
		t.Fatalf("dd created nothing: exit %d %q", res.ExitCode, res.Output)
	}
	if res.ExitCode != 128+int(syscall.SIGXFSZ) || fi.Size() > 1<<20 {
		t.Errorf("landlock dd with FileBytes=1MiB: exit %d size %d; want exit %d and size <= 1MiB", res.ExitCode, fi.Size(), 128+int(syscall.SIGXFSZ))
	}
}

// TestLandlockProcessLimit mirrors TestBwrapProcessLimit.
func TestLandlockProcessLimit(t *testing.T) {
	l := requireLandlock(t)
	if os.Geteuid() == 0 {
		checkRootProcessLimit(t, l)
		return
	}
	checkProcessLimit(t, l, workspace(t))
}

// TestLandlockNeedsHelperHook: a binary whose main does not call
// MaybeRunHelper cannot use the backend. Not parallel: it swaps a package
// variable.
func TestLandlockNeedsHelperHook(t *testing.T) {
	helperHooked.Store(false)
	defer helperHooked.Store(true)
	l := NewLandlock()
	if err := l.Available(); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "MaybeRunHelper") {
		t.Errorf("Available without the helper hook = %v; want ErrUnavailable naming MaybeRunHelper", err)
	}
	if _, err := l.Run(t.Context(), Spec{Mode: ModeWritable, Path: "/bin/true", Dir: "/tmp/x", Root: "/tmp/x"}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Run without the helper hook err = %v; want ErrUnavailable", err)
	}
}
