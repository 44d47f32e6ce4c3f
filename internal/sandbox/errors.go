package sandbox

import "errors"

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
