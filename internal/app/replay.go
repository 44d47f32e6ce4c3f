package app

import (
	"context"
	"fmt"
	"time"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/replay"
)

// ReplayResult is what a policy replay found (internal/replay).
type ReplayResult = replay.Result

// Replay decides the tool calls recorded since under this runtime's
// configuration and under proposed, without running anything, and
// returns the calls whose verdict would change.
func (r *Runtime) Replay(ctx context.Context, proposed *config.Config, since time.Time) (ReplayResult, error) {
	before, err := replay.PolicyOf(r.Config)
	if err != nil {
		return ReplayResult{}, fmt.Errorf("%s: %w", r.Paths.ConfigFile, err)
	}
	after, err := replay.PolicyOf(proposed)
	if err != nil {
		return ReplayResult{}, err
	}
	calls, err := replay.Load(ctx, r.Store, r.Config.Owner, since)
	if err != nil {
		return ReplayResult{}, err
	}
	return replay.Replay(calls, before, after), nil
}
