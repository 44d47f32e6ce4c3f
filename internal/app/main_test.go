package app

import (
	"os"
	"testing"
)

// TestMain lets this test binary act as the sandbox's mount and landlock
// stages, as homard's main does: run_command re-executes /proc/self/exe.
func TestMain(m *testing.M) {
	MaybeRunSandboxHelper()
	os.Exit(m.Run())
}
