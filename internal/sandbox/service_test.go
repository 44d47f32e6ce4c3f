//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/egress"
)

// startService starts spec on b and stops it when the test ends.
func startService(t *testing.T, b *Bwrap, spec ServiceSpec) *Service {
	t.Helper()
	s, err := b.StartService(t.Context(), spec)
	if err != nil {
		t.Fatalf("StartService(%q) error: %v", spec.Argv, err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// serviceRun starts spec with an empty stdin and returns everything it
// wrote to stdout and Wait's error.
func serviceRun(t *testing.T, b *Bwrap, spec ServiceSpec) (string, error) {
	t.Helper()
	_, out, err := serviceRunning(t, b, spec)
	return out, err
}

// serviceRunning is serviceRun that also returns the ended service.
func serviceRunning(t *testing.T, b *Bwrap, spec ServiceSpec) (*Service, string, error) {
	t.Helper()
	s := startService(t, b, spec)
	s.Stdin.Close()
	out, err := io.ReadAll(s.Stdout)
	if err != nil {
		t.Fatalf("read the service's stdout: %v", err)
	}
	return s, string(out), s.Wait()
}

// serviceFiles is a fake homard home holding a vault and a database, a
// skill folder inside it, an undeclared workspace, a read-only and a
// writable root and a mount.
type serviceFiles struct {
	home, skill, undeclared, ro, rw, mount string
}

func newServiceFiles(t *testing.T) serviceFiles {
	f := serviceFiles{home: workspace(t), undeclared: workspace(t), ro: workspace(t), rw: workspace(t), mount: workspace(t)}
	f.skill = filepath.Join(f.home, "skills", "foo")
	writeFile(t, filepath.Join(f.home, "vault.age"), "VAULTSECRET")
	writeFile(t, filepath.Join(f.home, "data", "homard.db"), "DBSECRET")
	writeFile(t, filepath.Join(f.skill, "SKILL.md"), "SKILLTEXT")
	writeFile(t, filepath.Join(f.undeclared, "other.txt"), "OTHERSECRET")
	writeFile(t, filepath.Join(f.ro, "ro.txt"), "ROTEXT")
	writeFile(t, filepath.Join(f.rw, "rw.txt"), "RWTEXT")
	writeFile(t, filepath.Join(f.rw, ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(f.mount, "m.txt"), "MOUNTTEXT")
	return f
}

func (f serviceFiles) spec(argv ...string) ServiceSpec {
	return ServiceSpec{
		Argv:   argv,
		Mounts: []string{f.mount, f.skill},
		Roots:  []Root{{Path: f.ro}, {Path: f.rw, Writable: true}},
		Hide:   []string{f.home},
	}
}

func TestServiceReads(t *testing.T) {
	b := requireBwrap(t)
	f := newServiceFiles(t)
	for _, tc := range []struct {
		name, path, want string
		readable         bool
	}{
		{"vault by absolute path", filepath.Join(f.home, "vault.age"), "VAULTSECRET", false},
		{"database by absolute path", filepath.Join(f.home, "data", "homard.db"), "DBSECRET", false},
		{"undeclared workspace", filepath.Join(f.undeclared, "other.txt"), "OTHERSECRET", false},
		{"host's shadow", "/etc/shadow", "root:", false},
		{"its mount", filepath.Join(f.mount, "m.txt"), "MOUNTTEXT", true},
		{"its skill folder inside homard's home", filepath.Join(f.skill, "SKILL.md"), "SKILLTEXT", true},
		{"a read-only root", filepath.Join(f.ro, "ro.txt"), "ROTEXT", true},
		{"a writable root", filepath.Join(f.rw, "rw.txt"), "RWTEXT", true},
		{"a system file", "/etc/passwd", "root:", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat(tc.path); err != nil && !tc.readable {
				t.Skipf("control: %s does not exist on this machine", tc.path)
			}
			out, err := serviceRun(t, b, f.spec("/bin/sh", "-c", `cat "$0" 2>&1`, tc.path))
			got := err == nil && strings.Contains(out, tc.want)
			if got != tc.readable {
				t.Errorf("service cat %s: output %q, Wait() = %v; want readable=%v", tc.path, out, err, tc.readable)
			}
			if !tc.readable && strings.Contains(out, tc.want) {
				t.Errorf("service read %s: %q", tc.path, out)
			}
		})
	}
	// Listing homard's home shows nothing but the way to the skill.
	out, _ := serviceRun(t, b, f.spec("/bin/sh", "-c", `ls -A "$0" 2>&1`, f.home))
	if strings.TrimSpace(out) != "skills" {
		t.Errorf("service ls %s = %q; want only the path to its skill folder", f.home, out)
	}
}

// TestServiceWrites: a service writes its home, its /tmp and its writable
// root — the last through the overlay, so no write of a service ever
// lands on a host file (the root's changes come back as a change set:
// TestServiceWritableRootIsAChangeSet) — and nothing else.
func TestServiceWrites(t *testing.T) {
	b := requireBwrap(t)
	f := newServiceFiles(t)
	for _, tc := range []struct {
		name, path string
		allowed    bool
		// anyInside: only the host's file is checked. Under /tmp (as
		// t.TempDir is), the way to a mount inside homard's home is
		// made in the service's own /tmp.
		anyInside bool
	}{
		{"its home", ServiceHome + "/note", true, false},
		{"its /tmp", "/tmp/note", true, false},
		{"a writable root", filepath.Join(f.rw, "new.txt"), true, false},
		{"a writable root's .git", filepath.Join(f.rw, ".git", "hooks-pre-commit"), true, false},
		{"a read-only root", filepath.Join(f.ro, "new.txt"), false, false},
		{"its mount", filepath.Join(f.mount, "new.txt"), false, false},
		{"its skill folder", filepath.Join(f.skill, "new.txt"), false, false},
		{"homard's home", filepath.Join(f.home, "new.txt"), false, true},
		{"/usr", "/usr/homard-service-test", false, false},
		{"the sandbox's root", "/homard-service-test", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := serviceRun(t, b, f.spec("/bin/sh", "-c", `echo pwned > "$0" && cat "$0"`, tc.path))
			wrote := err == nil && out == "pwned\n"
			if wrote != tc.allowed && !tc.anyInside {
				t.Errorf("service write %s: output %q, Wait() = %v; want allowed=%v", tc.path, out, err, tc.allowed)
			}
			if host, _ := os.ReadFile(tc.path); string(host) == "pwned\n" {
				t.Errorf("host file %s = %q after the service wrote it; a service never writes a host file", tc.path, host)
			}
		})
	}
}

func TestServiceNoNetwork(t *testing.T) {
	b := requireBwrap(t)
	ln := acceptingListener(t)
	dir := workspace(t)
	probe := probeBinary(t, dir)
	env := []string{probeEnv + "=tcp:" + ln.Addr().String()}
	// Control: the same probe reaches the listener from outside.
	if res := run(t, NewHost(), Spec{Path: probe, Env: env, Dir: dir, Root: dir}); !strings.Contains(string(res.Output), "probe connected") {
		t.Fatalf("control: the probe cannot connect from the host: %q", res.Output)
	}
	out, err := serviceRun(t, b, ServiceSpec{Argv: []string{probe}, Env: env, Mounts: []string{dir}})
	if err == nil || !strings.Contains(out, "probe failed") {
		t.Errorf("service connect to %s: output %q, Wait() = %v; want a failure", ln.Addr(), out, err)
	}
}

func TestServiceEnvExact(t *testing.T) {
	b := requireBwrap(t)
	t.Setenv("HOMARD_TEST_SECRET", "must-not-leak")
	env := []string{"A=1", "B=two words", "HOME=" + ServiceHome, "EMPTY=", "HTTP_PROXY=http://given.example"}
	refuse := func(_ context.Context, c net.Conn) { c.Close() }
	for _, tc := range []struct {
		name  string
		proxy func(context.Context, net.Conn)
		added []string // besides bwrap's PWD
	}{
		{"no network", nil, []string{"HTTP_PROXY=http://given.example"}},
		// The relay's proxy variables replace a given one.
		{"a proxy", refuse, []string{"HTTP_PROXY=", "HTTPS_PROXY=", "http_proxy=", "https_proxy="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := serviceRun(t, b, ServiceSpec{Argv: []string{"/usr/bin/env"}, Env: env, Proxy: tc.proxy})
			if err != nil {
				t.Fatalf("service env: %v (output %q)", err, out)
			}
			var got []string
			for _, e := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if strings.HasPrefix(strings.ToUpper(e), "HTTP") && strings.Contains(e, "=http://127.0.0.1:") {
					e, _, _ = strings.Cut(e, "http://") // the relay's port varies
				}
				got = append(got, e)
			}
			want := append(slices.Clone(env[:len(env)-1]), "PWD="+ServiceHome) // bwrap's one addition
			want = append(want, tc.added...)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("service environment = %q; want exactly %q", got, want)
			}
		})
	}
}

func TestServicePipes(t *testing.T) {
	b := requireBwrap(t)
	s := startService(t, b, ServiceSpec{Argv: []string{"/bin/sh", "-c", `while read -r l; do echo "got:$l"; done`}})
	r := bufio.NewReader(s.Stdout)
	for _, line := range []string{"hello", `{"jsonrpc":"2.0","id":1}`} {
		if _, err := io.WriteString(s.Stdin, line+"\n"); err != nil {
			t.Fatalf("write %q to the service: %v", line, err)
		}
		got, err := r.ReadString('\n')
		if want := "got:" + line + "\n"; got != want || err != nil {
			t.Fatalf("service answered %q, %v; want %q", got, err, want)
		}
	}
	s.Stdin.Close()
	if err := s.Wait(); err != nil {
		t.Errorf("Wait() after stdin closed = %v; want nil (exit 0)", err)
	}
}

func TestServiceExitError(t *testing.T) {
	b := requireBwrap(t)
	var stderr strings.Builder
	s := startService(t, b, ServiceSpec{Argv: []string{"/bin/sh", "-c", `echo "cannot find module x" >&2; exit 3`}, Stderr: &stderr})
	err := s.Wait()
	if !errors.Is(err, ErrServiceExited) || !strings.Contains(err.Error(), "status 3") || !strings.Contains(err.Error(), "cannot find module x") {
		t.Errorf("Wait() = %v; want ErrServiceExited naming status 3 and its error output", err)
	}
	if got := stderr.String(); got != "cannot find module x\n" {
		t.Errorf("Stderr got %q; want the service's error output", got)
	}
}

// processWithArgs reports whether a live process on the host runs argv
// (zombies have no command line).
func processWithArgs(t *testing.T, argv ...string) bool {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(argv, "\x00") + "\x00"
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && string(b) == want {
			return true
		}
	}
	return false
}

func TestServiceStopKillsTree(t *testing.T) {
	b := requireBwrap(t)
	for _, tc := range []struct {
		name string
		stop func(s *Service, cancel context.CancelFunc)
	}{
		{"Stop", func(s *Service, _ context.CancelFunc) { _ = s.Stop() }},
		{"ctx ends", func(s *Service, cancel context.CancelFunc) { cancel(); _ = s.Wait() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A duration no other process uses, so the grandchild can be
			// found on the host by its command line.
			secs := fmt.Sprintf("%d.%06d", 1000+os.Getpid()%1000, time.Now().Nanosecond()/1000)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			s, err := b.StartService(ctx, ServiceSpec{Argv: []string{"/bin/sh", "-c", `setsid sleep "$0" & echo started; wait`, secs}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop()
			if line, err := bufio.NewReader(s.Stdout).ReadString('\n'); line != "started\n" {
				t.Fatalf("service said %q, %v; want started", line, err)
			}
			var found bool
			for range 200 { // sh may not have exec'd sleep yet
				if found = processWithArgs(t, "sleep", secs); found {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if !found {
				t.Fatalf("control: the grandchild sleep %s never showed on the host", secs)
			}
			tc.stop(s, cancel)
			if err := s.Wait(); !errors.Is(err, ErrServiceStopped) {
				t.Errorf("Wait() after stop = %v; want ErrServiceStopped", err)
			}
			if processWithArgs(t, "sleep", secs) {
				t.Errorf("the grandchild sleep %s outlived the service", secs)
			}
		})
	}
}

func TestServiceRefusedBackends(t *testing.T) {
	for _, b := range []Backend{NewHost(), NewLandlock()} {
		s, err := b.StartService(t.Context(), ServiceSpec{Argv: []string{"/bin/true"}})
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "bwrap") {
			t.Errorf("%s.StartService = %v, %v; want ErrUnavailable saying to use bwrap", b.Name(), s, err)
		}
	}
}

func TestNormalizeService(t *testing.T) {
	f := newServiceFiles(t)
	link := filepath.Join(workspace(t), "link")
	if err := os.Symlink(f.mount, link); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.mount, "data.txt"), "not a program")
	ok := f.spec("/bin/sh")
	with := func(change func(*ServiceSpec)) ServiceSpec {
		s := ok
		s.Mounts, s.Roots = slices.Clone(ok.Mounts), slices.Clone(ok.Roots)
		change(&s)
		return s
	}
	for _, tc := range []struct {
		name string
		spec ServiceSpec
		want string // a part of the error; "" means valid
	}{
		{"valid", ok, ""},
		{"program in its mount", with(func(s *ServiceSpec) { s.Argv = []string{"/bin/sh"}; s.Dir = f.mount }), ""},
		{"no command", with(func(s *ServiceSpec) { s.Argv = nil }), "needs a command"},
		{"relative program", with(func(s *ServiceSpec) { s.Argv = []string{"node"} }), "absolute"},
		{"program not shown", with(func(s *ServiceSpec) { s.Argv = []string{filepath.Join(f.undeclared, "other.txt")} }), "add its folder to the service's mounts"},
		{"program not executable", with(func(s *ServiceSpec) { s.Argv = []string{filepath.Join(f.mount, "data.txt")} }), "not an executable"},
		{"mount is homard's home", with(func(s *ServiceSpec) { s.Mounts = append(s.Mounts, f.home) }), "must never see"},
		{"mount holds homard's home", with(func(s *ServiceSpec) { s.Mounts = append(s.Mounts, filepath.Dir(f.home)) }), "must never see"},
		{"root holds homard's home", with(func(s *ServiceSpec) { s.Roots = append(s.Roots, Root{Path: filepath.Dir(f.home), Writable: true}) }), "must never see"},
		{"symlinked mount", with(func(s *ServiceSpec) { s.Mounts = append(s.Mounts, link) }), "no symlinks"},
		{"missing mount", with(func(s *ServiceSpec) { s.Mounts = append(s.Mounts, filepath.Join(f.mount, "gone")) }), "must exist"},
		{"mount /", with(func(s *ServiceSpec) { s.Mounts = append(s.Mounts, "/") }), "other than /"},
		{"mount /tmp", with(func(s *ServiceSpec) { s.Mounts = append(s.Mounts, "/tmp") }), "sandbox's own /tmp"},
		{"root /proc/1", with(func(s *ServiceSpec) { s.Roots = append(s.Roots, Root{Path: "/proc/1"}) }), "sandbox's own /proc"},
		{"mount declared twice", with(func(s *ServiceSpec) { s.Roots = append(s.Roots, Root{Path: f.mount}) }), "declared twice"},
		{"dir not shown", with(func(s *ServiceSpec) { s.Dir = f.undeclared }), "not in the service's home"},
		{"bad env", with(func(s *ServiceSpec) { s.Env = []string{"NOEQUALS"} }), "KEY=VALUE"},
		{"relative hidden path", with(func(s *ServiceSpec) { s.Hide = []string{"home"} }), "hidden path"},
		{"two writable roots", with(func(s *ServiceSpec) { s.Roots = append(s.Roots, Root{Path: f.undeclared, Writable: true}) }), "may write to one root"},
		{"roots overlap", with(func(s *ServiceSpec) { s.Roots = append(s.Roots, Root{Path: filepath.Join(f.rw, ".git")}) }), "overlap"},
		{"roots and the host network", with(func(s *ServiceSpec) { s.HostNetwork = true }), "host network"},
		{"a root's hidden path outside it", with(func(s *ServiceSpec) { s.Roots[0].Hide = []string{filepath.Join(f.rw, "rw.txt")} }), "inside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := normalizeService(tc.spec)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("normalizeService = %v; want it valid", err)
			case tc.want == "" && (got.Dir == "" || got.ScratchBytes != DefaultScratchBytes):
				t.Errorf("normalizeService left Dir %q, ScratchBytes %d; want the defaults filled", got.Dir, got.ScratchBytes)
			case tc.want != "" && (!errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("normalizeService = %v; want ErrInvalidSpec containing %q", err, tc.want)
			}
		})
	}
}

// probeHTTP gets rawURL through the proxy in $HTTP_PROXY (Go's own proxy
// lookup skips loopback hosts) and prints the status and body.
func probeHTTP(rawURL string) int {
	proxy, err := url.Parse(os.Getenv("HTTP_PROXY"))
	if err != nil || proxy.Host == "" {
		fmt.Printf("probe failed: HTTP_PROXY %q\n", os.Getenv("HTTP_PROXY"))
		return 1
	}
	hc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}, Timeout: 10 * time.Second}
	resp, err := hc.Get(rawURL)
	if err != nil {
		fmt.Println("probe failed:", err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Printf("probe status %d: %s\n", resp.StatusCode, body)
	if resp.StatusCode != http.StatusOK {
		return 1
	}
	return 0
}

func TestServiceNetworkProxy(t *testing.T) {
	b := requireBwrap(t)
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello from "+r.Host) })
	listed := httptest.NewServer(hello)
	defer listed.Close()
	other := httptest.NewServer(hello)
	defer other.Close()
	// Both are loopback servers egress lets through (Allow); only one is
	// on the service's list.
	c, err := egress.New(egress.Options{Allow: []string{listed.URL, other.URL}})
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := c.NewProxy([]string{listed.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	dir := workspace(t)
	probe := probeBinary(t, dir)
	for _, tc := range []struct {
		name, url, want string
		ok              bool
	}{
		{"a listed host", listed.URL + "/x", "probe status 200: hello from " + listed.Listener.Addr().String(), true},
		{"another host", other.URL + "/x", "probe status 403", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := serviceRun(t, b, ServiceSpec{
				Argv: []string{probe}, Env: []string{probeEnv + "=http:" + tc.url}, Mounts: []string{dir},
				Proxy: proxy.ServeConn,
			})
			if (err == nil) != tc.ok || !strings.Contains(out, tc.want) {
				t.Errorf("service GET %s: output %q, Wait() = %v; want ok=%v with %q", tc.url, out, err, tc.ok, tc.want)
			}
		})
	}
	// Without a proxy the same request has nowhere to go.
	out, err := serviceRun(t, b, ServiceSpec{Argv: []string{probe}, Env: []string{probeEnv + "=tcp:" + listed.Listener.Addr().String()}, Mounts: []string{dir}})
	if err == nil || !strings.Contains(out, "probe failed") {
		t.Errorf("service without a proxy connected to %s: output %q, Wait() = %v", listed.Listener.Addr(), out, err)
	}
}

// TestServiceHostNetwork: the operator's opt-in (HostNetwork) lets the same
// probe that TestServiceNoNetwork shows failing reach a listener outside;
// together with a proxy it is refused.
func TestServiceHostNetwork(t *testing.T) {
	b := requireBwrap(t)
	ln := acceptingListener(t)
	dir := workspace(t)
	probe := probeBinary(t, dir)
	env := []string{probeEnv + "=tcp:" + ln.Addr().String()}
	out, err := serviceRun(t, b, ServiceSpec{Argv: []string{probe}, Env: env, Mounts: []string{dir}, HostNetwork: true})
	if err != nil || !strings.Contains(out, "probe connected") {
		t.Errorf("service with the host network: output %q, Wait() = %v; want it connected", out, err)
	}
	refuse := func(_ context.Context, c net.Conn) { c.Close() }
	if _, err := b.StartService(t.Context(), ServiceSpec{Argv: []string{probe}, Mounts: []string{dir}, HostNetwork: true, Proxy: refuse}); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("host network and a proxy: %v; want ErrInvalidSpec", err)
	}
}

// acceptingListener is a loopback listener outside any sandbox that
// accepts and closes every connection until the test ends.
func acceptingListener(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() { // ends when ln is closed
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln
}
