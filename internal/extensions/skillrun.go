package extensions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/homard/homard/internal/changeset"
	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/sandbox"
	"github.com/homard/homard/internal/skill"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/tools"
)

// skillRunner runs a skill's entrypoint in the sandbox's service profile
// (sandbox.StartService): its own folder read-only, a throwaway home,
// homard's home and data hidden, exactly the declared workspace roots (the
// writable one through an overlay, returned as a change set), no
// network but the declared hosts through egress's proxy, an environment
// of its own (nothing of homard's), a wall-clock limit and capped output.
type skillRunner struct {
	s      *Service
	client *egress.Client
}

// skillOutputCap bounds what a skill run's stdout and stderr keep each.
const skillOutputCap = 64 << 10

func (sr skillRunner) RunSkill(ctx context.Context, inv skill.Invocation, roots []tools.SkillRoot) (tools.SkillOutput, error) {
	cfg := sr.s.o.Config
	b, err := sandbox.Select(cfg.Sandbox.Backend)
	if err != nil {
		return tools.SkillOutput{}, err
	}
	spec := sandbox.ServiceSpec{
		Argv:   append([]string{filepath.Join(inv.Dir, filepath.FromSlash(inv.Argv[0]))}, inv.Argv[1:]...),
		Env:    []string{"HOME=" + sandbox.ServiceHome, "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"},
		Mounts: []string{inv.Dir},
		Hide:   []string{sr.s.o.Paths.DataDir, filepath.Dir(sr.s.o.Paths.ConfigFile)},
		Dir:    inv.Dir,
		Limits: serviceLimits,
	}
	// The roots as run_skill resolved them: the writable one an overlay
	// whose changes run_skill grades, each with its sensitive files hidden.
	for _, r := range roots {
		spec.Roots = append(spec.Roots, sandbox.Root{Path: r.Path, Writable: r.Writable, Hide: r.Hide})
	}
	if len(inv.Hosts) > 0 {
		// A declared secret is added by the proxy to requests for the
		// hosts it is bound to (Grant checked the binding); the skill
		// never receives its value.
		p, err := sr.s.extensionProxy(sr.client, "skill "+inv.Skill, inv.Hosts, inv.Secrets)
		if err != nil {
			return tools.SkillOutput{}, err
		}
		spec.Proxy = p.ServeConn
	}
	var stderr capped
	spec.Stderr = &stderr
	rctx, cancel := context.WithTimeout(ctx, cfg.Commands.Timeout.Std())
	defer cancel()
	svc, err := b.StartService(rctx, spec)
	if err != nil {
		return tools.SkillOutput{}, err
	}
	defer svc.Stop()
	_ = svc.Stdin.Close() // arguments are on the command line; nothing to read
	var stdout capped
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&stdout, svc.Stdout); close(copied) }()
	werr := svc.Wait()
	<-copied
	out := tools.SkillOutput{Stdout: stdout.String(), Stderr: stderr.String(), Changes: svc.Changes()}
	switch {
	case werr == nil:
	case rctx.Err() != nil && ctx.Err() == nil:
		// Stopped: Changes is nil, nothing it wrote is kept.
		return out, fmt.Errorf("skill %s did not end within %v (commands.timeout)", inv.Skill, cfg.Commands.Timeout.Std())
	case errors.Is(werr, sandbox.ErrServiceExited):
		out.ExitCode = 1
	default:
		return out, werr
	}
	return out, nil
}

// serviceLimits bound an extension's process tree (a skill run, an MCP
// server), as run_command's limits bound a command's.
var serviceLimits = sandbox.Limits{Processes: sandbox.DefaultServiceProcesses, TreeMemoryBytes: sandbox.DefaultServiceTreeMemoryBytes}

// capped keeps the first skillOutputCap bytes written to it.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := skillOutputCap - c.buf.Len(); room < len(p) {
		c.buf.Write(p[:max(room, 0)])
		c.cut = true
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return c.buf.String() + "\n(cut: output over 64 KiB)"
	}
	return c.buf.String()
}

// skillEnv is what this homard can grant a skill now: its workspace roots
// (name → writable) and the vault's secrets (name → hosts).
func (s *Service) skillEnv() skill.Env {
	env := skill.Env{Roots: map[string]bool{}, Secrets: map[string][]string{}}
	for _, root := range s.o.Config.Workspace.Roots {
		env.Roots[root.Name] = !root.ReadOnly()
	}
	for _, sec := range s.o.Vault.List() {
		env.Secrets[sec.Name] = sec.Hosts
	}
	return env
}

// SkillTools are read_skill and run_skill, with the trusted skills' menu,
// when at least one skill is trusted; none otherwise, so skills cost the
// model's prompt only when there is one to use. The menu is read now: a
// skill trusted later shows from the next start. Writes go through gate.
func (s *Service) SkillTools(ctx context.Context, gate *changeset.Gate) []tool.Tool {
	entries, err := s.Skills().Menu(ctx)
	if err != nil || len(entries) == 0 {
		return nil
	}
	return tools.SkillTools(s.Skills(), s.skillEnv, skillRunner{s: s, client: s.o.Egress}, skill.MenuText(entries), gate)
}
