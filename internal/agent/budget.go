package agent

// Budget limits the tool calls of one turn.
type Budget struct {
	// MaxCalls caps the tool calls of a turn. Zero means 24.
	MaxCalls int
	// MaxUnits caps the weighted units of a turn. Zero means 48.
	MaxUnits int
	// Reserve is the last part of MaxUnits that only read-only tools may
	// spend. Zero means 8; a negative value means no reserve.
	Reserve int
	// Weights gives a tool's units by tool name, overriding the weight of
	// its action (read 1, fetch and write 2, exec and send 3; any other 2).
	Weights map[string]int
}

func (b Budget) withDefaults() Budget {
	if b.MaxCalls <= 0 {
		b.MaxCalls = 24
	}
	if b.MaxUnits <= 0 {
		b.MaxUnits = 48
	}
	if b.Reserve == 0 {
		b.Reserve = 8
	}
	if b.Reserve < 0 {
		b.Reserve = 0
	}
	return b
}

// weigh returns the units a call of the named tool costs and whether the
// tool is read-only. An unknown tool costs 1: the arbiter answers it with
// an error without running anything.
func (a *Agent) weigh(name string) (units int, readOnly bool) {
	s, ok := a.byName[name]
	if w, set := a.budget.Weights[name]; set && w > 0 {
		return w, ok && s.ReadOnly
	}
	if !ok {
		return 1, true
	}
	// Actions are compared as strings: agent does not import policy.
	switch string(s.Action) {
	case "read":
		return 1, s.ReadOnly
	case "fetch", "write":
		return 2, s.ReadOnly
	case "exec", "send":
		return 3, s.ReadOnly
	}
	return 2, s.ReadOnly
}

// Budget returns the agent's budget with its defaults filled in, so a
// channel can show how much of it a turn spent.
func (a *Agent) Budget() Budget { return a.budget }
