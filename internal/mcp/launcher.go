package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Launcher starts a stdio server's process and returns its stdio pipes
// (reads are its stdout, writes its stdin) and a stop function that kills
// the whole process tree and reaps it. stop is called exactly once per
// successful Start, after which the pipes are no longer used. The app plugs
// in the sandbox's service profile; ExecLauncher is the plain fallback.
type Launcher interface {
	Start(ctx context.Context, argv, env []string) (rw io.ReadWriteCloser, stop func() error, err error)
}

// ExecLauncher starts a server with os/exec and no sandbox: the
// environment exactly as given (nothing inherited), "/" as its working
// folder, stderr discarded, in its own process group, which stop kills
// with SIGKILL. A program without a slash is looked up in the PATH of env,
// not homard's.
type ExecLauncher struct{}

var _ Launcher = ExecLauncher{}

// Start implements Launcher.
func (ExecLauncher) Start(_ context.Context, argv, env []string) (io.ReadWriteCloser, func() error, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, nil, errors.New("start mcp server: empty command")
	}
	path, err := lookPath(argv[0], env)
	if err != nil {
		return nil, nil, fmt.Errorf("start mcp server: %w", err)
	}
	if env == nil {
		env = []string{} // a nil Env would inherit homard's environment
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        argv,
		Env:         env,
		Dir:         "/",
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("start mcp server: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("start mcp server: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start mcp server %s: %w", argv[0], err)
	}
	pipes := &pipeRW{r: stdout, w: stdin}
	stop := sync.OnceValue(func() error {
		// The group id is the child's pid (Setpgid): this reaches every
		// descendant that did not leave the group.
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("stop mcp server: %w", err)
		}
		_ = pipes.Close()
		_ = cmd.Wait() // "signal: killed" is the expected outcome
		return nil
	})
	return pipes, stop, nil
}

// lookPath resolves name in the PATH of env.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	var path string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in the server's PATH (give an absolute path, or set PATH in its env)", name)
}

// pipeRW joins a child's stdout and stdin; Close closes both, once.
type pipeRW struct {
	r    io.ReadCloser
	w    io.WriteCloser
	once sync.Once
}

func (p *pipeRW) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeRW) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeRW) Close() error {
	p.once.Do(func() {
		_ = p.w.Close()
		_ = p.r.Close()
	})
	return nil
}
