package eval

import (
	"os"
	"testing"

	"github.com/homard/homard/internal/app"
)

// TestMain lets this test binary act as the sandbox's helper stages, as
// homard's main does: run_command re-executes /proc/self/exe.
func TestMain(m *testing.M) {
	app.MaybeRunSandboxHelper()
	os.Exit(m.Run())
}
