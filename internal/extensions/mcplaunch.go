package extensions

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/mcp"
	"github.com/homard/homard/internal/sandbox"
)

// sandboxLauncher starts a stdio MCP server in the sandbox's service
// profile (sandbox.StartService): the program and mounts read-only, a
// throwaway home, homard's home and data hidden, no workspace, the
// environment exactly as configured, no network but the listed hosts
// through egress's proxy; Stop kills its whole process tree.
type sandboxLauncher struct {
	s       *Service
	client  *egress.Client
	name    string
	mounts  []string
	hosts   []string
	secrets []string // added by the proxy for the hosts each is bound to
	// hostNetwork is network = true: the machine's network, unfiltered.
	hostNetwork bool
}

var _ mcp.Launcher = sandboxLauncher{}

func (l sandboxLauncher) Start(ctx context.Context, argv, env []string) (io.ReadWriteCloser, func() error, error) {
	if len(argv) == 0 {
		return nil, nil, fmt.Errorf("start mcp server: no command")
	}
	prog := argv[0]
	if !strings.Contains(prog, "/") {
		// Looked up on homard's PATH; the sandbox shows the system folders
		// read-only, and anything else must be in mounts.
		p, err := exec.LookPath(prog)
		if err != nil {
			return nil, nil, fmt.Errorf("start mcp server: %s is not on PATH: give its absolute path", prog)
		}
		prog = p
	}
	if p, err := filepath.EvalSymlinks(prog); err == nil {
		prog = p
	}
	b, err := sandbox.Select(l.s.o.Config.Sandbox.Backend)
	if err != nil {
		return nil, nil, err
	}
	spec := sandbox.ServiceSpec{
		Argv:   append([]string{prog}, argv[1:]...),
		Env:    append([]string{"HOME=" + sandbox.ServiceHome}, env...),
		Mounts: l.mounts,
		Hide:   []string{l.s.o.Paths.DataDir, filepath.Dir(l.s.o.Paths.ConfigFile)},
		// The operator's explicit opt-in; config refuses it with hosts.
		HostNetwork: l.hostNetwork,
		Limits:      serviceLimits,
	}
	if len(l.hosts) > 0 {
		if err := l.s.checkExtensionSecrets("mcp server "+l.name, l.hosts, l.secrets); err != nil {
			return nil, nil, err
		}
		p, err := l.s.extensionProxy(l.client, "mcp server "+l.name, l.hosts, l.secrets)
		if err != nil {
			return nil, nil, err
		}
		spec.Proxy = p.ServeConn
	}
	// The service lives as long as homard uses it, not as long as the
	// call that started it: its context is homard's background one, and
	// stop ends it.
	svc, err := b.StartService(context.WithoutCancel(ctx), spec)
	if err != nil {
		return nil, nil, err
	}
	return serviceRW{svc}, svc.Stop, nil
}

// serviceRW is a service's stdout and stdin as one stream.
type serviceRW struct{ s *sandbox.Service }

func (s serviceRW) Read(p []byte) (int, error)  { return s.s.Stdout.Read(p) }
func (s serviceRW) Write(p []byte) (int, error) { return s.s.Stdin.Write(p) }
func (s serviceRW) Close() error                { return s.s.Stop() }
