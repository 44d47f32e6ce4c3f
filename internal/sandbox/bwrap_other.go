//go:build !linux

package sandbox

import "context"

// runBwrap fails closed outside Linux: bubblewrap needs Linux namespaces.
func runBwrap(context.Context, string, Spec) (Result, error) {
	return Result{}, needsLinux("bwrap")
}
