package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
)

// tab is one page target homard is attached to.
type tab struct {
	id     targetID
	s      session
	opener targetID
	url    string
	title  string
	// fresh is the blank tab Chromium starts with, not yet used: Open
	// takes it rather than opening a second one.
	fresh bool
}

func (t *tab) info() PageInfo { return PageInfo{TabID: string(t.id), URL: t.url, Title: t.title} }

// onEvent is the first to see every event, on the dispatcher goroutine.
// It never waits for a reply: an attach runs on a goroutine of its own,
// interception answers without waiting.
func (in *instance) onEvent(ev event) {
	decode := func(v any) bool {
		if err := json.Unmarshal(ev.Params, v); err != nil {
			in.logf("browser: decode %s: %v", ev.Method, err)
			return false
		}
		return true
	}
	switch ev.Method {
	case evTargetAttachedToTarget:
		var e attachedToTarget
		if decode(&e) && e.TargetInfo != nil {
			in.wg.Go(func() { in.attach(e) })
		}
	case evFetchRequestPaused:
		var e requestPaused
		if decode(&e) && e.Request != nil {
			in.intercept(ev.SessionID, &e)
		}
	case evTargetDetachedFromTarget:
		var e detachedFromTarget
		if decode(&e) {
			in.removeTab(func(t *tab) bool { return t.s.id == e.SessionID })
		}
	case evTargetTargetDestroyed:
		var e targetDestroyed
		if decode(&e) {
			in.removeTab(func(t *tab) bool { return t.id == e.TargetID })
		}
	case evTargetTargetInfoChanged:
		var e targetInfoChanged
		if decode(&e) && e.TargetInfo != nil {
			in.mu.Lock()
			if t := in.tabs[e.TargetInfo.TargetID]; t != nil {
				t.url, t.title = e.TargetInfo.URL, e.TargetInfo.Title
			}
			in.mu.Unlock()
		}
	case evBrowserDownloadWillBegin:
		var e downloadWillBegin
		if decode(&e) {
			in.mu.Lock()
			in.downloads[e.GUID] = e.SuggestedFilename
			in.mu.Unlock()
		}
	case evBrowserDownloadProgress:
		var e downloadProgress
		if decode(&e) && e.State == "completed" {
			in.downloaded(e.GUID)
		}
	case evPageFileChooserOpened:
		// Intercepted and never answered: the page gets no file.
		in.logf("browser: a page asked for a file; refused")
	}
}

// attach turns on interception for a new target before it runs: it was
// auto-attached paused (waitForDebuggerOnStart), and only resumes once
// Fetch is enabled on it. Its own children (frames in other processes,
// workers) are auto-attached the same way. A page or frame whose
// interception cannot be turned on is never resumed (a tab is closed).
func (in *instance) attach(e attachedToTarget) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	info := e.TargetInfo
	s := session{c: in.conn, id: e.SessionID}
	isPage := info.Type == "page" && info.Subtype == ""
	framed := info.Type == "page" || info.Type == "iframe"
	err := s.Call(ctx, cmdFetchEnable, &fetchEnableParams{
		Patterns: []requestPattern{{URLPattern: "*", RequestStage: "Request"}},
	}, nil)
	if err != nil {
		if framed {
			in.logf("browser: intercept %s target %s: %v; not letting it run", info.Type, info.URL, err)
			if info.Type == "page" {
				in.root.c.notify("", cmdTargetCloseTarget, &targetParams{TargetID: info.TargetID})
			}
			return
		}
	}
	if err := s.Call(ctx, cmdTargetSetAutoAttach, &setAutoAttachParams{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true}, nil); err != nil {
		in.logf("browser: auto-attach below %s target: %v", info.Type, err)
	}
	if isPage {
		// Sent, not awaited: a paused page may answer them only once it
		// runs, and they are done in order before it does.
		in.conn.notify(s.id, cmdPageEnable, nil)
		in.conn.notify(s.id, cmdPageSetInterceptFileChooser, &setInterceptFileChooserParams{Enabled: true})
		in.conn.notify(s.id, cmdEmulationSetDeviceMetrics, &setDeviceMetricsParams{
			Width: int64(in.o.Width), Height: int64(in.o.Height), DeviceScaleFactor: 1,
		})
		in.mu.Lock()
		in.tabs[info.TargetID] = &tab{
			id: info.TargetID, s: s, opener: info.OpenerID, url: info.URL, title: info.Title,
			fresh: info.OpenerID == "" && (info.URL == "about:blank" || info.URL == ""),
		}
		in.order = append(in.order, info.TargetID)
		if in.active == "" {
			in.active = info.TargetID
		}
		in.signal()
		in.mu.Unlock()
	}
	if err := s.Call(ctx, cmdRuntimeRunIfWaitingForDebugger, nil, nil); err != nil && e.WaitingForDebugger {
		in.logf("browser: resume %s target: %v", info.Type, err)
	}
}

// intercept answers one paused request: on if the egress rules admit its
// URL, failed (and recorded) if not.
func (in *instance) intercept(sid sessionID, e *requestPaused) {
	raw := e.Request.URL
	if why := in.refuse(raw); why != "" {
		in.conn.notify(sid, cmdFetchFailRequest, &failRequestParams{RequestID: e.RequestID, ErrorReason: "BlockedByClient"})
		in.blocked.add(shorten(raw, 300), why)
		return
	}
	in.conn.notify(sid, cmdFetchContinueRequest, &continueRequestParams{RequestID: e.RequestID})
}

// refuse returns why a page may not request raw, or "" when it may:
// http(s) and ws(s) URLs the egress rules admit, and data: and blob:
// URLs, which never reach the network.
func (in *instance) refuse(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "not a valid URL"
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "data", "blob":
		return ""
	case "ws", "wss":
		v := *u
		v.Scheme = "http" + scheme[2:]
		raw = v.String()
	case "http", "https":
	default:
		return fmt.Sprintf("the %s: scheme is not allowed (only http, https, ws, wss)", scheme)
	}
	if err := in.client.Check(raw); err != nil {
		return err.Error()
	}
	return ""
}

// signal wakes whoever waits for a change of tabs. in.mu is held.
func (in *instance) signal() {
	close(in.changed)
	in.changed = make(chan struct{})
}

// removeTab forgets the tabs match selects; the active tab moves to the
// last one opened.
func (in *instance) removeTab(match func(*tab) bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for id, t := range in.tabs {
		if !match(t) {
			continue
		}
		delete(in.tabs, id)
		in.order = slices.DeleteFunc(in.order, func(o targetID) bool { return o == id })
		if in.active == id {
			in.active = ""
			if n := len(in.order); n > 0 {
				in.active = in.order[n-1]
			}
		}
		in.signal()
	}
}

// waitTab waits until the tab id is attached and set up.
func (in *instance) waitTab(ctx context.Context, id targetID) (*tab, error) {
	for {
		in.mu.Lock()
		t, ch := in.tabs[id], in.changed
		in.mu.Unlock()
		if t != nil {
			return t, nil
		}
		select {
		case <-ch:
		case <-in.exited:
			return nil, errConnClosed
		case <-ctx.Done():
			return nil, fmt.Errorf("browser: wait for the new tab: %w", ctx.Err())
		}
	}
}

// activeTab returns the active tab.
func (in *instance) activeTab() (*tab, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if t := in.tabs[in.active]; t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("%w: no tab is open; open a page first", ErrNoTab)
}

// downloaded gives a finished download (saved under its guid) its
// suggested name, made safe and unique, in the download folder.
func (in *instance) downloaded(guid string) {
	in.mu.Lock()
	name, ok := in.downloads[guid]
	delete(in.downloads, guid)
	in.mu.Unlock()
	if !ok || strings.ContainsAny(guid, `/\`) || guid == "" {
		return
	}
	src := filepath.Join(in.o.DownloadDir, guid)
	base := safeName(name)
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	for i := 0; i < 100; i++ {
		dst := filepath.Join(in.o.DownloadDir, base)
		if i > 0 {
			dst = filepath.Join(in.o.DownloadDir, fmt.Sprintf("%s (%d)%s", stem, i, ext))
		}
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if err := os.Rename(src, dst); err != nil {
			in.logf("browser: name the download %s: %v", base, err)
			return
		}
		in.mu.Lock()
		in.finished = append(in.finished, dst)
		in.mu.Unlock()
		return
	}
}

// safeName makes a page's suggested file name a plain file name.
func safeName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || unicode.IsControl(r) {
			return '_'
		}
		return r
	}, name)
	name = strings.TrimLeft(strings.TrimSpace(name), ".")
	if len(name) > 120 {
		name = shorten(name, 120)
	}
	if name == "" {
		return "download"
	}
	return name
}

// shorten cuts s to at most n bytes on a rune boundary.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
