package app

import (
	"sort"
	"strings"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/llm"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/tools"
)

// isExtension says whether the tool named name is an extension's (an MCP
// server's mcp__<server>__<tool>) rather than homard's own: the one rule
// for what agent.extension_tool_budget counts and call_tool may reach.
func isExtension(name string) bool { return strings.HasPrefix(name, "mcp__") }

// toolOffer is the tool list a runtime offers the owner's turns, computed
// once at Open from the fixed registry, so the prompt prefix never changes
// within a session (nor across sessions of the same start).
type toolOffer struct {
	// specs are the tools sent: the built-ins, the extension tools that
	// fit the budget and, when some did not, tool_search and call_tool.
	specs []tool.Spec
	// deferred are the extension tools not sent, reachable through
	// call_tool; nil when every extension tool is offered directly.
	deferred []tool.Spec
	// extensions are every extension tool, by name: what call_tool may
	// name.
	extensions map[string]tool.Spec
}

// planOffer splits the extension tools of all (every tool the registry
// will hold) against budget, the tokens of definitions they may add to
// every request (agent.extension_tool_budget). In name order, extension
// tools are offered directly while their estimated definitions fit; when
// they do not all fit, the tokens of tool_search and call_tool come out of
// the budget first, so the extension part of a request never passes it
// (unless the budget is smaller than the two proxies alone), and the
// tools after the first that does not fit are only reachable through
// them. search is tool_search over every extension tool: Open registers
// it when deferred is not empty.
func planOffer(all []tool.Spec, budget int) (offer toolOffer, search tool.Tool) {
	var builtins, ext []tool.Spec
	offer.extensions = map[string]tool.Spec{}
	for _, s := range all {
		if isExtension(s.Name) {
			ext = append(ext, s)
			offer.extensions[s.Name] = s
		} else {
			builtins = append(builtins, s)
		}
	}
	sortSpecs(ext)
	if definitionTokens(ext) <= budget {
		offer.specs = append(builtins, ext...)
		return offer, nil
	}
	search = tools.NewToolSearch(ext)
	proxies := []tool.Spec{search.Spec(), tools.CallToolSpec()}
	left := budget - definitionTokens(proxies)
	n := 0
	for n < len(ext) {
		cost := definitionTokens(ext[n : n+1])
		if cost > left {
			break
		}
		left -= cost
		n++
	}
	offer.specs = append(append(builtins, ext[:n]...), proxies...)
	offer.deferred = ext[n:]
	return offer, search
}

// envelopeTokens is what one definition's wire envelope costs beyond the
// agent's estimate of its name, description and schema (which counts 4
// tokens of framing): {"type":"function","function":{"name":…,
// "description":…,"parameters":…}} is about 70 bytes, 18 tokens at the
// estimator's 4 bytes each. Counted so the budget holds on the wire.
const envelopeTokens = 14

// definitionTokens estimates what specs add to a request: the agent's
// estimate of its prefix, plus each definition's envelope.
func definitionTokens(specs []tool.Spec) int {
	ts := make([]llm.ToolSpec, len(specs))
	for i, s := range specs {
		ts[i] = llm.ToolSpec{Name: s.Name, Description: s.Description, Schema: s.Schema}
	}
	return agent.EstimateRequest(llm.Request{Tools: ts}) + envelopeTokens*len(specs)
}

// MessageCut reports how many characters of text, the owner's message,
// the agent cuts from its middle before the model sees it: what does not
// fit in model.context_tokens beside the system prompt and the tools this
// runtime offers. 0 means it is sent whole. Earlier turns are folded
// first, so it is what the turn cuts at least. A front end warns with it.
func (r *Runtime) MessageCut(text string) int {
	ts := make([]llm.ToolSpec, len(r.offer.specs))
	for i, s := range r.offer.specs {
		ts[i] = llm.ToolSpec{Name: s.Name, Description: s.Description, Schema: s.Schema}
	}
	prefix := agent.EstimateRequest(llm.Request{System: systemPrompt, Tools: ts})
	return agent.MessageCut(text, r.mainModel().ContextTokens-prefix)
}

func sortSpecs(specs []tool.Spec) {
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
}

// forward rewrites a call_tool{name, arguments} call into the named
// extension tool's own call, same id, so the arbiter decides the real
// tool (its Plan, approval card, rules and audit record) exactly as if the
// model had called it. call_tool never reaches a built-in tool, a proxy
// or a tool outside the runtime's extensions (unknown, or its server not
// trusted): those are refused. Other calls pass unchanged.
func (o toolOffer) forward(c llm.ToolCall) (llm.ToolCall, *tool.Refusal) {
	if c.Name != tools.CallToolName {
		return c, nil
	}
	name, args, err := tools.DecodeCallTool(c.Args)
	if err != nil {
		return c, &tool.Refusal{Rule: policy.RuleLookupProxy, Reason: "call_tool: " + err.Error()}
	}
	if !isExtension(name) {
		return c, &tool.Refusal{Rule: policy.RuleLookupProxy,
			Reason: "call_tool only calls extension tools found with tool_search; call " + name + " directly if it is in your tool list"}
	}
	if _, ok := o.extensions[name]; !ok {
		return c, &tool.Refusal{Rule: policy.RuleLookupProxy,
			Reason: "no extension tool is named " + name + " (its server may not be trusted); find tools with tool_search"}
	}
	return llm.ToolCall{ID: c.ID, Name: name, Args: args}, nil
}
