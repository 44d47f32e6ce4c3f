package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/owner"
	"github.com/homard/homard/internal/policy"
)

// ErrBadRequest marks a request a person got wrong (a bad flag value).
var ErrBadRequest = owner.ErrBadRequest

// CallRequest is one tool call proposed from outside a model turn (the
// `homard tool call` command), exactly as a model would propose it.
type CallRequest struct {
	Tool    string
	Args    string
	As      string // entry trust: owner, guest or unknown; empty means owner
	Session string // empty means "cli"
	Mode    string // empty means the configured mode
}

// Call proposes one tool call through the whole arbiter pipeline.
func (r *Runtime) Call(ctx context.Context, req CallRequest) (arbiter.Outcome, error) {
	trust, session, err := entrySession(req.As, req.Session, "--as")
	if err != nil {
		return arbiter.Outcome{}, err
	}
	var mode policy.Mode
	if req.Mode != "" {
		m, err := policy.ParseMode(req.Mode)
		if err != nil {
			return arbiter.Outcome{}, fmt.Errorf("%w: --mode: %w", ErrBadRequest, err)
		}
		mode = m
	}
	owner := r.Config.Owner
	if trust != policy.TrustOwner {
		// A guest or stranger is not the owner, whatever they claim; their
		// calls are recorded under their own identity.
		owner = string(trust)
	}
	return r.Arbiter.Decide(ctx, arbiter.Proposal{
		Tool:   req.Tool,
		Args:   json.RawMessage(req.Args),
		Caller: arbiter.Caller{Owner: owner, Trust: trust, Session: session},
		Mode:   mode,
	})
}

// ToolInfo is one line of `homard tool list`.
type ToolInfo struct {
	Name        string          `json:"name"`
	Action      string          `json:"action"`
	Risk        string          `json:"risk"`
	ReadOnly    bool            `json:"read_only"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"input_schema"`
}

// Tools lists the registered tools in a stable order.
func (r *Runtime) Tools() []ToolInfo {
	var out []ToolInfo
	for _, s := range r.Registry.Specs() {
		out = append(out, ToolInfo{Name: s.Name, Action: string(s.Action), Risk: s.Risk.String(),
			ReadOnly: s.ReadOnly, Description: s.Description, Schema: s.Schema})
	}
	return out
}
