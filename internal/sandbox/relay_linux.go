package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// A service with ServiceSpec.Proxy has no network either: its only way out
// is a relay. homard's own binary, bound read-only at relayPath inside the
// sandbox, runs first (argv[1] relayArg): it listens on 127.0.0.1 in the
// sandbox's network namespace, starts the service with HTTP(S)_PROXY
// pointing there, and hands every accepted connection's descriptor to
// homard over relayCtlFD (SCM_RIGHTS on a socketpair, which the seccomp
// filter allows; creating a UNIX socket inside is what it forbids). homard
// serves each connection with ServiceSpec.Proxy. The relay copies no byte
// itself.
const (
	relayArg   = "__homard-sandbox-relay"
	relayPath  = "/run/homard/relay"
	relayCtlFD = 4 // after bwrapSeccompFD
)

// runRelay is the relay's main inside the sandbox: argv is the service's.
// It exits with the service's status (128+N for signal N).
func runRelay(argv []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "homard relay: "+format+"\n", a...)
		return 127
	}
	if len(argv) == 0 {
		return fail("no command")
	}
	// Nothing but stdio reaches the service: not the control socket, not
	// whatever bwrap's parent left open.
	if err := markInheritedCloexec(relayCtlFD); err != nil {
		return fail("%v", err)
	}
	ctl := os.NewFile(relayCtlFD, "relay-control")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail("listen on the sandbox's loopback: %v", err)
	}
	proxy := "http://" + ln.Addr().String()
	// exec.Cmd keeps the last of duplicate entries: these win.
	env := append(os.Environ(), "HTTP_PROXY="+proxy, "HTTPS_PROXY="+proxy, "http_proxy="+proxy, "https_proxy="+proxy)
	cmd := &exec.Cmd{Path: argv[0], Args: argv, Env: env, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if err := cmd.Start(); err != nil {
		return fail("start %s: %v", argv[0], err)
	}
	go func() { // ends with the relay's process
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f, err := c.(*net.TCPConn).File()
			c.Close()
			if err != nil {
				continue
			}
			_ = unix.Sendmsg(int(ctl.Fd()), []byte{0}, unix.UnixRights(int(f.Fd())), nil, 0)
			f.Close()
		}
	}()
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	default:
		return fail("wait for %s: %v", argv[0], err)
	}
}

// relayEnds is homard's side of the relay: the socketpair end the relay
// gets (child) and the one homard reads descriptors from (parent).
func relayEnds() (child *os.File, parent *net.UnixConn, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("create the relay's socket pair: %w", err)
	}
	child = os.NewFile(uintptr(fds[0]), "relay-child")
	pf := os.NewFile(uintptr(fds[1]), "relay-parent")
	defer pf.Close()
	c, err := net.FileConn(pf)
	if err != nil {
		child.Close()
		return nil, nil, fmt.Errorf("open the relay's socket: %w", err)
	}
	return child, c.(*net.UnixConn), nil
}

// maxRelayConns caps the connections a service has open through its proxy
// at once; one more is closed at once.
const maxRelayConns = 64

// serveRelay receives the relay's connections until it is gone (EOF) and
// serves each with proxy in a goroutine tracked by s.handlers; their ctx
// is s's handler context.
func serveRelay(s *Service, ctl *net.UnixConn, proxy func(context.Context, net.Conn)) {
	defer ctl.Close()
	slots := make(chan struct{}, maxRelayConns)
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := ctl.ReadMsgUnix(buf, oob)
		if err != nil || (n == 0 && oobn == 0) {
			return
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			continue
		}
		for _, m := range msgs {
			fds, err := unix.ParseUnixRights(&m)
			if err != nil {
				continue
			}
			for _, fd := range fds {
				f := os.NewFile(uintptr(fd), "relayed")
				conn, err := net.FileConn(f)
				f.Close()
				if err != nil {
					continue
				}
				select {
				case slots <- struct{}{}:
				default:
					conn.Close()
					continue
				}
				s.handlers.Go(func() {
					defer func() { <-slots }()
					proxy(s.handlerCtx, conn)
				})
			}
		}
	}
}
