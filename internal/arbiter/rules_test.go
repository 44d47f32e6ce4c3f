package arbiter_test

import (
	"testing"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
)

// TestRunInterruptedIsARuleID: store keeps its own copy of the rule id of
// an interrupted run (it imports no internal package); the arbiter writes
// it into audit records, so it must be the policy constant's value.
func TestRunInterruptedIsARuleID(t *testing.T) {
	if store.RunInterrupted != policy.RuleRecoveryInterrupted {
		t.Errorf("store.RunInterrupted = %q; want policy.RuleRecoveryInterrupted (%q)", store.RunInterrupted, policy.RuleRecoveryInterrupted)
	}
}
