package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestHostArgvIsNotAShell(t *testing.T) {
	root := workspace(t)
	args := []string{"a;", "&&", "$(id)", "`id`", "|", "*", "> x", "'q'"}
	res := run(t, NewHost(), Spec{Path: "/bin/echo", Args: args, Dir: root, Root: root})
	want := strings.Join(args, " ") + "\n"
	if got := string(res.Output); got != want || res.ExitCode != 0 {
		t.Errorf("echo output = %q exit %d; want %q exit 0", got, res.ExitCode, want)
	}
	if _, err := os.Stat(filepath.Join(root, "x")); err == nil {
		t.Errorf("a redirection argument created a file: a shell was involved")
	}
}

func TestHostCwdAndEnvAreExact(t *testing.T) {
	root := workspace(t)
	sub := filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOMARD_SANDBOX_LEAK", "secret")
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + root, "LANG=C.UTF-8", "TERM=dumb", "X=a b=c"}
	res := run(t, NewHost(), Spec{Path: "/usr/bin/env", Dir: sub, Root: root, Env: env})
	if got, want := string(res.Output), strings.Join(env, "\n")+"\n"; got != want {
		t.Errorf("env output = %q; want %q", got, want)
	}
	res = run(t, NewHost(), Spec{Path: "/usr/bin/env", Dir: sub, Root: root})
	if len(res.Output) != 0 {
		t.Errorf("nil Env: child saw %q; want an empty environment", res.Output)
	}
	res = run(t, NewHost(), Spec{Path: "/bin/pwd", Args: []string{"-P"}, Dir: sub, Root: root})
	if got := strings.TrimSpace(string(res.Output)); got != sub {
		t.Errorf("pwd = %q; want %q", got, sub)
	}
}

func TestHostStdinAndExitCode(t *testing.T) {
	root := workspace(t)
	res := run(t, NewHost(), Spec{Path: "/bin/cat", Dir: root, Root: root, Stdin: []byte("hello\x00world")})
	if string(res.Output) != "hello\x00world" {
		t.Errorf("cat stdin = %q; want %q", res.Output, "hello\x00world")
	}
	res = run(t, NewHost(), Spec{Path: "/bin/sh", Args: []string{"-c", "echo err >&2; exit 3"}, Dir: root, Root: root})
	if res.ExitCode != 3 || string(res.Output) != "err\n" {
		t.Errorf("exit 3: got exit %d output %q; want 3, %q", res.ExitCode, res.Output, "err\n")
	}
}

func TestHostTimeoutKillsProcessGroup(t *testing.T) {
	root := workspace(t)
	res := run(t, NewHost(), Spec{
		Path: "/bin/sh", Args: []string{"-c", "sleep 30 & echo $!; sleep 30"},
		Dir: root, Root: root, Timeout: 300 * time.Millisecond,
	})
	if !res.TimedOut || res.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("TimedOut = %v, exit %d; want true, %d", res.TimedOut, res.ExitCode, 128+int(syscall.SIGKILL))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(res.Output)))
	if err != nil {
		t.Fatalf("background pid not printed: %q", res.Output)
	}
	assertGone(t, pid)
}

func TestHostKillsLeftoverChildrenOnExit(t *testing.T) {
	root := workspace(t)
	// The leader exits at once; its background child would otherwise
	// outlive the run (and keep the output pipe open for 30s).
	res := run(t, NewHost(), Spec{
		Path: "/bin/sh", Args: []string{"-c", "sleep 30 & echo $!"}, Dir: root, Root: root,
	})
	if res.TimedOut || res.ExitCode != 0 {
		t.Errorf("TimedOut = %v, exit %d; want false, 0", res.TimedOut, res.ExitCode)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(res.Output)))
	if err != nil {
		t.Fatalf("background pid not printed: %q", res.Output)
	}
	assertGone(t, pid)
}

// assertGone checks that pid no longer runs (a zombie waiting for a reaper
// that is not ours counts as gone).
func assertGone(t *testing.T, pid int) {
	t.Helper()
	for i := 0; i < 50; i++ {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("process %d from the killed group is still running", pid)
}

func TestHostCancel(t *testing.T) {
	root := workspace(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := NewHost().Run(ctx, Spec{Path: "/bin/sleep", Args: []string{"30"}, Dir: root, Root: root})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run after cancel: err = %v; want context.Canceled", err)
	}
}

// outputTimeout is the timeout of tests that check what a process printed
// before it was killed: long enough for a sandbox to start and the program
// to print on a loaded machine (300 ms was not, under parallel builds).
const outputTimeout = 2 * time.Second

// floodThenExit prints far more than a test's MaxOutput and then exits by
// itself, so a cap test does not depend on the sandbox starting within a
// timeout: a race-built landlock helper re-exec took over 2 s on a loaded
// 2-core machine and the flood never began before the kill.
const floodThenExit = "yes | head -c 1000000"

func TestHostOutputCap(t *testing.T) {
	root := workspace(t)
	res := run(t, NewHost(), Spec{
		Path: "/usr/bin/yes", Dir: root, Root: root, MaxOutput: 1000, Timeout: outputTimeout,
	})
	marker := "\n[output truncated at 1000 bytes]"
	if !res.Truncated || !res.TimedOut || len(res.Output) != 1000+len(marker) ||
		!strings.HasSuffix(string(res.Output), marker) || !strings.HasPrefix(string(res.Output), "y\ny\n") {
		t.Errorf("yes: Truncated=%v TimedOut=%v len=%d tail=%q; want capped at 1000 + marker",
			res.Truncated, res.TimedOut, len(res.Output), res.Output[max(0, len(res.Output)-40):])
	}
	res = run(t, NewHost(), Spec{Path: "/usr/bin/head", Args: []string{"-c", "100", "/dev/zero"}, Dir: root, Root: root, MaxOutput: 100})
	if res.Truncated || len(res.Output) != 100 {
		t.Errorf("exactly MaxOutput bytes: Truncated=%v len=%d; want false, 100", res.Truncated, len(res.Output))
	}
	res = run(t, NewHost(), Spec{Path: "/usr/bin/head", Args: []string{"-c", "1000000", "/dev/zero"}, Dir: root, Root: root})
	if !res.Truncated || res.TimedOut || res.ExitCode != 0 || len(res.Output) != DefaultMaxOutput+len("\n[output truncated at 65536 bytes]") {
		t.Errorf("default cap: Truncated=%v TimedOut=%v exit=%d len=%d; want true,false,0,%d+marker",
			res.Truncated, res.TimedOut, res.ExitCode, len(res.Output), DefaultMaxOutput)
	}
}
