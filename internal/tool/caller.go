package tool

import (
	"context"

	"github.com/homard/homard/internal/policy"
)

// Caller is who proposed the call being prepared or run. The arbiter puts
// it into the context it passes to Prepare and Run, taken from the channel's
// authentication. A tool that needs to know who is asking (to read only the
// caller's own artifacts, say) reads it with CallerFrom — never from its
// arguments, which the model wrote.
type Caller struct {
	Owner   string
	Session string
	Trust   policy.Trust
	// Mode is the permission mode the call was decided in. A tool may
	// only use it to be stricter (run_command holds a high-graded change
	// set for the owner in every mode but yolo).
	Mode policy.Mode
	// Run is the id of the ToolRun the call runs as: set when Run is
	// called for a Plan with an effect (its "running" row is committed
	// first), "" in Prepare and for read-only Plans. A tool that keeps a
	// durable record of its effect (a change set's journal) stores it, so
	// that the audit record written for a run interrupted by a crash can
	// list what the run changed.
	Run string
}

type callerKey struct{}

// WithCaller returns a context carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller WithCaller stored. ok is false when there
// is none, or when it names no owner: a tool that depends on identity must
// then refuse.
func CallerFrom(ctx context.Context) (c Caller, ok bool) {
	c, ok = ctx.Value(callerKey{}).(Caller)
	if !ok || c.Owner == "" {
		return Caller{}, false
	}
	return c, true
}
