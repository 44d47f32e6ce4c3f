package browsertools

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

// scroll is browser_scroll.
type scroll struct{ *base }

type scrollBody struct {
	Direction string `json:"direction"`
	Page      string `json:"page"`
}

var directions = []string{"up", "down", "top", "bottom"}

func (t *scroll) Spec() tool.Spec {
	return tool.Spec{Name: "browser_scroll", Description: scrollDoc, Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true, PublicResult: true}
}

func (t *scroll) Prepare(ctx context.Context, p ScrollParams) (tool.Plan, error) {
	if !slices.Contains(directions, p.Direction) {
		return tool.Plan{}, tool.InvalidArgs("direction %s: want up, down, top or bottom", q(p.Direction))
	}
	page, err := t.activePage(ctx)
	if err != nil {
		return tool.Plan{}, err
	}
	return t.pagePlan(t.Spec(), page, tool.PlanSpec{
		Display: "scroll " + p.Direction + " on " + page, Body: scrollBody{Direction: p.Direction, Page: page},
	})
}

func (t *scroll) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b scrollBody
	if stop, res, err := t.decode(plan, &b); stop {
		return res, err
	}
	if err := t.o.Engine.Scroll(ctx, b.Direction); err != nil {
		return failed(ctx, "scrolling", err)
	}
	return t.pageResult(ctx, "scrolled "+b.Direction+"; page "+t.active(ctx))
}

// back is browser_back.
type back struct{ *base }

func (t *back) Spec() tool.Spec {
	return tool.Spec{Name: "browser_back", Description: backDoc, Action: policy.ActionFetch, Risk: policy.RiskMedium, PublicResult: true}
}

func (t *back) Prepare(ctx context.Context, _ NoParams) (tool.Plan, error) {
	return t.activePlan(ctx, t.Spec(), "go back from")
}

func (t *back) Run(ctx context.Context, _ tool.Plan) (tool.Result, error) {
	if err := t.guard(); err != nil {
		return tool.Errorf("not done: %v", err), nil
	}
	info, err := t.o.Engine.Back(ctx)
	if err != nil {
		return failed(ctx, "going back", err)
	}
	return t.pageResult(ctx, fmt.Sprintf("went back; tab %s: %s %s", info.TabID, q(info.Title), info.URL))
}

// tabs is browser_tabs.
type tabs struct{ *base }

func (t *tabs) Spec() tool.Spec {
	return tool.Spec{Name: "browser_tabs", Description: tabsDoc, Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true, PublicResult: true}
}

func (t *tabs) Prepare(ctx context.Context, _ NoParams) (tool.Plan, error) {
	if err := t.guard(); err != nil {
		return tool.Plan{}, err
	}
	return t.Spec().Plan(tool.PlanSpec{Display: "list the browser's tabs", Body: NoParams{}})
}

func (t *tabs) Run(ctx context.Context, _ tool.Plan) (tool.Result, error) {
	if !t.o.Engine.Running() {
		return tool.Result{Text: "the browser is not running: no tabs"}, nil
	}
	list, err := t.o.Engine.Tabs(ctx)
	if err != nil {
		return failed(ctx, "listing tabs", err)
	}
	var b strings.Builder
	for _, tab := range list {
		mark := ""
		if tab.Active {
			mark = " (active)"
		}
		fmt.Fprintf(&b, "tab %s%s: %s %s\n", tab.TabID, mark, q(tab.Title), tab.URL)
	}
	if b.Len() == 0 {
		b.WriteString("no tabs are open\n")
	}
	return tool.Result{Text: b.String(), Untrusted: true}, nil
}

// closeTab is browser_close.
type closeTab struct{ *base }

func (t *closeTab) Spec() tool.Spec {
	return tool.Spec{Name: "browser_close", Description: closeDoc, Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true, PublicResult: true}
}

func (t *closeTab) Prepare(ctx context.Context, p CloseParams) (tool.Plan, error) {
	if err := t.running(); err != nil {
		return tool.Plan{}, err
	}
	what := "the active tab"
	if p.Tab != "" {
		what = "tab " + q(p.Tab)
	}
	return t.Spec().Plan(tool.PlanSpec{Display: "close " + what + " of the browser", Body: p})
}

func (t *closeTab) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b CloseParams
	if stop, res, err := t.decode(plan, &b); stop {
		return res, err
	}
	if err := t.o.Engine.CloseTab(ctx, b.Tab); err != nil {
		return failed(ctx, "closing the tab", err)
	}
	return tool.Result{Text: "closed"}, nil
}

// screenshot is browser_screenshot.
type screenshot struct{ *base }

func (t *screenshot) Spec() tool.Spec {
	return tool.Spec{Name: "browser_screenshot", Description: shotDoc, Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true, PublicResult: true}
}

func (t *screenshot) Prepare(ctx context.Context, _ NoParams) (tool.Plan, error) {
	return t.activePlan(ctx, t.Spec(), "take a screenshot of")
}

func (t *screenshot) Run(ctx context.Context, _ tool.Plan) (tool.Result, error) {
	if err := t.guard(); err != nil {
		return tool.Errorf("not done: %v", err), nil
	}
	png, err := t.o.Engine.Screenshot(ctx)
	if err != nil {
		return failed(ctx, "the screenshot", err)
	}
	return tool.Result{Text: "screenshot of " + t.active(ctx), File: &tool.File{Name: "screenshot.png", MIME: "image/png", Data: png}}, nil
}

// fillSecret is browser_fill_secret.
type fillSecret struct{ *base }

type fillBody struct {
	target
	Secret string `json:"secret"`
	Scheme string `json:"scheme"`
	Host   string `json:"host"`
}

const fillDoc = "Type a vault secret (a password) into a field by ref without seeing it; only on a page of a host the secret is bound to."

func (t *fillSecret) Spec() tool.Spec {
	// The page behind a login is the owner's: what follows is private.
	return tool.Spec{Name: "browser_fill_secret", Description: fillDoc, Action: policy.ActionSend, Risk: policy.RiskHigh}
}

func (t *fillSecret) Prepare(ctx context.Context, p FillSecretParams) (tool.Plan, error) {
	el, err := t.elementOf(ctx, p.Ref, textRoles, "a text field")
	if err != nil {
		return tool.Plan{}, err
	}
	u, err := url.Parse(el.PageURL)
	if err != nil || u.Host == "" {
		return tool.Plan{}, tool.Refuse(policy.RuleLimitBrowser, "the page's address %s has no host; a secret is typed only into a page of a host it is bound to", q(el.PageURL))
	}
	host := strings.ToLower(u.Host)
	if err := t.o.Vault.Bound(p.Secret, u.Scheme, host); err != nil {
		return tool.Plan{}, tool.Refuse(policy.RuleLimitSecretHost, "%v", err)
	}
	return t.Spec().Plan(tool.PlanSpec{
		Display: "type secret " + p.Secret + " (bound to " + host + ")\n  into " + describe(el),
		Preview: "secret: " + p.Secret + " (its value is typed only into a page of " + host + "; you and the model never see it)\nfield: " + describe(el) + "\n",
		Targets: []string{u.Scheme + "://" + host}, PrivateResult: true,
		Body: fillBody{target: targetOf(el), Secret: p.Secret, Scheme: u.Scheme, Host: host},
	})
}

func (t *fillSecret) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b fillBody
	if stop, res, err := t.decodeAt(ctx, plan, &b, &b.target); stop {
		return res, err
	}
	// The page the element is on now must still be of the bound host;
	// still checked its URL is the plan's, whose host Prepare bound.
	u, err := url.Parse(b.Page)
	if err != nil || !strings.EqualFold(u.Host, b.Host) || u.Scheme != b.Scheme {
		return tool.Errorf("refused: the page %s is not of %s://%s", b.Page, b.Scheme, b.Host), nil
	}
	value, err := t.o.Vault.ReleaseValue(b.Secret, b.Scheme, b.Host)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	if err := t.o.Engine.Type(ctx, b.Ref, value); err != nil {
		// The engine's error never quotes what was typed.
		return failed(ctx, "typing the secret", err)
	}
	return tool.Result{Text: fmt.Sprintf("typed secret %s into %s %s", b.Secret, b.Role, q(b.Name))}, nil
}
