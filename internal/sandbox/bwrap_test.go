//go:build linux

package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestBwrapCannotReadOutsideRoot(t *testing.T) {
	b := requireBwrap(t)
	root := workspace(t)
	secret := filepath.Join(workspace(t), "secret.txt") // a sibling of root
	writeFile(t, secret, "TOPSECRET")
	spec := Spec{Mode: ModeWritable, Path: "/bin/cat", Args: []string{secret}, Dir: root, Root: root}
	if res := run(t, NewHost(), spec); !strings.Contains(string(res.Output), "TOPSECRET") {
		t.Fatalf("control: host cannot read %s: %q", secret, res.Output)
	}
	for _, path := range []string{secret, "/etc/shadow", "/root", os.Getenv("HOME")} {
		if path == "" {
			continue
		}
		spec.Args = []string{path}
		res := run(t, b, spec)
		if res.ExitCode == 0 || strings.Contains(string(res.Output), "TOPSECRET") {
			t.Errorf("bwrap cat %s: exit %d output %q; want a failure", path, res.ExitCode, res.Output)
		}
	}
}

func TestBwrapWrites(t *testing.T) {
	b := requireBwrap(t)
	root := workspace(t)
	writeFile(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(root, "sub", "keep"), "")
	writeFile(t, filepath.Join(root, "sub", "nested", ".git", "HEAD"), "ref: refs/heads/main\n")
	for _, tc := range []struct {
		path  string
		allow bool
	}{
		{filepath.Join(root, "sub", "new.txt"), true},
		{filepath.Join(root, "top.txt"), true},
		{filepath.Join(root, ".git", "hooks-pre-commit"), false},
		{filepath.Join(root, ".git", "HEAD"), false},
		{filepath.Join(root, "sub", "nested", ".git", "hooks-post-checkout"), false}, // a nested repository
		{filepath.Join(root, "sub", "nested", "file.txt"), true},
		{"/usr/homard-sandbox-test", false},
		{"/etc/homard-sandbox-test", false},
	} {
		res := run(t, b, Spec{Mode: ModeWritable, Path: "/bin/sh", Args: []string{"-c", `echo pwned > "$0"`, tc.path}, Dir: root, Root: root})
		got, _ := os.ReadFile(tc.path)
		wrote := res.ExitCode == 0 && string(got) == "pwned\n"
		if wrote != tc.allow {
			t.Errorf("bwrap write %s: exit %d, file %q (output %q); want allowed=%v", tc.path, res.ExitCode, got, res.Output, tc.allow)
		}
		if !tc.allow && strings.Contains(string(got), "pwned") {
			t.Errorf("bwrap changed %s on the host", tc.path)
		}
	}
	res := run(t, b, Spec{Mode: ModeWritable, Path: "/bin/cat", Args: []string{".git/HEAD"}, Dir: root, Root: root})
	if string(res.Output) != "ref: refs/heads/main\n" {
		t.Errorf("bwrap read .git/HEAD = %q; want it readable", res.Output)
	}
}

func TestBwrapGitSymlinkRefused(t *testing.T) {
	b := requireBwrap(t)
	root := workspace(t)
	if err := os.Symlink("/etc", filepath.Join(root, ".git")); err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(t.Context(), Spec{Mode: ModeWritable, Path: "/bin/ls", Args: []string{".git/"}, Dir: root, Root: root})
	if err == nil {
		t.Errorf("bwrap with .git -> /etc ran (output %q); want ErrInvalidSpec", res.Output)
	}
}

func TestBwrapNoNetwork(t *testing.T) {
	b := requireBwrap(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 4)
	go func() { // ends when ln is closed
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	root := workspace(t)
	spec := Spec{Mode: ModeWritable, Path: "/bin/bash", Args: []string{"-c", "echo hi > /dev/tcp/127.0.0.1/" + port}, Dir: root, Root: root}
	if res := run(t, NewHost(), spec); res.ExitCode != 0 {
		t.Fatalf("control: host cannot connect to the listener: %q", res.Output)
	}
	<-accepted
	res := run(t, b, spec)
	if res.ExitCode == 0 {
		t.Errorf("bwrap connected to 127.0.0.1:%s (output %q); want no network", port, res.Output)
	}
	select {
	case <-accepted:
		t.Errorf("listener accepted a connection from inside bwrap")
	case <-time.After(100 * time.Millisecond):
	}
}

func TestBwrapProcessStatus(t *testing.T) {
	b := requireBwrap(t)
	root := workspace(t)
	res := run(t, b, Spec{Mode: ModeWritable, Path: "/bin/cat", Args: []string{"/proc/self/status"}, Dir: root, Root: root})
	for _, want := range []string{"NoNewPrivs:\t1", "CapEff:\t0000000000000000", "CapPrm:\t0000000000000000",
		"Uid:\t" + sandboxUID + "\t", "Gid:\t" + sandboxUID + "\t"} {
		if !strings.Contains(string(res.Output), want) {
			t.Errorf("bwrap /proc/self/status lacks %q:\n%s", want, res.Output)
		}
	}
}

func TestBwrapCwdEnvArgv(t *testing.T) {
	b := requireBwrap(t)
	root := workspace(t)
	sub := filepath.Join(root, "a b")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOMARD_SANDBOX_LEAK", "secret")
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + root, "LANG=C.UTF-8", "TERM=dumb"}
	res := run(t, b, Spec{Mode: ModeWritable, Path: "/usr/bin/env", Dir: sub, Root: root, Env: env})
	if got, want := string(res.Output), strings.Join(append(env, "PWD="+sub), "\n")+"\n"; got != want {
		t.Errorf("bwrap env = %q; want %q", got, want)
	}
	res = run(t, b, Spec{Mode: ModeWritable, Path: "/bin/pwd", Args: []string{"-P"}, Dir: sub, Root: root})
	if got := strings.TrimSpace(string(res.Output)); got != sub {
		t.Errorf("bwrap pwd = %q; want %q", got, sub)
	}
	args := []string{"--", "a;", "&&", "$(id)", "--ro-bind"}
	res = run(t, b, Spec{Mode: ModeWritable, Path: "/bin/echo", Args: args, Dir: root, Root: root, Stdin: []byte("x")})
	if got, want := string(res.Output), strings.Join(args, " ")+"\n"; got != want {
		t.Errorf("bwrap echo = %q; want %q", got, want)
	}
}

func TestBwrapTimeoutAndCap(t *testing.T) {
	b := requireBwrap(t)
	root := workspace(t)
	res := run(t, b, Spec{Mode: ModeWritable, Path: "/bin/sh", Args: []string{"-c", "sleep 30 & sleep 30"}, Dir: root, Root: root, Timeout: 300 * time.Millisecond})
	if !res.TimedOut {
		t.Errorf("bwrap sleep 30: TimedOut = false (exit %d, %q); want true", res.ExitCode, res.Output)
	}
	res = run(t, b, Spec{Mode: ModeWritable, Path: "/bin/sh", Args: []string{"-c", floodThenExit}, Dir: root, Root: root, MaxOutput: 10})
	if !res.Truncated || string(res.Output) != "y\ny\ny\ny\ny\n\n[output truncated at 10 bytes]" {
		t.Errorf("bwrap yes: Truncated=%v output %q; want 10 bytes + marker", res.Truncated, res.Output)
	}
}

func TestBwrapLimitsApplied(t *testing.T) { checkLimits(t, requireBwrap(t)) }

// TestBwrapProcessLimit: the child's uid maps to homard's, so as root the
// kernel would not enforce RLIMIT_NPROC and a pids cgroup is used; as a
// non-root user the fork loop must be stopped.
func TestBwrapProcessLimit(t *testing.T) {
	b := requireBwrap(t)
	if os.Geteuid() == 0 {
		checkRootProcessLimit(t, b)
		return
	}
	checkProcessLimit(t, b, workspace(t))
}
