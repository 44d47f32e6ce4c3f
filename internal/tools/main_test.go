package tools

import (
	"os"
	"testing"

	"github.com/homard/homard/internal/sandbox"
)

// TestMain lets this test binary act as the sandbox's mount and landlock
// stages, as homard's main does: run_command re-executes /proc/self/exe.
func TestMain(m *testing.M) {
	sandbox.MaybeRunHelper()
	os.Exit(m.Run())
}
