package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
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
func (s *Service) MCPServe(ctx context.Context, in io.ReadCloser, out io.WriteCloser, client string) error {
	if !validClientName(client) {
		return s.badRequest(fmt.Sprintf("client name %q: use 1 to 32 lowercase letters, digits or '-'", client))
	}
	if s.o.Host == nil {
		return errors.New("mcp serve: this homard was opened without a host to decide calls")
	}
	session := approval.PairedSessionPrefix + client
	var tools []mcp.ServedTool
	for _, sp := range s.o.Host.PairedTools() {
		tools = append(tools, mcp.ServedTool{Name: sp.Name, Description: sp.Description, InputSchema: sp.Schema, ReadOnly: sp.ReadOnly})
	}
	return mcp.Serve(ctx, in, out, s.o.Version, tools, func(ctx context.Context, tool string, args json.RawMessage) (mcp.ServedResult, error) {
		return s.pairedCall(ctx, session, tool, args)
	})
}

// badRequest is msg as a person's mistake (Options.BadRequest).
func (s *Service) badRequest(msg string) error {
	if s.o.BadRequest == nil {
		return errors.New(msg)
	}
	return fmt.Errorf("%w: %s", s.o.BadRequest, msg)
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
func (s *Service) pairedCall(ctx context.Context, session, tool string, args json.RawMessage) (mcp.ServedResult, error) {
	h := s.o.Host
	p := arbiter.Proposal{Tool: tool, Args: args, Caller: arbiter.Caller{Owner: s.o.Config.Owner, Trust: policy.TrustPaired, Session: session}}
	out, err := h.Decide(ctx, p)
	if err != nil {
		return mcp.ServedResult{}, err
	}
	if out.Decision == arbiter.Pending && out.ApprovalID != "" {
		// The card goes to the owner's chats (once and deny only); the web
		// UI and `homard approval` list it anyway.
		h.Notify(ctx, tool, out)
		answered, err := h.Await(ctx, out.ApprovalID, s.o.Config.Gateway.ApprovalWait.Std())
		if err != nil {
			return mcp.ServedResult{}, err
		}
		if answered {
			// Whatever was recorded, proposing again runs the call only if
			// an approval of exactly this plan exists.
			if out, err = h.Decide(ctx, p); err != nil {
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
