// Package browser is homard's isolated browser (issue 24): one headless
// Chromium the model can use — open, read, click, type — but not abuse,
// and a page cannot use to reach what the owner has not allowed.
//
// # The threat
//
// Two parties are hostile here. A page may try to reach the owner's
// network through the browser (the cloud metadata service, a router, a
// home-lab service on loopback), open popups and frames that escape
// checks, download files, or hide instructions for the model in text a
// person never sees. The model, steered by such a page, may try to open
// what egress refuses or run script of its choosing. So no method runs
// JavaScript a caller gives (the few fixed functions of this package read
// a select's options or whether a button submits), Open and Navigate take
// http and https URLs only, and every request, whoever makes it, meets
// two layers of egress.
//
// # Egress: two layers
//
//  1. The proxy, the hard barrier. Chromium is started with
//     --proxy-server pointing at an egress.Client.NewOpenProxy on a
//     loopback port of its own and --proxy-bypass-list=<-loopback>, so
//     every connection (loopback included) is one the proxy dials through
//     the egress client's dialer: scheme, port and Allow rules, and the
//     address check at connect time (DNS rebinding safe). QUIC, DNS
//     prefetch and WebRTC's non-proxied UDP are turned off, so nothing
//     goes around it.
//  2. Interception, for readable reasons and schemes. Every tab, popup
//     and frame in another process is auto-attached paused
//     (waitForDebuggerOnStart) and resumes only once Fetch is enabled on
//     it (one whose interception cannot be turned on is never resumed);
//     each request — a dedicated worker's included, which its page sees
//     — is checked with egress.Client.Check and failed (BlockedByClient)
//     unless it is http, https, ws or wss the rules admit (data: and
//     blob: never reach the network). Chromium has no Fetch domain on
//     worker targets: a service or shared worker's requests, and
//     WebSockets, which Fetch does not see, meet the proxy alone.
//
// Refusals of either layer are kept (Blocked, the last 100).
//
// # What else is denied
//
// Every permission a page could ask for (location, notifications,
// camera, microphone, clipboard, MIDI, sensors …) is set to denied and
// prompts are denied; a file chooser is intercepted and never answered;
// downloads land only in Options.DownloadDir (0700), named after what the
// page suggested, made safe; extensions, sync, component updates and
// background networking are off; the profile is the browser's own
// (Options.ProfileDir, 0700), never the owner's.
//
// # Snapshots
//
// Snapshot renders the accessibility tree as indented text with short
// refs for interactive elements. Text a person cannot see does not reach
// the model as page text: nodes the tree ignores (display:none,
// visibility:hidden, aria-hidden) and nodes a DOM snapshot shows to be
// invisible (opacity 0, clipped to a pixel — the "visually hidden"
// pattern —, placed off the page, text with no size) are left out.
//
// # Transport and lifetime
//
// The DevTools connection is hand-rolled (conn.go) rather than
// chromedp's: importing chromedp (and the cdproto root package, which
// imports every protocol domain) adds 1.5 MB and takes homard's binary
// over its 25 MB ceiling; and chromedp's allocator talks over a TCP
// debugging port any local process could connect to and drive the
// browser with. Here Chromium is started with --remote-debugging-pipe:
// it reads NUL-terminated JSON commands on fd 3 and writes replies and
// events on fd 4, reachable by homard alone. Sessions are flattened (one
// connection, a sessionId per target). The messages are plain
// encoding/json structs (protocol.go) with only the fields homard sends
// or reads: cdproto's domain types, used before, brought the JSON v2
// library with them and cost 0.7 MB. No production package may import
// either (internal/archtest); the tests keep cdproto as the oracle of
// what each command sends.
//
// One Chromium runs per Browser, in a process group of its own, started
// on first use, restarted if it died, and closed (the whole group) after
// Options.IdleTimeout without a call or by Close. As root Chromium's own
// sandbox refuses to run, so homard starts it inside a bwrap of its own
// (confine.go): an ordinary user in its own user namespace, where its own
// sandbox starts after all, without capabilities, with homard's data,
// the owner's home and the workspace roots (Options.Hide) covered by
// empty tmpfs and only its profile and downloads writable. Without
// bubblewrap it runs with --no-sandbox. SandboxMode says which.
package browser
