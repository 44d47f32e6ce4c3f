package arbiter

import (
	"cmp"
	"net/url"
	"slices"
	"strings"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

// limited returns the rule and reason that refuse p for a caller held to
// l (nil: none), or "" when l allows it. A worker's limits are hard: they
// come before policy, so no mode, operator rule or approval lifts them.
func limited(l *Limit, p tool.Plan) (rule, reason string) {
	if l == nil {
		return "", ""
	}
	if !slices.Contains(l.Tools, p.Tool()) {
		rule := cmp.Or(l.ToolRule, policy.RuleSplitTool)
		if len(l.Tools) == 0 {
			return rule, "the " + l.Name + " may use no tool"
		}
		return rule, "the " + l.Name + " may use only " + strings.Join(l.Tools, ", ")
	}
	if l.NoSecrets && p.PrivateResult() {
		return policy.RuleSplitSecret, "the " + l.Name + " reads the web with nothing of yours: it may not send your secrets"
	}
	act := p.Action()
	if l.Hosts == nil || (act != policy.ActionFetch && act != policy.ActionSend) {
		return "", ""
	}
	for _, t := range p.Targets() {
		u, err := url.Parse(t)
		if err != nil || !slices.Contains(l.Hosts, strings.ToLower(u.Hostname())) {
			return policy.RuleSplitHost, "the " + l.Name + " may reach only " + strings.Join(l.Hosts, ", ") + ", not " + t
		}
	}
	if len(p.Targets()) == 0 {
		return policy.RuleSplitHost, "the " + l.Name + " may reach only " + strings.Join(l.Hosts, ", ") + "; this call names no host"
	}
	return "", ""
}
