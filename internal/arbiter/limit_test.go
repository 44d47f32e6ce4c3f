package arbiter

import (
	"testing"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

func limitPlan(t *testing.T, name string, act policy.Action, private bool, targets ...string) tool.Plan {
	t.Helper()
	p, err := tool.NewPlan(tool.PlanSpec{Tool: name, Action: act, Risk: policy.RiskMedium, Display: name,
		Targets: targets, PrivateResult: private, Body: map[string]any{"t": targets}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestWorkerLimits: each limit refuses what crosses it under its rule, and
// its twin — the same kind of call inside the limit — passes; no limit
// refuses nothing.
func TestWorkerLimits(t *testing.T) {
	pub := &Limit{Name: "public worker a", Tools: []string{"web_search", "http_get"}, NoSecrets: true}
	sens := &Limit{Name: "sensitive worker b", Tools: []string{"read_file", "http_get"}, Hosts: []string{"bank.example"}}
	local := &Limit{Name: "sensitive worker c", Tools: []string{"read_file"}, Hosts: []string{}}
	cases := []struct {
		name string
		l    *Limit
		p    tool.Plan
		want string
	}{
		{"public reads a file", pub, limitPlan(t, "read_file", policy.ActionRead, false, "notes/a.md"), policy.RuleSplitTool},
		{"public fetches", pub, limitPlan(t, "http_get", policy.ActionFetch, false, "https://news.example"), ""},
		{"public sends a secret", pub, limitPlan(t, "http_get", policy.ActionFetch, true, "https://api.example"), policy.RuleSplitSecret},
		{"sensitive fetches its host", sens, limitPlan(t, "http_get", policy.ActionFetch, true, "https://bank.example"), ""},
		{"sensitive fetches its host, a port", sens, limitPlan(t, "http_get", policy.ActionFetch, false, "https://bank.example:8443"), ""},
		{"sensitive fetches another host", sens, limitPlan(t, "http_get", policy.ActionFetch, false, "https://evil.example"), policy.RuleSplitHost},
		{"sensitive fetches a look-alike", sens, limitPlan(t, "http_get", policy.ActionFetch, false, "https://bank.example.evil.example"), policy.RuleSplitHost},
		{"sensitive searches", sens, limitPlan(t, "web_search", policy.ActionFetch, false, "https://search.example"), policy.RuleSplitTool},
		{"sensitive reads", sens, limitPlan(t, "read_file", policy.ActionRead, false, "bills/m.txt"), ""},
		{"local-only fetches", local, limitPlan(t, "read_file", policy.ActionFetch, false), policy.RuleSplitHost},
		{"no limit", nil, limitPlan(t, "write_file", policy.ActionWrite, false, "a.md"), ""},
	}
	for _, c := range cases {
		if rule, reason := limited(c.l, c.p); rule != c.want || (rule != "" && reason == "") {
			t.Errorf("%s: rule %q (%s); want %q", c.name, rule, reason, c.want)
		}
	}
}
