package app

import (
	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/config"
)

// turnBudget is the agent's tool budget from config's [agent] (validated:
// positive, the reserve below the units). A reserve of 0 means none, which
// agent.Budget spells as a negative value (its zero means the default).
func turnBudget(a config.Agent) agent.Budget {
	b := agent.Budget{MaxCalls: a.MaxCalls, MaxUnits: a.MaxUnits, Reserve: a.ReserveUnits}
	if b.Reserve == 0 {
		b.Reserve = -1
	}
	return b
}
