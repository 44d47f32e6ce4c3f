package browser

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/homard/homard/internal/egress"
)

// chromeNames are looked up on PATH when Options.ChromePath is empty.
var chromeNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// findChrome returns the Chromium binary to run.
func findChrome(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("%w (chrome_path %q: %v)", ErrNoChromium, path, err)
		}
		return p, nil
	}
	for _, name := range chromeNames {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w (looked for %s on PATH)", ErrNoChromium, strings.Join(chromeNames, ", "))
}

// runningAsRoot reports whether Chromium would run as root, where its own
// sandbox refuses to start.
func runningAsRoot() bool { return os.Geteuid() == 0 }

// flags are Chromium's command line. Each one closes a way out or a
// source of traffic nobody asked for.
func (o *Options) flags(proxyAddr string) []string {
	f := []string{
		"--headless=new",
		"--remote-debugging-pipe",                                   // fds 3 and 4: homard's alone, no TCP port
		"--user-data-dir=" + o.ProfileDir,                           // its own profile, never the owner's
		"--proxy-server=http://" + proxyAddr,                        // every request through egress
		"--proxy-bypass-list=<-loopback>",                           // loopback too (bypassed by default)
		"--disable-quic",                                            // no UDP around the proxy
		"--force-webrtc-ip-handling-policy=disable_non_proxied_udp", // nor through WebRTC
		"--webrtc-ip-handling-policy=disable_non_proxied_udp",
		"--dns-prefetch-disable", // names are resolved by the proxy only
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-default-apps",
		"--disable-extensions",
		"--disable-client-side-phishing-detection",
		"--disable-domain-reliability",
		"--disable-breakpad",
		"--no-pings",
		"--no-first-run",
		"--no-default-browser-check",
		"--password-store=basic",
		"--disable-gpu",
		"--disable-dev-shm-usage",
		"--mute-audio",
		"--deny-permission-prompts",
		"--hide-scrollbars",
		"--disable-features=Translate,MediaRouter,DialMediaRouteProvider,OptimizationHints,AutofillServerCommunication,NetworkPrediction,HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,InterestFeedContentSuggestions,PrivacySandboxSettings4",
		"--window-size=" + strconv.Itoa(o.Width) + "," + strconv.Itoa(o.Height),
		"--lang=en-US",
	}
	return append(f, "about:blank") // as root: --no-sandbox or homard's bwrap (confine.go)
}

// instance is one running Chromium with its proxy.
type instance struct {
	o       *Options
	client  *egress.Client
	blocked *blockedLog
	logf    func(string, ...any)

	cmd    *exec.Cmd
	pid    int
	conn   *conn
	root   session // the browser's own session
	stderr *tail
	exited chan struct{} // closed when Chromium's main process was reaped
	ln     net.Listener  // the egress proxy's
	cancel context.CancelFunc
	wg     sync.WaitGroup // the reader, dispatcher, waiter, proxy and attach goroutines

	mu        sync.Mutex // guards tabs, order, active, changed, downloads
	tabs      map[targetID]*tab
	order     []targetID // tabs in the order they were opened
	active    targetID
	changed   chan struct{}     // closed and replaced when tabs change
	downloads map[string]string // download guid → suggested file name
	finished  []string          // downloads saved under their names, not yet taken (Downloads)
}

// launch starts Chromium, its proxy and its connection, and sets the
// browser-wide rules (auto-attach with interception, downloads,
// permissions). ctx bounds the start.
func launch(ctx context.Context, o *Options, blocked *blockedLog, logf func(string, ...any)) (*instance, error) {
	exe, err := findChrome(o.ChromePath)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{o.ProfileDir, o.DownloadDir} {
		if err := privateDir(d); err != nil {
			return nil, err
		}
	}
	in := &instance{
		o: o, client: o.Egress, blocked: blocked, logf: logf,
		stderr:    &tail{max: 8 << 10},
		exited:    make(chan struct{}),
		tabs:      map[targetID]*tab{},
		changed:   make(chan struct{}),
		downloads: map[string]string{},
	}
	if err := in.startProxy(); err != nil {
		return nil, err
	}
	// fd 3: Chromium reads commands; fd 4: it writes replies and events.
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		in.stopProxy()
		return nil, fmt.Errorf("browser: pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		cmdR.Close()
		cmdW.Close()
		in.stopProxy()
		return nil, fmt.Errorf("browser: pipe: %w", err)
	}
	_, prog, argv := o.confined(exe, o.flags(in.ln.Addr().String()))
	cmd := exec.Command(prog, argv...)
	cmd.ExtraFiles = []*os.File{cmdR, outW}
	cmd.Stderr = in.stderr
	cmd.Env = chromeEnv()
	// Its own process group, so that Close kills the renderers too; and
	// killed if homard dies.
	cmd.SysProcAttr = procAttr()
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Start()
	cmdR.Close()
	outW.Close()
	if err != nil {
		cmdW.Close()
		outR.Close()
		in.stopProxy()
		return nil, fmt.Errorf("%w: run %s: %v", ErrStart, exe, err)
	}
	in.cmd, in.pid = cmd, cmd.Process.Pid
	in.conn = newConn(cmdW, outR, in.onEvent, &in.wg)
	in.root = session{c: in.conn}
	in.wg.Go(func() {
		_ = cmd.Wait()
		// Renderers left behind by a crashed browser process, then our
		// ends of the pipe (which ends the reader).
		_ = syscall.Kill(-in.pid, syscall.SIGKILL)
		cmdW.Close()
		outR.Close()
		close(in.exited)
	})
	if err := in.setup(ctx); err != nil {
		in.stop()
		return nil, fmt.Errorf("%w: %v%s", ErrStart, err, in.stderr.quote())
	}
	return in, nil
}

// chromeEnv is homard's environment without proxy variables (the
// command line sets the proxy) and with a HOME Chromium may not need.
func chromeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToLower(k) {
		case "http_proxy", "https_proxy", "all_proxy", "no_proxy":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// setup runs the first commands: it fails when Chromium does not answer.
func (in *instance) setup(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go func() { // ends with setup (stop) or Chromium
		select {
		case <-in.exited:
			stop(errors.New("chromium exited"))
		case <-ctx.Done():
		}
	}()
	fail := func(what string, err error) error {
		if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
			err = c
		}
		return fmt.Errorf("%s: %v", what, err)
	}
	if err := in.root.Call(ctx, cmdBrowserGetVersion, nil, nil); err != nil {
		return fail("first command", err)
	}
	if err := in.root.Call(ctx, cmdTargetSetDiscoverTargets, &setDiscoverTargetsParams{Discover: true}, nil); err != nil {
		return fail("discover targets", err)
	}
	// Every new target (tab, popup, worker) waits until its interception
	// is on (attach in targets.go).
	if err := in.root.Call(ctx, cmdTargetSetAutoAttach, &setAutoAttachParams{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true}, nil); err != nil {
		return fail("auto-attach", err)
	}
	if err := in.root.Call(ctx, cmdBrowserSetDownloadBehavior, &setDownloadBehaviorParams{
		Behavior: "allowAndName", DownloadPath: in.o.DownloadDir, EventsEnabled: true,
	}, nil); err != nil {
		return fail("download folder", err)
	}
	for _, name := range deniedPermissions {
		err := in.root.Call(ctx, cmdBrowserSetPermission, &setPermissionParams{
			// push is only known with userVisibleOnly (the one form Chromium supports).
			Permission: permissionDescriptor{Name: name, UserVisibleOnly: name == "push"}, Setting: "denied",
		}, nil)
		if err != nil {
			in.logf("browser: deny permission %s: %v", name, err)
		}
	}
	return nil
}

// deniedPermissions are set to "denied" for every origin: a page never
// gets the owner's location, camera, microphone, clipboard or devices.
var deniedPermissions = []string{
	"geolocation", "notifications", "camera", "microphone", "clipboard-read", "clipboard-write",
	"midi", "background-sync", "persistent-storage", "push", "screen-wake-lock", "idle-detection",
	"display-capture", "window-management", "local-fonts", "storage-access", "payment-handler",
	"accelerometer", "gyroscope", "magnetometer", "ambient-light-sensor", "nfc",
}

// startProxy serves the egress proxy on a loopback port of its own.
func (in *instance) startProxy() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("browser: egress proxy: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	in.ln, in.cancel = ln, cancel
	p := in.client.NewOpenProxy(egress.ProxyOptions{Log: func(r egress.ProxyRecord) {
		if r.Status == 0 || r.Status == 400 || r.Status == 403 || r.Status == 502 {
			in.blocked.add(proxyURL(r), "proxy: "+r.Reason)
		}
	}})
	in.wg.Go(func() { // ends when ln is closed (stopProxy)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			in.wg.Go(func() { p.ServeConn(ctx, c) }) // ends with its connection or ctx
		}
	})
	return nil
}

// proxyURL describes a proxied request for Blocked.
func proxyURL(r egress.ProxyRecord) string {
	switch r.Method {
	case "CONNECT":
		return r.Host + " (CONNECT)"
	case "":
		return "(unreadable request)"
	}
	return "http://" + r.Host + " (" + r.Method + ")"
}

func (in *instance) stopProxy() {
	if in.ln != nil {
		in.ln.Close()
	}
	if in.cancel != nil {
		in.cancel()
	}
}

// stop closes Chromium (politely, then by killing its process group),
// the proxy and every goroutine of the instance. It returns when all are
// gone.
func (in *instance) stop() {
	if in.cmd != nil {
		select {
		case <-in.exited:
		default:
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			_ = in.root.Call(ctx, cmdBrowserClose, nil, nil)
			cancel()
			select {
			case <-in.exited:
			case <-time.After(5 * time.Second):
			}
			_ = syscall.Kill(-in.pid, syscall.SIGKILL)
			<-in.exited
		}
		_ = syscall.Kill(-in.pid, syscall.SIGKILL)
		// The renderers, orphaned, are reaped by init: wait (a little)
		// until the group is empty, so a caller sees it gone.
		for i := 0; i < 250 && syscall.Kill(-in.pid, 0) == nil; i++ {
			time.Sleep(20 * time.Millisecond)
		}
	}
	in.stopProxy()
	in.wg.Wait()
}

// alive reports whether Chromium is still running.
func (in *instance) alive() bool {
	select {
	case <-in.exited:
		return false
	case <-in.conn.done:
		return false
	default:
		return true
	}
}

// privateDir creates dir 0700, or makes an existing one 0700.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("browser: create %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("browser: make %s private: %w", dir, err)
	}
	return nil
}

// tail keeps the last bytes Chromium wrote to stderr, for a start error.
type tail struct {
	mu  sync.Mutex // guards buf
	buf []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// quote returns the last lines as ": chromium said: ...", or "".
func (t *tail) quote() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	s := strings.TrimSpace(strings.Join(lines, "\n"))
	if s == "" {
		return ""
	}
	return "; chromium said:\n" + s
}

// abs returns dir as an absolute path (Chromium resolves a relative
// profile against its own working directory).
func abs(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	return filepath.Abs(dir)
}
