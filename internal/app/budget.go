package app

import (
	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/policy"
)

// turnBudget is the agent's budget from config's [agent] (validated:
// positive, the reserve below the units) for a turn of the given entry
// trust. A reserve of 0 means none, which agent.Budget spells as a negative
// value (its zero means the default).
//
// Only the owner's turn may run without a token limit (max_tokens = 0):
// any other turn (a guest in an allowed group; a stranger, who in a chat
// reaches no model at all) gets guest_max_calls and guest_max_tokens,
// which config requires to be positive, so someone else's message never
// spends the owner's money without a bound.
func turnBudget(a config.Agent, trust policy.Trust) agent.Budget {
	b := agent.Budget{MaxCalls: a.MaxCalls, MaxUnits: a.MaxUnits, Reserve: a.ReserveUnits, MaxTokens: a.MaxTokens}
	if trust != policy.TrustOwner {
		b.MaxCalls = min(a.MaxCalls, a.GuestMaxCalls)
		b.MaxTokens, b.TokensSetting = a.GuestMaxTokens, "agent.guest_max_tokens"
		if b.MaxTokens <= 0 {
			// Fail closed on a config that skipped validation (a
			// struct built in code): a guest turn always has a limit.
			b.MaxTokens = config.DefaultAgentGuestMaxTokens
		}
		if b.MaxCalls <= 0 {
			b.MaxCalls = config.DefaultAgentGuestMaxCalls
		}
	}
	if b.Reserve == 0 {
		b.Reserve = -1
	}
	return b
}
