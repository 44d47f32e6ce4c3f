package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Bounds on waiting for a page: a load that takes longer is left to go
// on (the call returns what the tab shows then); a click or key that does
// not start a navigation within navStartWait is taken not to navigate.
const (
	loadWait     = 20 * time.Second
	navStartWait = time.Second
)

// with runs fn as one action on the running Chromium (started if need
// be), holding off the idle timer.
func (b *Browser) with(ctx context.Context, fn func(in *instance) error) error {
	b.op.Lock()
	defer b.op.Unlock()
	in, release, err := b.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return fn(in)
}

// withActive runs fn on the active tab, as with runs it on the instance.
func (b *Browser) withActive(ctx context.Context, fn func(in *instance, t *tab) error) error {
	return b.with(ctx, func(in *instance) error {
		t, err := in.activeTab()
		if err != nil {
			return err
		}
		return fn(in, t)
	})
}

// withNode runs fn on the element ref points at (node), as with runs it
// on the instance: t is its tab, id its node.
func (b *Browser) withNode(ctx context.Context, ref string, fn func(in *instance, t *tab, id backendNodeID) error) error {
	return b.with(ctx, func(in *instance) error {
		t, id, err := b.node(in, ref)
		if err != nil {
			return err
		}
		return fn(in, t, id)
	})
}

// checkNav refuses a URL the model may not open: only http and https
// (no javascript:, file:, data: or chrome: URLs), and only what the
// egress rules admit.
func (b *Browser) checkNav(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %q is not a URL", ErrArgument, raw)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return fmt.Errorf("%w: only http and https URLs can be opened, not %q", ErrArgument, u.Scheme+":")
	}
	if err := b.o.Egress.Check(raw); err != nil {
		return fmt.Errorf("%w: %v", ErrBlocked, err)
	}
	return nil
}

// Open opens rawURL in a new tab, which becomes the active one, and waits
// (bounded) for it to load.
func (b *Browser) Open(ctx context.Context, rawURL string) (PageInfo, error) {
	if err := b.checkNav(rawURL); err != nil {
		return PageInfo{}, err
	}
	var pi PageInfo
	err := b.with(ctx, func(in *instance) error {
		t, err := in.newTab(ctx)
		if err != nil {
			return err
		}
		pi, err = in.navigate(ctx, t, rawURL)
		return err
	})
	return pi, err
}

// Navigate loads rawURL in the active tab (opening one if there is none).
func (b *Browser) Navigate(ctx context.Context, rawURL string) (PageInfo, error) {
	if err := b.checkNav(rawURL); err != nil {
		return PageInfo{}, err
	}
	var pi PageInfo
	err := b.with(ctx, func(in *instance) error {
		t, err := in.activeTab()
		if errors.Is(err, ErrNoTab) {
			t, err = in.newTab(ctx)
		}
		if err != nil {
			return err
		}
		pi, err = in.navigate(ctx, t, rawURL)
		return err
	})
	return pi, err
}

// newTab returns a tab to open a page in and makes it active: the blank
// tab Chromium started with, or a new one.
func (in *instance) newTab(ctx context.Context) (*tab, error) {
	in.mu.Lock()
	if t := in.tabs[in.active]; t != nil && t.fresh {
		t.fresh = false
		in.mu.Unlock()
		return t, nil
	}
	in.mu.Unlock()
	var res createTargetResult
	if err := in.root.Call(ctx, cmdTargetCreateTarget, &createTargetParams{URL: "about:blank"}, &res); err != nil {
		return nil, fmt.Errorf("browser: open a tab: %w", err)
	}
	t, err := in.waitTab(ctx, res.TargetID)
	if err != nil {
		return nil, err
	}
	in.mu.Lock()
	t.fresh = false
	in.active = t.id
	in.mu.Unlock()
	return t, nil
}

// navigate loads rawURL in t and waits for its load event (bounded).
func (in *instance) navigate(ctx context.Context, t *tab, rawURL string) (PageInfo, error) {
	loads, stop := t.s.Subscribe(evPageLoadEventFired)
	defer stop()
	var res navigateResult
	if err := t.s.Call(ctx, cmdPageNavigate, &navigateParams{URL: rawURL}, &res); err != nil {
		return PageInfo{}, fmt.Errorf("browser: open %s: %w", rawURL, err)
	}
	if res.ErrorText != "" && !res.IsDownload {
		err := fmt.Errorf("browser: open %s: %s", rawURL, res.ErrorText)
		if strings.Contains(res.ErrorText, "BLOCKED_BY_CLIENT") || strings.Contains(res.ErrorText, "TUNNEL_CONNECTION_FAILED") {
			err = fmt.Errorf("%w: open %s: %s", ErrBlocked, rawURL, in.lastReason(res.ErrorText))
		}
		return in.pageInfo(ctx, t), err
	}
	if res.LoaderID != "" && !res.IsDownload {
		if err := waitFor(ctx, loads, loadWait); err != nil {
			return PageInfo{}, err
		}
	}
	return in.pageInfo(ctx, t), nil
}

// lastReason is the reason of the latest refusal, for an error.
func (in *instance) lastReason(fallback string) string {
	if l := in.blocked.list(); len(l) > 0 {
		return l[len(l)-1].Reason
	}
	return fallback
}

// waitFor waits for one event on ch, at most d; only ctx ending is an
// error (a slow page is not).
func waitFor(ctx context.Context, ch <-chan json.RawMessage, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// settle runs act on t and, if it starts a navigation of t's main frame
// within navStartWait, waits (bounded) until the frame stops loading: a
// load event, or the end of a navigation that fires none (a download, a
// page restored from the back-forward cache).
func (in *instance) settle(ctx context.Context, t *tab, act func() error) error {
	starts, stopStarts := t.s.Subscribe(evPageFrameStartedLoading)
	defer stopStarts()
	stops, stopStops := t.s.Subscribe(evPageFrameStoppedLoading)
	defer stopStops()
	loads, stopLoads := t.s.Subscribe(evPageLoadEventFired)
	defer stopLoads()
	if err := act(); err != nil {
		return err
	}
	main := func(raw json.RawMessage) bool {
		var e frameEvent
		return json.Unmarshal(raw, &e) == nil && e.FrameID == t.id
	}
	timer := time.NewTimer(navStartWait)
	defer timer.Stop()
	started := false
	for {
		select {
		case raw, ok := <-starts:
			if ok && !started && main(raw) {
				started = true
				timer.Reset(loadWait)
			}
		case raw, ok := <-stops:
			if ok && started && main(raw) {
				return nil
			}
		case _, ok := <-loads:
			if ok && started {
				return nil
			}
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// pageInfo returns what t shows now.
func (in *instance) pageInfo(ctx context.Context, t *tab) PageInfo {
	var res getTargetInfoResult
	if err := in.root.Call(ctx, cmdTargetGetTargetInfo, &targetParams{TargetID: t.id}, &res); err == nil && res.TargetInfo != nil {
		in.mu.Lock()
		t.url, t.title = res.TargetInfo.URL, res.TargetInfo.Title
		in.mu.Unlock()
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return t.info()
}

// node returns the tab and DOM node of a ref from the latest snapshot.
func (b *Browser) node(in *instance, ref string) (*tab, backendNodeID, error) {
	b.mu.Lock()
	refs := b.refs
	b.mu.Unlock()
	id, ok := refs.refs[ref]
	if !ok {
		return nil, 0, fmt.Errorf("%w: %q is not a ref of the latest snapshot; take a snapshot and use its refs", ErrRef, ref)
	}
	in.mu.Lock()
	t := in.tabs[refs.tab]
	active := in.active == refs.tab
	in.mu.Unlock()
	if t == nil || !active {
		return nil, 0, fmt.Errorf("%w: %q is from a snapshot of another tab; take a new snapshot", ErrRef, ref)
	}
	return t, id, nil
}

// staleRef turns a protocol error about a node into ErrRef.
func staleRef(ref string, err error) error {
	var pe *protocolError
	if errors.As(err, &pe) {
		return fmt.Errorf("%w: %q no longer points at an element (%v); take a new snapshot", ErrRef, ref, pe.Message)
	}
	return err
}

// Click clicks the centre of the element ref points at, after scrolling
// it into view, and waits (bounded) for a navigation it starts. A tab the
// click opens becomes the active one.
func (b *Browser) Click(ctx context.Context, ref string) (PageInfo, error) {
	var pi PageInfo
	err := b.withNode(ctx, ref, func(in *instance, t *tab, id backendNodeID) error {
		x, y, err := center(ctx, t.s, id)
		if err != nil {
			return staleRef(ref, err)
		}
		in.mu.Lock()
		before := len(in.order)
		in.mu.Unlock()
		err = in.settle(ctx, t, func() error { return click(ctx, t.s, x, y) })
		if err != nil {
			return err
		}
		// A tab the click opened (target=_blank, window.open).
		in.mu.Lock()
		if len(in.order) > before {
			if nt := in.tabs[in.order[len(in.order)-1]]; nt != nil && nt.opener == t.id {
				in.active, t = nt.id, nt
			}
		}
		in.mu.Unlock()
		pi = in.pageInfo(ctx, t)
		return nil
	})
	return pi, err
}

// center scrolls node id into view and returns the centre of its box.
func center(ctx context.Context, s session, id backendNodeID) (float64, float64, error) {
	if err := s.Call(ctx, cmdDOMScrollIntoViewIfNeeded, &nodeParams{BackendNodeID: id}, nil); err != nil {
		return 0, 0, err
	}
	var res getBoxModelResult
	if err := s.Call(ctx, cmdDOMGetBoxModel, &nodeParams{BackendNodeID: id}, &res); err != nil {
		return 0, 0, err
	}
	if res.Model == nil || len(res.Model.Border) < 8 {
		return 0, 0, errors.New("the element has no box")
	}
	q := res.Model.Border
	return (q[0] + q[2] + q[4] + q[6]) / 4, (q[1] + q[3] + q[5] + q[7]) / 4, nil
}

// click moves the mouse to x, y and clicks the left button.
func click(ctx context.Context, s session, x, y float64) error {
	for _, e := range []mouseEvent{
		{Type: "mouseMoved", X: x, Y: y},
		{Type: "mousePressed", X: x, Y: y, Button: "left", Buttons: 1, ClickCount: 1},
		{Type: "mouseReleased", X: x, Y: y, Button: "left", ClickCount: 1},
	} {
		if err := s.Call(ctx, cmdInputDispatchMouseEvent, &e, nil); err != nil {
			return fmt.Errorf("browser: click: %w", err)
		}
	}
	return nil
}

// Type focuses the element ref points at and inserts text, as a paste
// would (no key events per character).
func (b *Browser) Type(ctx context.Context, ref, text string) error {
	return b.withNode(ctx, ref, func(in *instance, t *tab, id backendNodeID) error {
		if err := t.s.Call(ctx, cmdDOMFocus, &nodeParams{BackendNodeID: id}, nil); err != nil {
			return staleRef(ref, err)
		}
		if err := t.s.Call(ctx, cmdInputInsertText, &insertTextParams{Text: text}, nil); err != nil {
			return fmt.Errorf("browser: type: %w", err)
		}
		return nil
	})
}

// Press presses one key of a closed list (Keys) in the active tab, and
// waits (bounded) for a navigation it starts (Enter in a form).
func (b *Browser) Press(ctx context.Context, key string) error {
	k, ok := keys[key]
	if !ok {
		return fmt.Errorf("%w: key %q; use one of %s", ErrArgument, key, strings.Join(Keys(), ", "))
	}
	return b.withActive(ctx, func(in *instance, t *tab) error {
		return in.settle(ctx, t, func() error { return pressKey(ctx, t.s, k) })
	})
}

// callOn runs one of this package's fixed functions with the element id
// as this and returns its JSON result in out. It runs in an isolated
// world of the tab's main frame: the page's own script shares the DOM
// but not the JavaScript globals and prototypes, so it cannot change
// what the function sees (a button pretending not to submit).
func callOn(ctx context.Context, s session, frame targetID, id backendNodeID, fn string, out any, args ...any) error {
	var world createIsolatedWorldResult
	if err := s.Call(ctx, cmdPageCreateIsolatedWorld, &createIsolatedWorldParams{FrameID: frame, WorldName: "homard"}, &world); err != nil {
		return err
	}
	var rn resolveNodeResult
	if err := s.Call(ctx, cmdDOMResolveNode, &resolveNodeParams{BackendNodeID: id, ObjectGroup: "homard", ExecutionContextID: world.ExecutionContextID}, &rn); err != nil {
		return err
	}
	defer s.c.notify(s.id, cmdRuntimeReleaseObjectGroup, &releaseObjectGroupParams{ObjectGroup: "homard"})
	if rn.Object == nil || rn.Object.ObjectID == "" {
		return &protocolError{Message: "the element cannot be reached"}
	}
	var cargs []callArgument
	for _, a := range args {
		v, err := json.Marshal(a)
		if err != nil {
			return err
		}
		cargs = append(cargs, callArgument{Value: v})
	}
	var res callFunctionOnResult
	if err := s.Call(ctx, cmdRuntimeCallFunctionOn, &callFunctionOnParams{
		FunctionDeclaration: fn, ObjectID: rn.Object.ObjectID, Arguments: cargs, ReturnByValue: true,
	}, &res); err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("the page threw: %s", res.ExceptionDetails.Text)
	}
	if res.Result == nil || len(res.Result.Value) == 0 {
		return errors.New("no result")
	}
	return json.Unmarshal(res.Result.Value, out)
}

// selectOption picks the option of a <select> whose value or visible
// text is v, and fires input and change as a person's choice would. It
// returns "" or why it could not.
const selectOption = `function(v) {
	if (!(this instanceof HTMLSelectElement)) return "the element is not a select (a drop-down list)";
	const opts = Array.from(this.options);
	const o = opts.find(o => o.value === v) || opts.find(o => o.text.trim() === v.trim());
	if (!o) return "no option has the value or text " + JSON.stringify(v) + "; the options are " + opts.slice(0, 30).map(o => JSON.stringify(o.text.trim())).join(", ");
	if (o.disabled) return "that option is disabled";
	this.focus();
	this.value = o.value;
	this.dispatchEvent(new Event("input", {bubbles: true}));
	this.dispatchEvent(new Event("change", {bubbles: true}));
	return "";
}`

// Select chooses the option of the <select> ref points at whose value or
// visible text is value.
func (b *Browser) Select(ctx context.Context, ref, value string) error {
	return b.withNode(ctx, ref, func(in *instance, t *tab, id backendNodeID) error {
		var why string
		err := in.settle(ctx, t, func() error { return callOn(ctx, t.s, t.id, id, selectOption, &why, value) })
		if err != nil {
			return staleRef(ref, err)
		}
		if why != "" {
			return fmt.Errorf("%w: select %s: %s", ErrArgument, ref, why)
		}
		return nil
	})
}

// Scroll scrolls the active tab: "up" and "down" by most of a screen,
// "top" and "bottom" to the ends. It turns the mouse wheel, as a person
// would.
func (b *Browser) Scroll(ctx context.Context, direction string) error {
	var dy float64
	switch direction {
	case "up":
		dy = -0.8 * float64(b.o.Height)
	case "down":
		dy = 0.8 * float64(b.o.Height)
	case "top":
		dy = -1e7
	case "bottom":
		dy = 1e7
	default:
		return fmt.Errorf("%w: scroll direction %q; use up, down, top or bottom", ErrArgument, direction)
	}
	return b.withActive(ctx, func(in *instance, t *tab) error {
		return t.s.Call(ctx, cmdInputDispatchMouseEvent, &wheelEvent{
			Type: "mouseWheel", X: float64(b.o.Width) / 2, Y: float64(b.o.Height) / 2, DeltaY: dy,
		}, nil)
	})
}

// Back goes one page back in the active tab's history.
func (b *Browser) Back(ctx context.Context) (PageInfo, error) {
	var pi PageInfo
	err := b.withActive(ctx, func(in *instance, t *tab) error {
		var h getNavigationHistoryResult
		if err := t.s.Call(ctx, cmdPageGetNavigationHistory, nil, &h); err != nil {
			return fmt.Errorf("browser: history: %w", err)
		}
		if h.CurrentIndex <= 0 || int(h.CurrentIndex) >= len(h.Entries) {
			return fmt.Errorf("%w: there is no earlier page in this tab", ErrArgument)
		}
		entry := h.Entries[h.CurrentIndex-1].ID
		err := in.settle(ctx, t, func() error {
			return t.s.Call(ctx, cmdPageNavigateToHistoryEntry, &navigateToHistoryEntryParams{EntryID: entry}, nil)
		})
		if err != nil {
			return err
		}
		pi = in.pageInfo(ctx, t)
		return nil
	})
	return pi, err
}

// Tabs lists the open tabs in the order they were opened. It does not
// start Chromium: with none running there are no tabs.
func (b *Browser) Tabs(ctx context.Context) ([]Tab, error) {
	b.mu.Lock()
	in := b.in
	b.mu.Unlock()
	if in == nil || !in.alive() {
		return nil, nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []Tab
	for _, id := range in.order {
		if t := in.tabs[id]; t != nil {
			out = append(out, Tab{PageInfo: t.info(), Active: id == in.active})
		}
	}
	return out, nil
}

// CloseTab closes the tab tabID ("" means the active one).
func (b *Browser) CloseTab(ctx context.Context, tabID string) error {
	return b.with(ctx, func(in *instance) error {
		id := targetID(tabID)
		in.mu.Lock()
		if id == "" {
			id = in.active
		}
		_, ok := in.tabs[id]
		in.mu.Unlock()
		if !ok {
			return fmt.Errorf("%w: %q", ErrNoTab, tabID)
		}
		if err := in.root.Call(ctx, cmdTargetCloseTarget, &targetParams{TargetID: id}, nil); err != nil {
			return fmt.Errorf("browser: close tab: %w", err)
		}
		in.removeTab(func(t *tab) bool { return t.id == id })
		return nil
	})
}

// submits tells whether activating the element navigates or sends a
// form, as far as the DOM shows.
const submits = `function() {
	const e = this;
	const tag = e.tagName;
	if ((tag === "A" || tag === "AREA") && e.hasAttribute("href")) return true;
	if (tag === "BUTTON") return !!e.form && e.type === "submit";
	if (tag === "INPUT") return !!e.form && (e.type === "submit" || e.type === "image");
	return false;
}`

// Element says what ref points at now: its role, name, and whether
// activating it submits or navigates.
func (b *Browser) Element(ctx context.Context, ref string) (Element, error) {
	var el Element
	err := b.withNode(ctx, ref, func(in *instance, t *tab, id backendNodeID) error {
		var res axTreeResult
		if err := t.s.Call(ctx, cmdAccessibilityGetPartialAXTree, &getPartialAXTreeParams{BackendNodeID: id, FetchRelatives: false}, &res); err != nil {
			return staleRef(ref, err)
		}
		el = Element{Ref: ref}
		found := false
		for _, n := range res.Nodes {
			if n.BackendDOMNodeID == id {
				el.Role, el.Name = valueString(n.Role), clean(valueString(n.Name), maxName)
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("%w: %q no longer points at an element; take a new snapshot", ErrRef, ref)
		}
		if err := callOn(ctx, t.s, t.id, id, submits, &el.Submits); err != nil {
			return staleRef(ref, err)
		}
		el.PageURL = in.pageInfo(ctx, t).URL
		return nil
	})
	return el, err
}
