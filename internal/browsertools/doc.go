// Package browsertools is the model's side of the isolated browser
// (issue 24): a closed set of ordinary tools — browser_open,
// browser_navigate, browser_snapshot, browser_click, browser_type,
// browser_press, browser_select, browser_scroll, browser_back,
// browser_tabs, browser_close, browser_screenshot and
// browser_fill_secret — each proposed to the arbiter with a Plan a person
// can read, over an Engine (internal/browser's Chromium, or a fake in
// tests).
//
// What each call is, for policy:
//   - open, navigate and back fetch from the network (policy.ActionFetch,
//     medium): their URL passes the egress rules when planned, the
//     engine enforces them again on every request the page makes, and a
//     URL carrying private text is caught by the taint check like any
//     fetch;
//   - click, type, select, and the keys that act (Enter, Space,
//     Escape, Backspace, Delete) send (policy.ActionSend, medium): a
//     click may submit a form or run the page's code, typing puts text
//     into a page that may send it anywhere — so they ask in smart mode,
//     and what is typed is an outbound value for the taint check;
//   - snapshot, tabs, screenshot, scroll, close and the keys that only
//     move (Tab, arrows, PageUp/PageDown, Home/End) read (low,
//     read-only);
//   - fill_secret types a vault secret the model never sees: it is
//     refused unless the page's host is bound to that secret, it is high
//     risk (it asks in smart mode and in autopilot), and the plan, the
//     result and the audit carry the secret's name only.
//
// A click or a keystroke is planned against the element as the page shows
// it now (role, accessible name, page URL), and run only if the element
// still is that one: a page that changes under an approval does not get
// the click. Every page the model reads is untrusted (Result.Untrusted:
// the agent wraps it in nonce markers) and public for taint
// (Spec.PublicResult). A snapshot is capped (Options.SnapshotBytes,
// default 4 KB); the whole snapshot is kept as an artifact
// (tool.Result.Whole). A screenshot is a PNG artifact the owner sees
// (tool.Result.File); the model cannot read it.
//
// While the owner has taken the browser over (the web UI), every tool is
// refused with policy.RuleLimitBrowserOwner.
package browsertools
