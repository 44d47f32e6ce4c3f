//go:build !linux

package sandbox

import "context"

// startBwrapService fails closed outside Linux: bubblewrap needs Linux
// namespaces.
func startBwrapService(context.Context, string, ServiceSpec) (*Service, error) {
	return nil, needsLinux("bwrap")
}

// systemDirs mirrors bwrap_linux.go's; outside Linux no service starts, so
// nothing is shown.
var systemDirs []string
