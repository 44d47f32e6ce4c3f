// Package extensions connects what extends homard to the rest of it: the
// MCP servers homard uses (started in the sandbox's service profile,
// their tools offered only while their listing is the one the owner
// trusted), homard serving its own tools to a paired MCP client (every
// call through the arbiter, approvals answered only on the owner's own
// channels), and the skill library (reviewed, pinned, run in the service
// sandbox). It decides nothing itself: every call it offers or serves is
// a proposal the arbiter decides. It never imports app; what it needs of
// the running homard (the tools to serve, the arbiter, the owner's answer
// to an approval, a card in the owner's chats) it asks through Host.
package extensions

import (
	"context"
	"log/slog"
	"time"

	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/tool"
)

// Host is what serving homard's tools to a paired MCP client needs of the
// running homard. app implements it.
type Host interface {
	// PairedTools are the tools a paired client is offered: the owner's,
	// but memory.
	PairedTools() []tool.Spec
	// Decide proposes one call to the arbiter.
	Decide(ctx context.Context, p arbiter.Proposal) (arbiter.Outcome, error)
	// Await waits at most within for the owner's answer to approval id;
	// answered reports that one was recorded (whatever it was).
	Await(ctx context.Context, id string, within time.Duration) (answered bool, err error)
	// Notify sends the card of a paired client's pending call to the
	// owner's chats. A failure is the Host's to log: the call still waits.
	Notify(ctx context.Context, tool string, out arbiter.Outcome)
}

// Options are what New needs; every field is required unless it says
// otherwise.
type Options struct {
	Paths config.Paths
	// Config is read at each use, not copied: the running homard's.
	Config *config.Config
	Store  *store.Store
	Vault  *secrets.Vault
	// Egress reaches url servers and backs each extension's proxy.
	Egress *egress.Client
	// Redactor hides secrets in the arguments an MCP call's card shows,
	// and learns a hosted server's login tokens when they are read or
	// refreshed (so a server that echoes its token into a result is
	// redacted too). Nil shows them as they are.
	Redactor Redactor
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// Logger is where the service logs, looked up at each use (serve
	// sets its own after Open). Nil means slog.Default.
	Logger func() *slog.Logger
	// Version is homard's, told to a paired MCP client.
	Version string
	// BadRequest is the error a person's mistake (a bad client name)
	// wraps, so the CLI exits as for any bad flag. Nil wraps nothing.
	BadRequest error
	// Host is the running homard, for MCPServe. Nil: MCPServe refuses.
	Host Host
}

// Redactor is what extensions needs of secrets.Redactor: an MCP call's
// Display redacts, a login's tokens are learnt.
type Redactor interface {
	Redact(s string) string
	Learn(values ...string)
}

// Service is one homard's extensions: the MCP servers it connected, the
// skill library, and serving its tools to paired MCP clients.
type Service struct {
	o Options
	// mcp holds the MCP servers StartMCP connected (mcp.go).
	mcp mcpHub
}

// New returns the extensions of one opened homard. It starts nothing:
// StartMCP starts the configured MCP servers.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{o: o}
}

// Close closes every MCP server StartMCP connected. A nil Service has
// nothing to close.
func (s *Service) Close() error {
	if s == nil {
		return nil
	}
	return s.closeMCP()
}

func (s *Service) now() time.Time { return s.o.Now() }

func (s *Service) logger() *slog.Logger {
	if s.o.Logger != nil {
		if l := s.o.Logger(); l != nil {
			return l
		}
	}
	return slog.Default()
}

// Check is one line of `homard doctor` about an extension (app's doctor
// shows it as its own).
type Check struct {
	Name   string
	OK     bool
	Info   bool // not OK, but not a failure either (a server that needs trust)
	Detail string
}
