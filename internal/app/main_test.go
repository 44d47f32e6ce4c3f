package app

import (
	"os"
	"testing"
)

// TestMain lets this test binary act as the sandbox's mount and landlock
// stages, as homard's main does: run_command re-executes /proc/self/exe.
// With HOMARD_APP_MCP_SPEC set it is the tests' stdio MCP server instead
// (mcpserver_test.go).
func TestMain(m *testing.M) {
	if spec := os.Getenv("HOMARD_APP_MCP_SPEC"); spec != "" {
		runFakeMCPServer(spec)
		os.Exit(0)
	}
	MaybeRunSandboxHelper()
	os.Exit(m.Run())
}
