package tools

import (
	"context"
	_ "embed"
	"encoding/xml"
	"fmt"
	"net/url"
	"strings"

	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

//go:embed web_search.md
var webSearchDoc string

// WebSearchParams are web_search's arguments.
type WebSearchParams struct {
	Query string `json:"query"`
	Count int    `json:"count,omitempty" jsonschema:"1 to 8; default 5"`
}

// WebSearch is the web_search tool: it reads an RSS search endpoint.
type WebSearch struct {
	client    *egress.Client
	searchURL string
}

type webSearchBody struct {
	URL   string `json:"url"`
	Query string `json:"query"`
	Count int    `json:"count"`
}

func (t *WebSearch) Spec() tool.Spec {
	return tool.Spec{Name: "web_search", Description: doc(webSearchDoc), Action: policy.ActionFetch, Risk: policy.RiskMedium,
		PublicResult: true} // the public web
}

func (t *WebSearch) Prepare(ctx context.Context, p WebSearchParams) (tool.Plan, error) {
	q := strings.TrimSpace(p.Query)
	if q == "" || len(q) > 500 {
		return tool.Plan{}, tool.InvalidArgs("query must be 1 to 500 characters")
	}
	count, err := upTo("count", p.Count, 5, 8)
	if err != nil {
		return tool.Plan{}, err
	}
	u := strings.Replace(t.searchURL, "{query}", url.QueryEscape(q), 1)
	if err := t.client.Check(u); err != nil {
		return tool.Plan{}, tool.Refuse(policy.RuleLimitEgress, "search endpoint: %v", err)
	}
	pu, _ := url.Parse(u)
	return t.Spec().Plan(tool.PlanSpec{
		Display: fmt.Sprintf("search %q (%d results) at %s", q, count, pu.Host),
		Targets: []string{pu.Scheme + "://" + strings.ToLower(pu.Host)},
		Body:    webSearchBody{URL: u, Query: q, Count: count},
	})
}

type rssFeed struct {
	Items []struct {
		Title       string `xml:"title"`
		Link        string `xml:"link"`
		PubDate     string `xml:"pubDate"`
		Description string `xml:"description"`
	} `xml:"channel>item"`
}

func (t *WebSearch) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b webSearchBody
	if err := plan.Decode(&b); err != nil {
		return tool.Result{}, err
	}
	resp, err := t.client.Get(ctx, b.URL, nil)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.Result{Text: "search failed: " + err.Error(), IsError: true}, nil
	}
	if resp.Status >= 400 {
		return tool.Result{Text: fmt.Sprintf("search failed: HTTP %d", resp.Status), IsError: true}, nil
	}
	var feed rssFeed
	dec := xml.NewDecoder(strings.NewReader(string(resp.Body)))
	dec.Strict = false
	if err := dec.Decode(&feed); err != nil {
		return tool.Result{Text: fmt.Sprintf("%v: %v", errBadFeed, err), IsError: true}, nil
	}
	var out strings.Builder
	fmt.Fprintf(&out, "results for %q:\n", b.Query)
	n := 0
	for _, it := range feed.Items {
		if n == b.Count {
			break
		}
		n++
		snippet := strings.Join(strings.Fields(egress.HTMLToText([]byte(it.Description))), " ")
		if r := []rune(snippet); len(r) > 300 {
			snippet = string(r[:300]) + "…"
		}
		fmt.Fprintf(&out, "\n%d. %s\n   %s\n", n, strings.TrimSpace(it.Title), strings.TrimSpace(it.Link))
		if it.PubDate != "" {
			fmt.Fprintf(&out, "   %s\n", strings.TrimSpace(it.PubDate))
		}
		if snippet != "" {
			fmt.Fprintf(&out, "   %s\n", snippet)
		}
	}
	if n == 0 {
		out.WriteString("(no results)\n")
	}
	return tool.Result{Text: out.String(), Untrusted: true}, nil
}
