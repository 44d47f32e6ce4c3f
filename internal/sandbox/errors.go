package sandbox

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalidSpec is returned when a Spec is not safe to execute as given
	// (relative paths, a cwd outside the root, a malformed environment entry).
	ErrInvalidSpec = errors.New("invalid sandbox spec")
	// ErrUnavailable is wrapped by every Available() error: the backend
	// cannot run on this machine.
	ErrUnavailable = errors.New("sandbox backend unavailable")
	// ErrUnknownBackend is returned by Select for a name it does not know.
	ErrUnknownBackend = errors.New("unknown sandbox backend")
)

// ErrUnenforceable is returned when a requested limit cannot be enforced for
// this child, so running it would silently be weaker than configured.
var ErrUnenforceable = errors.New("sandbox limit cannot be enforced")

// needsLinux is the error every backend returns outside Linux, so that
// run_command and the other tools that start programs fail closed there and
// say what to do instead. backend names the backend ("" for auto).
func needsLinux(backend string) error {
	if backend != "" {
		backend += ": "
	}
	return fmt.Errorf("%w: %sthe command sandbox needs Linux (user namespaces, Landlock or bubblewrap); on macOS run homard in the Docker image (see docs/DOCKER.md)", ErrUnavailable, backend)
}
