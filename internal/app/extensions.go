package app

import (
	"context"
	"slices"
	"time"

	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/extensions"
	"github.com/homard/homard/internal/tool"
)

// The extensions' types as the CLI names them (cmd imports app only).
type (
	MCPServerReport = extensions.MCPServerReport
	MCPTool         = extensions.MCPTool
	SkillJSON       = extensions.SkillJSON
	SkillReview     = extensions.SkillReview
)

// Status of a configured MCP server (MCPServerReport.Status).
const (
	MCPTrusted = extensions.MCPTrusted
	MCPNew     = extensions.MCPNew
	MCPChanged = extensions.MCPChanged
	MCPFailed  = extensions.MCPFailed
	MCPOff     = extensions.MCPOff
)

// newExtensions builds the runtime's extensions (MCP servers, skills,
// serving homard's tools to a paired MCP client) over client, the web
// tools' egress client. It starts nothing.
func (r *Runtime) newExtensions(client *egress.Client) *extensions.Service {
	return extensions.New(extensions.Options{
		Paths: r.Paths, Config: r.Config, Store: r.Store, Vault: r.Vault, Egress: client,
		Redactor: r.redactor, Now: r.now, Logger: r.logger,
		Version: Build().Version, BadRequest: ErrBadRequest, Host: pairedHost{r},
	})
}

// pairedHost is the runtime as extensions.MCPServe needs it.
type pairedHost struct{ r *Runtime }

var _ extensions.Host = pairedHost{}

// PairedTools are the registry's tools but memory: the owner's memory is
// not the client's.
func (h pairedHost) PairedTools() []tool.Spec {
	var out []tool.Spec
	for _, s := range h.r.Registry.Specs() {
		if !slices.Contains(taskForbiddenTools, s.Name) {
			out = append(out, s)
		}
	}
	return out
}

func (h pairedHost) Decide(ctx context.Context, p arbiter.Proposal) (arbiter.Outcome, error) {
	return h.r.Arbiter.Decide(ctx, p)
}

// Await is the one approval waiter (awaitAnswer), polling at its default.
func (h pairedHost) Await(ctx context.Context, id string, within time.Duration) (bool, error) {
	choice, err := h.r.awaitAnswer(ctx, id, within, 0)
	return choice == channel.Recorded, err
}

// Notify sends the card of a paired client's pending call to the owner's
// chat on every enabled chat channel (once and deny only). A failure is
// logged: the call still waits for an answer from any of the owner's
// channels.
func (h pairedHost) Notify(ctx context.Context, tool string, out arbiter.Outcome) {
	r := h.r
	card := r.card(ctx, tool, out)
	card.OnceOnly = true
	for name, ch := range r.Config.Channels.ByName() {
		if !ch.Enabled {
			continue
		}
		if err := r.Chats.QueueCard(ctx, name, card); err != nil {
			r.logger().Warn("mcp serve approval card", "platform", name, "err", err)
		}
	}
}

// extensionChecks are the extensions' doctor lines as doctor's own.
func extensionChecks(cs []extensions.Check) []Check {
	out := make([]Check, 0, len(cs))
	for _, c := range cs {
		out = append(out, Check(c))
	}
	return out
}
