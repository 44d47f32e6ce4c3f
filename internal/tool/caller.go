package tool

import (
	"context"

	"github.com/homard/homard/internal/policy"
)

// Caller is who proposed a call, as the arbiter established it from the
// channel's authentication (never from anything the model wrote). Tools
// whose data belongs to someone (memory) read it in Prepare and Run.
type Caller struct {
	Owner   string
	Session string
	Trust   policy.Trust
}

type callerKey struct{}

// WithCaller returns ctx carrying c. The arbiter sets it before Prepare
// and Run.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller ctx carries, if any. A tool that needs one
// must refuse when there is none.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}
