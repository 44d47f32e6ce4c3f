package tools

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

// The two proxies through which the model reaches extension tools that
// are not offered directly (see internal/app/offer.go).
const (
	ToolSearchName = "tool_search"
	CallToolName   = "call_tool"
)

//go:embed tool_search.md
var toolSearchDoc string

//go:embed call_tool.md
var callToolDoc string

// maxSearchResults caps the tools one tool_search returns.
const maxSearchResults = 8

// maxSearchDescription caps one tool's description in a result, in bytes.
const maxSearchDescription = 1000

// ToolSearchParams are tool_search's arguments.
type ToolSearchParams struct {
	Query string `json:"query" jsonschema:"words describing the task or the tool's name"`
}

// ToolSearch is the tool_search tool: a ranked match over a fixed
// catalog of extension tools' names and descriptions. The ranking is
// hand-rolled (word and substring matches, names weigh more than
// descriptions); the catalog is small enough to scan on every call.
type ToolSearch struct{ catalog []tool.Spec }

// NewToolSearch builds tool_search over catalog, the extension tools the
// runtime holds (fixed for its life).
func NewToolSearch(catalog []tool.Spec) tool.Tool {
	c := slices.Clone(catalog)
	sort.Slice(c, func(i, j int) bool { return c[i].Name < c[j].Name })
	return tool.Adapt[ToolSearchParams](&ToolSearch{catalog: c})
}

func (t *ToolSearch) Spec() tool.Spec {
	return tool.Spec{Name: ToolSearchName, Description: doc(toolSearchDoc), Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true}
}

func (t *ToolSearch) Prepare(_ context.Context, p ToolSearchParams) (tool.Plan, error) {
	if len(searchWords(p.Query)) == 0 {
		return tool.Plan{}, &tool.ArgError{Reason: "query has no words: describe the task or name the tool"}
	}
	return t.Spec().Plan(tool.PlanSpec{
		Display: fmt.Sprintf("search the extension tools for %q", p.Query),
		Body:    p,
	})
}

// Run lists the best matches. Names, descriptions and schemas are the
// servers' words, so the result is untrusted.
func (t *ToolSearch) Run(_ context.Context, plan tool.Plan) (tool.Result, error) {
	var p ToolSearchParams
	if err := plan.Decode(&p); err != nil {
		return tool.Result{}, err
	}
	found := SearchTools(t.catalog, p.Query, maxSearchResults)
	if len(found) == 0 {
		return tool.Result{Text: fmt.Sprintf("no extension tool matches %q (%d extension tools exist); try other words", p.Query, len(t.catalog))}, nil
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d extension tools match; call one with call_tool{name, arguments}\n", len(found))
	for _, s := range found {
		desc := s.Description
		if len(desc) > maxSearchDescription {
			desc = strings.ToValidUTF8(desc[:maxSearchDescription], "") + " […]"
		}
		var schema bytes.Buffer
		if json.Compact(&schema, s.Schema) != nil {
			schema.Reset()
			schema.WriteString("{}")
		}
		fmt.Fprintf(&sb, "\nname: %s\ndescription: %s\ninput_schema: %s\n", s.Name, desc, schema.String())
	}
	return tool.Result{Text: strings.TrimRight(sb.String(), "\n"), Untrusted: true}, nil
}

// SearchTools ranks catalog against query and returns at most limit
// specs that match at all, best first (ties by name). A query word equal
// to a word of a tool's name scores 4, inside its name 2, a word of its
// description 1.
func SearchTools(catalog []tool.Spec, query string, limit int) []tool.Spec {
	words := searchWords(query)
	type hit struct {
		s     tool.Spec
		score int
	}
	var hits []hit
	for _, s := range catalog {
		name := strings.ToLower(s.Name)
		nameWords := searchWords(s.Name)
		descWords := searchWords(s.Description)
		score := 0
		for _, w := range words {
			switch {
			case slices.Contains(nameWords, w):
				score += 4
			case strings.Contains(name, w):
				score += 2
			}
			if slices.Contains(descWords, w) {
				score++
			}
		}
		if score > 0 {
			hits = append(hits, hit{s, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		x, y := hits[i], hits[j]
		if x.score != y.score {
			return x.score > y.score
		}
		return x.s.Name < y.s.Name
	})
	out := make([]tool.Spec, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, h.s)
	}
	return out
}

// searchWords splits s into lowercase words of letters and digits
// ("mcp__fake__write_file" gives mcp, fake, write, file), leaving out
// one-letter words and a few English ones that would match everything.
func searchWords(s string) []string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	return slices.DeleteFunc(words, func(w string) bool {
		return len(w) < 2 || slices.Contains(stopWords, w)
	})
}

// stopWords match too much to rank by.
var stopWords = []string{"an", "and", "as", "at", "by", "for", "from", "in", "into", "is", "it", "me", "my", "of", "on", "or", "the", "to", "with"}

// CallToolParams describe call_tool's arguments for its schema; a call is
// read with DecodeCallTool, never run as a tool.
type CallToolParams struct {
	Name      string         `json:"name" jsonschema:"the extension tool's name, as tool_search gave it"`
	Arguments map[string]any `json:"arguments,omitempty" jsonschema:"the tool's arguments, matching its input schema"`
}

// CallToolSpec is call_tool's definition. call_tool is not in the
// registry: the agent rewrites each call of it into the named tool's own
// call before the arbiter sees it (agent.Options.Forward), so a call of
// it that reaches the arbiter is an unknown tool.
func CallToolSpec() tool.Spec {
	schema, err := tool.SchemaFor[CallToolParams]()
	if err != nil {
		panic(fmt.Sprintf("tool %s: schema: %v", CallToolName, err))
	}
	return tool.Spec{Name: CallToolName, Description: doc(callToolDoc), Schema: schema,
		Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true}
}

// DecodeCallTool reads call_tool's arguments strictly: the tool's name and
// its arguments exactly as written (an object, "{}" when absent; null is
// refused, as every strict decode here refuses it), for the
// named tool's own Decode to check.
func DecodeCallTool(raw []byte) (name string, args json.RawMessage, err error) {
	// Strictly first (unknown or duplicate keys, types, limits); then the
	// arguments' own bytes, so numbers reach the tool's Decode as written.
	var p CallToolParams
	if err := tool.DecodeStrict(raw, &p, tool.DefaultLimits); err != nil {
		return "", nil, err
	}
	if p.Name == "" {
		return "", nil, fmt.Errorf("%w: name is missing: give the tool's name as tool_search gave it", tool.ErrArguments)
	}
	var exact struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(raw, &exact); err != nil {
		return "", nil, fmt.Errorf("%w: %v", tool.ErrArguments, err)
	}
	args = bytes.TrimSpace(exact.Arguments)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return p.Name, args, nil
}
