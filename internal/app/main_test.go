package app

import (
	"os"
	"testing"

	"github.com/homard/homard/internal/mcp/mcptest"
)

// TestMain lets this test binary act as the sandbox's mount and landlock
// stages, as homard's main does: run_command re-executes /proc/self/exe.
// With mcptest.SpecEnv set it is the tests' stdio MCP server instead.
func TestMain(m *testing.M) {
	// First: a service's relay is this binary too, with the server's
	// environment (the spec variable included), and must relay.
	MaybeRunSandboxHelper()
	if home := os.Getenv(replicaHomeEnv); home != "" { // TestReplicaKilledMidTurn's child replica
		runReplicaChild(home)
	}
	if spec := os.Getenv(mcptest.SpecEnv); spec != "" {
		mcptest.Serve(os.Stdin, os.Stdout, spec)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
