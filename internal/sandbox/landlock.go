package sandbox

import (
	"context"
	"fmt"
)

// Landlock will confine a host child with Landlock LSM rules (read-only
// system paths, read-write workspace, no network on kernels with ABI v4),
// applied by a re-exec helper before execve. It is not implemented yet:
// Available reports so and Run refuses.
type Landlock struct{}

// NewLandlock returns the landlock backend.
func NewLandlock() *Landlock { return &Landlock{} }

// Name implements Backend.
func (*Landlock) Name() string { return "landlock" }

// Available implements Backend.
func (*Landlock) Available() error {
	return fmt.Errorf("%w: landlock: not implemented yet; use sandbox.backend = \"bwrap\" (apt-get install bubblewrap)", ErrUnavailable)
}

// Run implements Backend; it always fails.
func (l *Landlock) Run(context.Context, Spec) (Result, error) {
	return Result{}, l.Available()
}
