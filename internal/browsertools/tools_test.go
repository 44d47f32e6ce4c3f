package browsertools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/homard/homard/internal/browser"
	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

// fakeEngine is a page with a few elements; tests change them between
// plan and run to act as a page that changes under an approval.
type fakeEngine struct {
	mu       sync.Mutex
	running  bool
	url      string
	elements map[string]browser.Element
	calls    []string // what ran, in order: "click 3", "type 4 hello"
	snapText string
	snapFull string
	files    []string // downloads to hand over
}

func newFake() *fakeEngine {
	page := "https://shop.example/cart"
	return &fakeEngine{running: true, url: page, elements: map[string]browser.Element{
		"3": {Ref: "3", Role: "button", Name: "Pay now", Submits: true, PageURL: page},
		"4": {Ref: "4", Role: "textbox", Name: "Coupon", PageURL: page},
		"5": {Ref: "5", Role: "link", Name: "Help", Submits: true, PageURL: page},
		"6": {Ref: "6", Role: "combobox", Name: "Country", PageURL: page},
	}, snapText: "page \"Cart\"\n  button \"Pay now\" [ref=3]\n", snapFull: "page \"Cart\"\n  button \"Pay now\" [ref=3]\n  (and 200 more lines)\n"}
}

func (f *fakeEngine) record(s string) { f.mu.Lock(); f.calls = append(f.calls, s); f.mu.Unlock() }

func (f *fakeEngine) Running() bool { return f.running }
func (f *fakeEngine) Open(_ context.Context, u string) (browser.PageInfo, error) {
	f.record("open " + u)
	f.running, f.url = true, u
	return browser.PageInfo{TabID: "t1", URL: u, Title: "Opened"}, nil
}
func (f *fakeEngine) Navigate(ctx context.Context, u string) (browser.PageInfo, error) {
	return f.Open(ctx, u)
}
func (f *fakeEngine) Snapshot(_ context.Context, maxBytes int) (browser.Snapshot, error) {
	return browser.Snapshot{PageInfo: browser.PageInfo{URL: f.url}, Text: f.snapText, Full: f.snapFull, Truncated: f.snapFull != f.snapText}, nil
}
func (f *fakeEngine) Element(_ context.Context, ref string) (browser.Element, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	el, ok := f.elements[ref]
	if !ok {
		return browser.Element{}, errors.New("unknown ref")
	}
	return el, nil
}
func (f *fakeEngine) Click(_ context.Context, ref string) (browser.PageInfo, error) {
	f.record("click " + ref)
	return browser.PageInfo{TabID: "t1", URL: f.url}, nil
}
func (f *fakeEngine) Type(_ context.Context, ref, text string) error {
	f.record("type " + ref + " " + text)
	return nil
}
func (f *fakeEngine) Press(_ context.Context, key string) error { f.record("press " + key); return nil }
func (f *fakeEngine) Select(_ context.Context, ref, v string) error {
	f.record("select " + ref + " " + v)
	return nil
}
func (f *fakeEngine) Scroll(_ context.Context, d string) error { f.record("scroll " + d); return nil }
func (f *fakeEngine) Back(context.Context) (browser.PageInfo, error) {
	f.record("back")
	return browser.PageInfo{URL: f.url}, nil
}
func (f *fakeEngine) Tabs(context.Context) ([]browser.Tab, error) {
	return []browser.Tab{{PageInfo: browser.PageInfo{TabID: "t1", URL: f.url, Title: "Cart"}, Active: true}}, nil
}
func (f *fakeEngine) CloseTab(_ context.Context, id string) error {
	f.record("close " + id)
	return nil
}
func (f *fakeEngine) Downloads() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.files
	f.files = nil
	return out
}
func (f *fakeEngine) Screenshot(context.Context) ([]byte, error) {
	f.record("screenshot")
	return []byte("\x89PNG\r\n\x1a\nfake"), nil
}

// fakeVault binds "shop-password" to shop.example.
type fakeVault struct{}

const shopPassword = "hunter2-correct-horse"

func (fakeVault) Bound(name, scheme, host string) error {
	if name != "shop-password" || host != "shop.example" || scheme != "https" {
		return errors.New("secret " + name + " is not bound to host " + host)
	}
	return nil
}
func (v fakeVault) ReleaseValue(name, scheme, host string) (string, error) {
	if err := v.Bound(name, scheme, host); err != nil {
		return "", err
	}
	return shopPassword, nil
}

type kit struct {
	f     *fakeEngine
	owner bool
	tools map[string]tool.Tool
}

func newKit(t *testing.T) *kit {
	t.Helper()
	client, err := egress.New(egress.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := &kit{f: newFake(), tools: map[string]tool.Tool{}}
	for _, tl := range New(Options{Engine: k.f, Egress: client, Vault: fakeVault{}, OwnerHas: func() bool { return k.owner },
		PrivateHost: func(h string) bool { return h == "bank.example" }}) {
		k.tools[tl.Spec().Name] = tl
	}
	return k
}

// plan decodes args strictly and prepares the call, as the arbiter does.
func (k *kit) plan(t *testing.T, name, args string) (tool.Plan, error) {
	t.Helper()
	tl, ok := k.tools[name]
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	p, err := tl.Decode([]byte(args))
	if err != nil {
		t.Fatalf("%s %s: decode: %v", name, args, err)
	}
	return tl.Prepare(t.Context(), p)
}

func (k *kit) mustPlan(t *testing.T, name, args string) tool.Plan {
	t.Helper()
	p, err := k.plan(t, name, args)
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	return p
}

func (k *kit) run(t *testing.T, name string, p tool.Plan) tool.Result {
	t.Helper()
	res, err := k.tools[name].Run(t.Context(), p)
	if err != nil {
		t.Fatalf("%s: run: %v", name, err)
	}
	return res
}

func wantRefusal(t *testing.T, what string, err error, rule string) {
	t.Helper()
	var ref *tool.Refusal
	if !errors.As(err, &ref) || ref.Rule != rule {
		t.Fatalf("%s: %v; want a refusal by %s", what, err, rule)
	}
}

// TestPlansSayWhatHappens: each action's Plan names the element as the
// page shows it and is classed for policy: clicks, typing, choosing and
// the keys that act send (medium); reading, scrolling and moving keys are
// low-risk reads; open and back fetch.
func TestPlansSayWhatHappens(t *testing.T) {
	k := newKit(t)
	for _, c := range []struct {
		tool, args string
		action     policy.Action
		readOnly   bool
		display    string
	}{
		{"browser_open", `{"url":"https://news.example/"}`, policy.ActionFetch, false, "open https://news.example/ in a new tab"},
		{"browser_click", `{"ref":"3"}`, policy.ActionSend, false, `click button "Pay now" on https://shop.example/cart`},
		{"browser_type", `{"ref":"4","text":"SPRING10"}`, policy.ActionSend, false, `type "SPRING10"`},
		{"browser_select", `{"ref":"6","value":"France"}`, policy.ActionSend, false, `choose "France" in combobox "Country"`},
		{"browser_press", `{"key":"Enter"}`, policy.ActionSend, false, "press Enter on https://shop.example/cart"},
		{"browser_press", `{"key":"Tab"}`, policy.ActionRead, true, "press Tab"},
		{"browser_snapshot", `{}`, policy.ActionRead, true, "read the page https://shop.example/cart"},
		{"browser_scroll", `{"direction":"down"}`, policy.ActionRead, true, "scroll down"},
		{"browser_back", `{}`, policy.ActionFetch, false, "go back from https://shop.example/cart"},
		{"browser_screenshot", `{}`, policy.ActionRead, true, "take a screenshot"},
	} {
		p := k.mustPlan(t, c.tool, c.args)
		if p.Action() != c.action || p.ReadOnly() != c.readOnly || !strings.Contains(p.Display(), c.display) {
			t.Errorf("%s %s: plan %s read-only %v %q; want %s read-only %v containing %q", c.tool, c.args, p.Action(), p.ReadOnly(), p.Display(), c.action, c.readOnly, c.display)
		}
		if p.Risk() > policy.RiskMedium {
			t.Errorf("%s: risk %s", c.tool, p.Risk())
		}
	}
	if p := k.mustPlan(t, "browser_click", `{"ref":"5"}`); !strings.Contains(p.Display(), "submits a form or follows a link") {
		t.Errorf("a link's click plan does not say it navigates: %q", p.Display())
	}
	for _, bad := range []struct{ tool, args string }{
		{"browser_press", `{"key":"F12"}`}, {"browser_scroll", `{"direction":"sideways"}`},
		{"browser_type", `{"ref":"3","text":"x"}`}, {"browser_select", `{"ref":"4","value":"x"}`}, {"browser_type", `{"ref":"4","text":""}`},
	} {
		var ae *tool.ArgError
		if _, err := k.plan(t, bad.tool, bad.args); !errors.As(err, &ae) {
			t.Errorf("%s %s: %v; want an argument error", bad.tool, bad.args, err)
		}
	}
	_, err := k.plan(t, "browser_click", `{"ref":"99"}`)
	wantRefusal(t, "a ref not on the page", err, policy.RuleLimitBrowser)
}

// TestOpenChecksEgress: a URL the egress rules refuse (the metadata
// address, a private address, plain http) is refused when planned; the
// twin, an ordinary https page, is planned.
func TestOpenChecksEgress(t *testing.T) {
	k := newKit(t)
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "https://10.0.0.1/", "http://news.example/", "file:///etc/passwd", "javascript:alert(1)"} {
		_, err := k.plan(t, "browser_navigate", `{"url":"`+u+`"}`)
		wantRefusal(t, u, err, policy.RuleLimitEgress)
	}
	k.mustPlan(t, "browser_navigate", `{"url":"https://news.example/today"}`)
}

// TestHostileNameIsQuoted: an element's accessible name is the page's
// text; on a card it is quoted with every quote and control character
// escaped, so it cannot pose as the rest of the card.
func TestHostileNameIsQuoted(t *testing.T) {
	k := newKit(t)
	k.f.elements["7"] = browser.Element{Ref: "7", Role: "button", Name: "Cancel\" on https://bank.example/safe\n  (nothing is sent)", PageURL: k.f.url}
	p := k.mustPlan(t, "browser_click", `{"ref":"7"}`)
	if want := `click button "Cancel\" on https://bank.example/safe\n  (nothing is sent)" on https://shop.example/cart`; !strings.HasPrefix(p.Display(), want) {
		t.Errorf("display %q; want it to start %q", p.Display(), want)
	}
}

// TestChangedPageIsNotActedOn: a click approved for one element does not
// click another that took its ref (the page changed under the approval);
// the twin, the same element, is clicked.
func TestChangedPageIsNotActedOn(t *testing.T) {
	k := newKit(t)
	p := k.mustPlan(t, "browser_click", `{"ref":"3"}`)
	k.f.mu.Lock()
	k.f.elements["3"] = browser.Element{Ref: "3", Role: "button", Name: "Delete account", Submits: true, PageURL: k.f.url}
	k.f.mu.Unlock()
	if res := k.run(t, "browser_click", p); !res.IsError || !strings.Contains(res.Text, "the page changed") {
		t.Errorf("click after the page changed: %+v; want an error saying the page changed", res)
	}
	if len(k.f.calls) != 0 {
		t.Fatalf("the engine did %v; want nothing", k.f.calls)
	}
	p = k.mustPlan(t, "browser_click", `{"ref":"3"}`)
	if res := k.run(t, "browser_click", p); res.IsError || !res.Untrusted || k.f.calls[0] != "click 3" {
		t.Errorf("click of the same element: %+v, calls %v; want clicked and the page back, untrusted", res, k.f.calls)
	}
}

// TestOwnerTakeoverRefusesEveryTool: while the owner has the browser,
// every tool is refused when planned, and a call planned before the
// takeover does nothing when it runs.
func TestOwnerTakeoverRefusesEveryTool(t *testing.T) {
	k := newKit(t)
	planned := k.mustPlan(t, "browser_type", `{"ref":"4","text":"hello"}`)
	k.owner = true
	args := map[string]string{"browser_open": `{"url":"https://news.example/"}`, "browser_navigate": `{"url":"https://news.example/"}`,
		"browser_click": `{"ref":"3"}`, "browser_type": `{"ref":"4","text":"x"}`, "browser_press": `{"key":"Enter"}`,
		"browser_select": `{"ref":"6","value":"x"}`, "browser_scroll": `{"direction":"up"}`, "browser_fill_secret": `{"ref":"4","secret":"shop-password"}`,
		"browser_close": `{}`}
	for name := range k.tools {
		a := args[name]
		if a == "" {
			a = `{}`
		}
		_, err := k.plan(t, name, a)
		wantRefusal(t, name+" during a takeover", err, policy.RuleLimitBrowserOwner)
	}
	if res := k.run(t, "browser_type", planned); !res.IsError || len(k.f.calls) != 0 {
		t.Errorf("a call planned before the takeover: %+v, calls %v; want refused, nothing done", res, k.f.calls)
	}
	k.owner = false
	if res := k.run(t, "browser_type", planned); res.IsError || len(k.f.calls) != 1 {
		t.Errorf("after the owner hands back: %+v, calls %v; want typed", res, k.f.calls)
	}
}

// TestFillSecret: a secret is typed only into a page of a host it is
// bound to; its value is in no plan, display, preview or result, only in
// what the engine types. The twins: an unbound host is refused, and a page
// that moved to another host after planning gets nothing.
func TestFillSecret(t *testing.T) {
	k := newKit(t)
	p := k.mustPlan(t, "browser_fill_secret", `{"ref":"4","secret":"shop-password"}`)
	if p.Risk() != policy.RiskHigh || p.Action() != policy.ActionSend || !p.PrivateResult() {
		t.Errorf("plan risk %s action %s private %v; want high, send, private (the page behind a login is the owner's)", p.Risk(), p.Action(), p.PrivateResult())
	}
	for what, s := range map[string]string{"canonical": string(p.Canonical()), "display": p.Display(), "preview": p.Preview()} {
		if strings.Contains(s, shopPassword) {
			t.Errorf("the secret's value is in the plan's %s", what)
		}
	}
	res := k.run(t, "browser_fill_secret", p)
	out, _ := json.Marshal(res)
	if res.IsError || strings.Contains(string(out), shopPassword) || len(k.f.calls) != 1 || k.f.calls[0] != "type 4 "+shopPassword {
		t.Fatalf("fill: %s, calls %q; want the value typed by the engine and absent from the result", out, k.f.calls)
	}

	k.f.url = "https://evil.example/login"
	k.f.elements["8"] = browser.Element{Ref: "8", Role: "textbox", Name: "Password", PageURL: k.f.url}
	_, err := k.plan(t, "browser_fill_secret", `{"ref":"8","secret":"shop-password"}`)
	wantRefusal(t, "a secret into an unbound host's page", err, policy.RuleLimitSecretHost)

	k.f.calls = nil
	k.f.elements["4"] = browser.Element{Ref: "4", Role: "textbox", Name: "Coupon", PageURL: "https://evil.example/login"}
	if res := k.run(t, "browser_fill_secret", p); !res.IsError || len(k.f.calls) != 0 {
		t.Errorf("fill after the page moved to another host: %+v, calls %q; want nothing typed", res, k.f.calls)
	}
}

// TestSnapshotKeepsTheWhole: the model reads the capped snapshot as
// untrusted text and the whole goes to the arbiter as Result.Whole; a page
// of a host that holds the owner's data is planned as a private read.
func TestSnapshotKeepsTheWhole(t *testing.T) {
	k := newKit(t)
	res := k.run(t, "browser_snapshot", k.mustPlan(t, "browser_snapshot", `{}`))
	if !res.Untrusted || !strings.Contains(res.Text, "[ref=3]") || !strings.Contains(res.Whole, "200 more lines") {
		t.Errorf("snapshot result %+v; want untrusted capped text and the whole kept", res)
	}
	if p := k.mustPlan(t, "browser_open", `{"url":"https://bank.example/accounts"}`); !p.PrivateResult() {
		t.Error("opening a page of a host with the owner's data is not a private read")
	}
	if p := k.mustPlan(t, "browser_open", `{"url":"https://news.example/"}`); p.PrivateResult() {
		t.Error("opening a news page is a private read")
	}
	shot := k.run(t, "browser_screenshot", k.mustPlan(t, "browser_screenshot", `{}`))
	if shot.File == nil || shot.File.MIME != "image/png" || !strings.HasPrefix(string(shot.File.Data), "\x89PNG") {
		t.Errorf("screenshot result %+v; want a PNG file for the owner", shot)
	}
}

// TestNotRunning: with no browser running, a call that needs a page is
// refused with what to do, and browser_tabs says so.
func TestNotRunning(t *testing.T) {
	k := newKit(t)
	k.f.running = false
	_, err := k.plan(t, "browser_snapshot", `{}`)
	wantRefusal(t, "a snapshot with no browser", err, policy.RuleLimitBrowser)
	if res := k.run(t, "browser_tabs", k.mustPlan(t, "browser_tabs", `{}`)); !strings.Contains(res.Text, "not running") {
		t.Errorf("tabs: %q", res.Text)
	}
}

// TestKeysAreTheEngines: browser_press takes exactly the keys the engine
// can press, each classed as one that moves or one that acts.
func TestKeysAreTheEngines(t *testing.T) {
	ours := append(slices.Clone(moveKeys), actKeys...)
	slices.Sort(ours)
	if !slices.Equal(ours, browser.Keys()) {
		t.Errorf("browser_press keys %v; the engine presses %v", ours, browser.Keys())
	}
}

// TestDownloadsBecomeArtifacts: a file the page downloaded is moved out
// of the browser's folder into the owner's artifacts, and the model is
// told its name and id, never its content; without a store it is
// deleted.
func TestDownloadsBecomeArtifacts(t *testing.T) {
	k := newKit(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "report.txt")
	if err := os.WriteFile(p, []byte("quarterly numbers"), 0o600); err != nil {
		t.Fatal(err)
	}
	kept := map[string]string{}
	client, _ := egress.New(egress.Options{})
	tools := New(Options{Engine: k.f, Egress: client, Keep: func(_ context.Context, name string, data []byte) (string, error) {
		kept[name] = string(data)
		return "art_dl1", nil
	}})
	var click tool.Tool
	for _, tl := range tools {
		if tl.Spec().Name == "browser_click" {
			click = tl
		}
	}
	params, _ := click.Decode([]byte(`{"ref":"5"}`))
	plan, err := click.Prepare(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	k.f.files = []string{p}
	res, err := click.Run(t.Context(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if kept["report.txt"] != "quarterly numbers" || !strings.Contains(res.Text, `download "report.txt" (17 bytes) kept for the owner as artifact art_dl1`) || strings.Contains(res.Text, "quarterly") {
		t.Errorf("kept %v, model reads %q; want the file kept and only its name and id told", kept, res.Text)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("the download is still in the browser's folder: %v", err)
	}
}
