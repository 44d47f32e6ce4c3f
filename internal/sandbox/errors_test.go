package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// TestNeedsLinux: off Linux every backend fails closed with this error; it
// wraps ErrUnavailable (so callers treat it as "no sandbox") and tells the
// owner what to do instead.
func TestNeedsLinux(t *testing.T) {
	for _, backend := range []string{"", "bwrap", "landlock", "host"} {
		err := needsLinux(backend)
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("needsLinux(%q) = %v; want it to wrap ErrUnavailable", backend, err)
		}
		msg := err.Error()
		for _, want := range []string{"needs Linux", "Docker image", backend} {
			if !strings.Contains(msg, want) {
				t.Errorf("needsLinux(%q) = %q; want it to mention %q", backend, msg, want)
			}
		}
	}
}
