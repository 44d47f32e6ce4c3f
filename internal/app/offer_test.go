package app

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/tools"
)

// TestPlanOffer: extension tools are offered directly, in name order,
// while they fit the budget; when they do not all fit, tool_search and
// call_tool are offered, their cost taken from the budget first, and the
// rest are deferred. Built-ins are always offered.
func TestPlanOffer(t *testing.T) {
	all := []tool.Spec{{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object"}`)}}
	for i := range 20 {
		// Listed out of order: the offer sorts them by name.
		all = append(all, tool.Spec{Name: fmt.Sprintf("mcp__srv__t%02d", 19-i), Description: "Does a thing with a record of the database.",
			Schema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}}}`)})
	}
	one := definitionTokens(all[1:2])
	every := definitionTokens(all[1:])
	tests := []struct {
		name         string
		budget       int
		direct       int // extension tools offered directly
		proxies      bool
		withinBudget bool
	}{
		{"every tool fits", every, 20, false, true},
		{"a huge budget", 1 << 20, 20, false, true},
		{"one token short", every - 1, -1, true, true},
		{"room for the proxies and two", proxyCost() + 2*one, 2, true, true},
		{"zero: never directly", 0, 0, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offer, search := planOffer(all, tt.budget)
			var names []string
			var ext []tool.Spec
			for _, s := range offer.specs {
				names = append(names, s.Name)
				if isExtension(s.Name) {
					ext = append(ext, s)
				}
			}
			if tt.direct >= 0 && len(ext) != tt.direct {
				t.Errorf("planOffer(budget %d) offers %d extension tools directly (%v); want %d", tt.budget, len(ext), names, tt.direct)
			}
			if !slices.Contains(names, "read_file") {
				t.Errorf("planOffer(budget %d) = %v; want the built-in offered", tt.budget, names)
			}
			hasProxies := slices.Contains(names, "tool_search") && slices.Contains(names, "call_tool")
			if hasProxies != tt.proxies || (search != nil) != tt.proxies || (len(offer.deferred) > 0) != tt.proxies {
				t.Errorf("planOffer(budget %d): proxies offered %t, tool_search built %t, %d deferred; want proxies %t", tt.budget, hasProxies, search != nil, len(offer.deferred), tt.proxies)
			}
			if len(ext)+len(offer.deferred) != 20 || len(offer.extensions) != 20 {
				t.Errorf("planOffer(budget %d): %d direct + %d deferred, %d callable; want all 20", tt.budget, len(ext), len(offer.deferred), len(offer.extensions))
			}
			for i, s := range ext { // a name-ordered prefix
				if want := fmt.Sprintf("mcp__srv__t%02d", i); s.Name != want {
					t.Errorf("direct extension tool %d = %s; want %s", i, s.Name, want)
				}
			}
			cost := definitionTokens(ext)
			if tt.proxies {
				cost += proxyCost()
			}
			if tt.withinBudget && cost > tt.budget {
				t.Errorf("planOffer(budget %d): extension definitions cost %d tokens; want at most the budget", tt.budget, cost)
			}
			if tt.withinBudget && len(offer.deferred) > 0 && cost+definitionTokens(offer.deferred[:1]) <= tt.budget {
				t.Errorf("planOffer(budget %d): %s deferred although it fits (%d tokens used)", tt.budget, offer.deferred[0].Name, cost)
			}
		})
	}
}

func proxyCost() int {
	_, search := planOffer([]tool.Spec{{Name: "mcp__a__b"}}, 0)
	return definitionTokens([]tool.Spec{search.Spec(), tools.CallToolSpec()})
}
