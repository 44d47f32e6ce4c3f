//go:build !linux

package sandbox

import "context"

// MaybeRunHelper does nothing outside Linux, where there is no landlock
// backend; main may call it unconditionally.
func MaybeRunHelper() {}

func landlockSupported() error { return needsLinux("landlock") }

func runLandlock(context.Context, Spec) (Result, error) { return Result{}, landlockSupported() }

// LandlockABI is 0 outside Linux.
func LandlockABI() int { return 0 }
