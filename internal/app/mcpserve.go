package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/mcp"
	"github.com/homard/homard/internal/policy"
)

// MCPServe serves homard's tools to an MCP client over in and out
// (`homard mcp serve`): each call is a proposal through the arbiter at
// trust "paired" — the owner's tools but memory, decided in a mode never
// above smart, without the owner's standing grants. A call that needs
// approval waits (gateway.approval_wait) for the owner to answer on their
// own channels (the web UI, `homard approval`, a chat card); nothing
// offered to the client can answer it, and it can only be approved once.
// client names the client's session ("mcp-<client>").
func (r *Runtime) MCPServe(ctx context.Context, in io.ReadCloser, out io.WriteCloser, client string) error {
	if !validClientName(client) {
		return fmt.Errorf("%w: client name %q: use 1 to 32 lowercase letters, digits or '-'", ErrBadRequest, client)
	}
	session := approval.PairedSessionPrefix + client
	var tools []mcp.ServedTool
	for _, s := range r.Registry.Specs() {
		if slices.Contains(taskForbiddenTools, s.Name) {
			continue // the owner's memory is not the client's
		}
		tools = append(tools, mcp.ServedTool{Name: s.Name, Description: s.Description, InputSchema: s.Schema, ReadOnly: s.ReadOnly})
	}
	return mcp.Serve(ctx, in, out, Build().Version, tools, func(ctx context.Context, tool string, args json.RawMessage) (mcp.ServedResult, error) {
		return r.pairedCall(ctx, session, tool, args)
	})
}

func validClientName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// pairedCall proposes one call of an MCP client, waits for the owner when
// it is pending, and renders what the client reads.
func (r *Runtime) pairedCall(ctx context.Context, session, tool string, args json.RawMessage) (mcp.ServedResult, error) {
	p := arbiter.Proposal{Tool: tool, Args: args, Caller: arbiter.Caller{Owner: r.Config.Owner, Trust: policy.TrustPaired, Session: session}}
	out, err := r.Arbiter.Decide(ctx, p)
	if err != nil {
		return mcp.ServedResult{}, err
	}
	if out.Decision == arbiter.Pending && out.ApprovalID != "" {
		r.pairedCard(ctx, tool, out)
		choice, err := r.awaitAnswer(ctx, out.ApprovalID, r.Config.Gateway.ApprovalWait.Std(), 0)
		if err != nil {
			return mcp.ServedResult{}, err
		}
		if choice == channel.Recorded {
			// Whatever was recorded, proposing again runs the call only if
			// an approval of exactly this plan exists.
			if out, err = r.Arbiter.Decide(ctx, p); err != nil {
				return mcp.ServedResult{}, err
			}
		}
	}
	return pairedResult(out), nil
}

// pairedResult is an outcome as the client's model reads it: the
// decision and why, and a result's text between untrusted markers when
// it came from outside (a file, a page, a command).
func pairedResult(out arbiter.Outcome) mcp.ServedResult {
	var b strings.Builder
	fmt.Fprintf(&b, "decision: %s\n", out.Decision)
	if out.Reason != "" {
		fmt.Fprintf(&b, "reason: %s\n", strings.ReplaceAll(out.Reason, "\n", " "))
	}
	if out.Decision == arbiter.Pending {
		fmt.Fprintf(&b, "waiting for approval %s by the owner on their own channels; it was not answered in time. Call again with exactly the same arguments once they approved it.\n", out.ApprovalID)
	}
	if out.Result != nil {
		if out.Result.Untrusted {
			b.WriteString(agent.WrapUntrusted(out.Result.Text))
		} else {
			b.WriteString(out.Result.Text)
		}
	}
	isErr := out.Decision != arbiter.Ran || (out.Result != nil && out.Result.IsError)
	return mcp.ServedResult{Text: strings.TrimRight(b.String(), "\n"), IsError: isErr}
}

// pairedCard sends the card of a paired client's pending call to the
// owner's chat on every enabled chat channel (once and deny only); the
// web UI and `homard approval` list it anyway. A failure is logged: the
// call still waits for an answer from any of the owner's channels.
func (r *Runtime) pairedCard(ctx context.Context, tool string, out arbiter.Outcome) {
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
