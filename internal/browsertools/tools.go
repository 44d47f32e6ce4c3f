package browsertools

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/homard/homard/internal/browser"
	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

// Engine is what the tools need of a browser: internal/browser's
// *Browser, or a fake in tests.
type Engine interface {
	Running() bool
	Open(ctx context.Context, url string) (browser.PageInfo, error)
	Navigate(ctx context.Context, url string) (browser.PageInfo, error)
	Snapshot(ctx context.Context, maxBytes int) (browser.Snapshot, error)
	Element(ctx context.Context, ref string) (browser.Element, error)
	Click(ctx context.Context, ref string) (browser.PageInfo, error)
	Type(ctx context.Context, ref, text string) error
	Press(ctx context.Context, key string) error
	Select(ctx context.Context, ref, value string) error
	Scroll(ctx context.Context, direction string) error
	Back(ctx context.Context) (browser.PageInfo, error)
	Tabs(ctx context.Context) ([]browser.Tab, error)
	CloseTab(ctx context.Context, tabID string) error
	Screenshot(ctx context.Context) ([]byte, error)
	// Downloads are the files downloaded since the last call (paths);
	// the tools move them to the owner's artifacts.
	Downloads() []string
}

var _ Engine = (*browser.Browser)(nil)

// Vault is what browser_fill_secret needs of the secrets vault.
type Vault interface {
	Bound(name, scheme, host string) error
	ReleaseValue(name, scheme, host string) (string, error)
}

// Options configure the browser tools.
type Options struct {
	Engine Engine
	// Egress checks the URLs open and navigate are asked for, when they
	// are planned (the engine checks every request again).
	Egress *egress.Client
	// Vault, when set, offers browser_fill_secret.
	Vault Vault
	// SnapshotBytes caps the page text a snapshot hands the model; the
	// whole snapshot is kept as an artifact. Zero means 4096.
	SnapshotBytes int
	// OwnerHas reports whether the owner has taken the browser over (the
	// web UI): every tool is refused meanwhile. Nil means never.
	OwnerHas func() bool
	// PrivateHost reports whether pages of host hold the owner's data (a
	// host a vault secret is bound to, one the owner signed in to):
	// reading such a page marks the session private, as an http_get with
	// a credential does. Nil means none.
	PrivateHost func(host string) bool
	// Keep stores a downloaded file as an artifact of the calling session
	// (for the owner, with the artifacts' expiry) and returns its id. Nil
	// means downloads are deleted, unread.
	Keep func(ctx context.Context, name string, data []byte) (id string, err error)
}

// maxDownloadBytes caps a download kept as an artifact; a larger one is
// deleted and the model told so.
const maxDownloadBytes = 16 << 20

// DefaultSnapshotBytes is Options.SnapshotBytes' default.
const DefaultSnapshotBytes = 4096

// maxTypeChars caps what browser_type may type at once.
const maxTypeChars = 4000

// New returns the browser tools over o.Engine.
func New(o Options) []tool.Tool {
	if o.SnapshotBytes <= 0 {
		o.SnapshotBytes = DefaultSnapshotBytes
	}
	b := &base{o: o}
	out := []tool.Tool{
		tool.Adapt[URLParams](&open{base: b, name: "browser_open"}),
		tool.Adapt[URLParams](&open{base: b, name: "browser_navigate"}),
		tool.Adapt[NoParams](&snapshot{base: b}),
		tool.Adapt[RefParams](&click{base: b}),
		tool.Adapt[TypeParams](&typeText{base: b}),
		tool.Adapt[KeyParams](&press{base: b}),
		tool.Adapt[SelectParams](&selectOption{base: b}),
		tool.Adapt[ScrollParams](&scroll{base: b}),
		tool.Adapt[NoParams](&back{base: b}),
		tool.Adapt[NoParams](&tabs{base: b}),
		tool.Adapt[CloseParams](&closeTab{base: b}),
		tool.Adapt[NoParams](&screenshot{base: b}),
	}
	if o.Vault != nil {
		out = append(out, tool.Adapt[FillSecretParams](&fillSecret{base: b}))
	}
	return out
}

// Params of the tools.
type (
	// URLParams are browser_open's and browser_navigate's.
	URLParams struct {
		URL string `json:"url"`
	}
	// NoParams are the parameters of a tool that takes none.
	NoParams struct{}
	// RefParams are browser_click's.
	RefParams struct {
		Ref string `json:"ref"`
	}
	// TypeParams are browser_type's.
	TypeParams struct {
		Ref  string `json:"ref"`
		Text string `json:"text"`
	}
	// KeyParams are browser_press's.
	KeyParams struct {
		Key string `json:"key" jsonschema:"Enter, Space, Escape, Backspace, Delete, Tab, ArrowUp/Down/Left/Right, PageUp, PageDown, Home or End"`
	}
	// SelectParams are browser_select's.
	SelectParams struct {
		Ref   string `json:"ref"`
		Value string `json:"value"`
	}
	// ScrollParams are browser_scroll's.
	ScrollParams struct {
		Direction string `json:"direction" jsonschema:"up, down, top or bottom"`
	}
	// CloseParams are browser_close's.
	CloseParams struct {
		Tab string `json:"tab,omitempty" jsonschema:"an id from browser_tabs"`
	}
	// FillSecretParams are browser_fill_secret's.
	FillSecretParams struct {
		Ref    string `json:"ref"`
		Secret string `json:"secret" jsonschema:"a vault secret's name"`
	}
)

// base holds what every tool shares.
type base struct{ o Options }

// guard refuses every call while the owner has the browser.
func (b *base) guard() error {
	if b.o.OwnerHas != nil && b.o.OwnerHas() {
		return tool.Refuse(policy.RuleLimitBrowserOwner, "the owner has taken the browser over; wait until they hand it back (the web UI), then take a new browser_snapshot")
	}
	return nil
}

// running refuses a call that needs an open page when there is none.
func (b *base) running() error {
	if err := b.guard(); err != nil {
		return err
	}
	if !b.o.Engine.Running() {
		return tool.Refuse(policy.RuleLimitBrowser, "no page is open in the browser; call browser_open with a URL first")
	}
	return nil
}

// active returns the active tab's URL ("" when it cannot tell).
func (b *base) active(ctx context.Context) string {
	tabs, err := b.o.Engine.Tabs(ctx)
	if err != nil {
		return ""
	}
	for _, t := range tabs {
		if t.Active {
			return t.URL
		}
	}
	return ""
}

// activePage is the active tab's URL, for a plan about it; a call is
// refused when no page is open.
func (b *base) activePage(ctx context.Context) (string, error) {
	if err := b.running(); err != nil {
		return "", err
	}
	return b.active(ctx), nil
}

// pagePlan is the Plan of a call to the tool spec describes (see
// tool.Spec.Plan) about the page at pageURL: the page's origin is its
// target, and a page of a private host makes its result private.
func (b *base) pagePlan(spec tool.Spec, pageURL string, s tool.PlanSpec) (tool.Plan, error) {
	s.Targets, s.PrivateResult = targets(pageURL), b.private(pageURL)
	return spec.Plan(s)
}

// activePlan is the Plan of a call that takes no arguments and acts on
// the active page, as pagePlan makes it: the card says what it does
// (doing) to the page's URL, and the body is that URL. A call is refused
// when no page is open.
func (b *base) activePlan(ctx context.Context, spec tool.Spec, doing string) (tool.Plan, error) {
	page, err := b.activePage(ctx)
	if err != nil {
		return tool.Plan{}, err
	}
	return b.pagePlan(spec, page, tool.PlanSpec{Display: doing + " " + page, Body: urlBody{URL: page}})
}

// decode begins a Run: it decodes plan's body into body and refuses the
// call while the owner has the browser. When Run must stop there, stop
// is true and res and err are what it returns.
func (b *base) decode(plan tool.Plan, body any) (stop bool, res tool.Result, err error) {
	if err := plan.Decode(body); err != nil {
		return true, tool.Result{}, err
	}
	if err := b.guard(); err != nil {
		return true, tool.Errorf("not done: %v", err), nil
	}
	return false, tool.Result{}, nil
}

// decodeAt begins the Run of a call on an element, like decode: t is
// the target within body, which must still be what the plan names
// (still).
func (b *base) decodeAt(ctx context.Context, plan tool.Plan, body any, t *target) (stop bool, res tool.Result, err error) {
	if err := plan.Decode(body); err != nil {
		return true, tool.Result{}, err
	}
	if why := b.still(ctx, *t); why != "" {
		return true, tool.Errorf("%s", why), nil
	}
	return false, tool.Result{}, nil
}

// private reports whether a page at rawURL holds the owner's data.
func (b *base) private(rawURL string) bool {
	if b.o.PrivateHost == nil {
		return false
	}
	u, err := url.Parse(rawURL)
	return err == nil && u.Host != "" && b.o.PrivateHost(strings.ToLower(u.Host))
}

// origin is the scheme://host of rawURL, the Plan's target (operator
// rules and ceilings match hosts), or rawURL itself when it has none.
func origin(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return rawURL
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// targets is the one-target list of a page's origin, or none.
func targets(pageURL string) []string {
	if pageURL == "" {
		return nil
	}
	return []string{origin(pageURL)}
}

// q quotes page-made text (an element's name, a value) for a plan: Go
// quoting shows every quote and control character, so a name cannot
// close its quotes and pose as more of the card.
func q(s string) string { return strconv.Quote(s) }

// describe names an element as a card shows it.
func describe(el browser.Element) string {
	return el.Role + " " + q(el.Name) + " on " + el.PageURL
}

// target is what a plan records of the element it acts on; Run acts only
// if the ref still points at the same thing.
type target struct {
	Ref  string `json:"ref"`
	Role string `json:"role"`
	Name string `json:"name"`
	Page string `json:"page"`
}

func targetOf(el browser.Element) target {
	return target{Ref: el.Ref, Role: el.Role, Name: el.Name, Page: el.PageURL}
}

// element looks up ref for a plan: an unknown or stale ref is refused
// with what to do.
func (b *base) element(ctx context.Context, ref string) (browser.Element, error) {
	if err := b.running(); err != nil {
		return browser.Element{}, err
	}
	if ref == "" {
		return browser.Element{}, tool.InvalidArgs("ref is empty; use a ref from the last browser_snapshot, such as \"12\"")
	}
	el, err := b.o.Engine.Element(ctx, ref)
	if err != nil {
		return browser.Element{}, tool.Refuse(policy.RuleLimitBrowser, "ref %s is not on the page (%v); take a new browser_snapshot and use a ref from it", q(ref), err)
	}
	return el, nil
}

// elementOf looks up ref for a plan, as element does, and requires one of
// roles: an element of another role is an argument error saying it is
// not what (a text field, a list box).
func (b *base) elementOf(ctx context.Context, ref string, roles []string, what string) (browser.Element, error) {
	el, err := b.element(ctx, ref)
	if err != nil {
		return browser.Element{}, err
	}
	if !slices.Contains(roles, el.Role) {
		return browser.Element{}, tool.InvalidArgs("ref %s is a %s, not %s", q(ref), el.Role, what)
	}
	return el, nil
}

// still checks, when a planned action runs, that its ref points at the
// element the plan names: "" if so, else why not (the page changed, or
// the owner took over).
func (b *base) still(ctx context.Context, t target) string {
	if err := b.guard(); err != nil {
		return err.Error()
	}
	el, err := b.o.Engine.Element(ctx, t.Ref)
	if err != nil {
		return fmt.Sprintf("not done: ref %s is no longer on the page (%v); take a new browser_snapshot", q(t.Ref), err)
	}
	if el.Role != t.Role || el.Name != t.Name || el.PageURL != t.Page {
		return fmt.Sprintf("not done: the page changed since this was planned — ref %s is now %s, not %s; take a new browser_snapshot",
			q(t.Ref), describe(el), t.Role+" "+q(t.Name)+" on "+t.Page)
	}
	return ""
}

// pageResult is what the model reads after the page may have changed:
// where the tab is and a capped snapshot, the whole kept as an artifact.
// Page text is untrusted.
func (b *base) pageResult(ctx context.Context, what string) (tool.Result, error) {
	snap, err := b.o.Engine.Snapshot(ctx, b.o.SnapshotBytes)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.Errorf("%s, but the page could not be read: %v", what, err), nil
	}
	head := what + "\n" + b.collect(ctx)
	res := tool.Result{Text: head + snap.Text, Untrusted: true}
	if snap.Truncated {
		res.Whole = head + snap.Full
	}
	return res, nil
}

// collect moves the finished downloads out of the browser's folder into
// the owner's artifacts and says what it kept, one line each. The model
// never reads a download; the owner sees it in the web UI.
func (b *base) collect(ctx context.Context) string {
	var out strings.Builder
	for _, p := range b.o.Engine.Downloads() {
		name := filepath.Base(p)
		data, err := readCapped(p, maxDownloadBytes)
		os.Remove(p)
		switch {
		case err != nil:
			fmt.Fprintf(&out, "[download %s not kept: %v]\n", q(name), err)
		case b.o.Keep == nil:
			fmt.Fprintf(&out, "[download %s (%d bytes) deleted: this homard keeps no downloads]\n", q(name), len(data))
		default:
			id, err := b.o.Keep(ctx, name, data)
			if err != nil {
				fmt.Fprintf(&out, "[download %s not kept: %v]\n", q(name), err)
				continue
			}
			fmt.Fprintf(&out, "[download %s (%d bytes) kept for the owner as artifact %s; you cannot read it]\n", q(name), len(data), id)
		}
	}
	return out.String()
}

// readCapped reads the file at p, or says it is over max bytes.
func readCapped(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		return nil, fmt.Errorf("it is over %d MiB", max>>20)
	}
	return data, err
}

// failed is the model's error result for an engine error (the page did
// not load, the element could not be clicked).
func failed(ctx context.Context, what string, err error) (tool.Result, error) {
	if ctx.Err() != nil {
		return tool.Result{}, ctx.Err()
	}
	return tool.Errorf("%s failed: %v", what, err), nil
}

// Takeover is whether the owner has the browser (the web UI's take over
// and hand back): while they do, every browser tool is refused. The hosts
// of the pages they handed back are remembered as signed in: what homard
// reads there later is the owner's (Options.PrivateHost). Safe for
// concurrent use; the zero value is ready, with the model in control.
type Takeover struct {
	mu       sync.Mutex
	owner    bool
	signedIn map[string]bool
}

// Take gives the browser to the owner.
func (t *Takeover) Take() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.owner = true
}

// Give hands the browser back to the model; pageURL is the page it
// shows, whose host is remembered as one the owner may have signed in to.
func (t *Takeover) Give(pageURL string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.owner = false
	if u, err := url.Parse(pageURL); err == nil && u.Host != "" {
		if t.signedIn == nil {
			t.signedIn = map[string]bool{}
		}
		t.signedIn[strings.ToLower(u.Host)] = true
	}
}

// Has reports whether the owner has the browser.
func (t *Takeover) Has() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.owner
}

// SignedIn reports whether the owner handed the browser back on a page
// of host.
func (t *Takeover) SignedIn(host string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.signedIn[host]
}
