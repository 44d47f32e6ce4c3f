//go:build !linux

package sandbox

import (
	"context"
	"fmt"
)

// MaybeRunHelper does nothing outside Linux, where there is no landlock
// backend; main may call it unconditionally.
func MaybeRunHelper() {}

func landlockSupported() error {
	return fmt.Errorf("%w: landlock: Landlock only exists on Linux; set sandbox.backend", ErrUnavailable)
}

func runLandlock(context.Context, Spec) (Result, error) { return Result{}, landlockSupported() }

// LandlockABI is 0 outside Linux.
func LandlockABI() int { return 0 }
