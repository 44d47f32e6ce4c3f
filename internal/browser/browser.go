package browser

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/homard/homard/internal/egress"
)

// Options configure a Browser.
type Options struct {
	// ChromePath is the Chromium binary. Empty means the first of
	// chromium, chromium-browser, google-chrome and google-chrome-stable
	// on PATH.
	ChromePath string
	// ProfileDir is the browser's own profile, created 0700 (never the
	// owner's personal profile). Required.
	ProfileDir string
	// DownloadDir is where downloads land (0700); the caller moves them to
	// its artifact store. Required.
	DownloadDir string
	// IdleTimeout closes Chromium after this long without a call. Zero
	// means 10 minutes.
	IdleTimeout time.Duration
	// Egress checks every request a page makes (required): its rules
	// decide both the proxy's connections and the interception.
	Egress *egress.Client
	// Width and Height are the viewport in CSS pixels. Zero means
	// 1280x800.
	Width, Height int
	// Logf, when set, receives what the browser notices on the way (a
	// permission it could not deny, a target it could not intercept).
	Logf func(format string, args ...any)
	// Hide are folders Chromium must not see when homard confines it
	// itself (homard runs as root; confine.go): homard's data and config
	// folders, the workspace roots. The owner's home is always hidden.
	Hide []string
}

// PageInfo names a tab and what it shows.
type PageInfo struct {
	TabID      string
	URL, Title string
}

// Element is what a ref points at now, for a readable plan.
type Element struct {
	Ref        string
	Role, Name string
	// Submits is true for a button or submit input inside a form, a link
	// with an href, or anything else known to navigate.
	Submits bool
	PageURL string
}

// Snapshot is a page's accessibility tree as indented text.
type Snapshot struct {
	PageInfo
	// Text is the snapshot capped at maxBytes, cut on a line boundary,
	// with a final line saying how much is left out.
	Text string
	// Full is the whole snapshot.
	Full      string
	Truncated bool
}

// Tab is one open tab.
type Tab struct {
	PageInfo
	Active bool
}

// Blocked is a request a page made that was refused.
type Blocked struct {
	URL, Reason string
	At          time.Time
}

// Browser is one isolated Chromium, started on first use and closed when
// idle. Its methods are safe for concurrent use; actions run one at a
// time.
type Browser struct {
	o       Options
	blocked *blockedLog

	op        sync.Mutex // held by each action: one at a time, in order; guards mouseDown
	mouseDown bool       // the takeover's left button is held

	mu       sync.Mutex // guards in, closed, inflight, lastUse, idle, refs
	in       *instance
	closed   bool
	inflight int // calls (and screencasts) running
	lastUse  time.Time
	idle     *time.Timer
	refs     refMap
}

// New validates o and returns a Browser. It does not start Chromium: the
// first call does.
func New(o Options) (*Browser, error) {
	if o.Egress == nil {
		return nil, errors.New("browser: Options.Egress is required: every request a page makes is checked by it")
	}
	if o.ProfileDir == "" || o.DownloadDir == "" {
		return nil, errors.New("browser: Options.ProfileDir and Options.DownloadDir are required")
	}
	var err error
	if o.ProfileDir, err = abs(o.ProfileDir); err != nil {
		return nil, fmt.Errorf("browser: profile folder: %w", err)
	}
	if o.DownloadDir, err = abs(o.DownloadDir); err != nil {
		return nil, fmt.Errorf("browser: download folder: %w", err)
	}
	if o.ProfileDir == o.DownloadDir {
		return nil, errors.New("browser: the profile and download folders must differ")
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 10 * time.Minute
	}
	if o.Width <= 0 || o.Height <= 0 {
		o.Width, o.Height = 1280, 800
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return &Browser{o: o, blocked: &blockedLog{}}, nil
}

// acquire returns the running instance, starting (or restarting) it, and
// holds off the idle timer until release.
func (b *Browser) acquire(ctx context.Context) (*instance, func(), error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, nil, ErrClosed
	}
	if b.idle != nil {
		b.idle.Stop()
	}
	if b.in != nil && !b.in.alive() {
		b.o.Logf("browser: chromium (pid %d) is gone; starting it again%s", b.in.pid, b.in.stderr.quote())
		b.in.stop()
		b.in, b.refs = nil, refMap{}
	}
	if b.in == nil {
		in, err := launch(ctx, &b.o, b.blocked, b.o.Logf)
		if err != nil {
			b.armIdle()
			return nil, nil, err
		}
		b.in = in
	}
	b.inflight++
	var once sync.Once
	return b.in, func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.inflight--
			b.lastUse = time.Now()
			b.armIdle()
		})
	}, nil
}

// armIdle starts the idle timer when nothing runs. b.mu is held.
func (b *Browser) armIdle() {
	if b.inflight > 0 || b.in == nil || b.closed {
		return
	}
	if b.idle != nil {
		b.idle.Stop()
	}
	b.idle = time.AfterFunc(b.o.IdleTimeout, b.idleCheck)
}

// idleCheck closes Chromium when nothing used it for IdleTimeout.
func (b *Browser) idleCheck() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inflight > 0 || b.in == nil || time.Since(b.lastUse) < b.o.IdleTimeout {
		return
	}
	b.o.Logf("browser: idle for %s; closing chromium (pid %d)", b.o.IdleTimeout, b.in.pid)
	b.in.stop()
	b.in, b.refs = nil, refMap{}
}

// Running reports whether Chromium is running.
func (b *Browser) Running() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.in != nil && b.in.alive()
}

// PID is Chromium's process id, 0 when it is not running.
func (b *Browser) PID() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.in == nil || !b.in.alive() {
		return 0
	}
	return b.in.pid
}

// SandboxMode says what confines Chromium: its own sandbox, its own
// sandbox inside homard's bwrap (homard runs as root), or why nothing
// does.
func (b *Browser) SandboxMode() string {
	exe, err := findChrome(b.o.ChromePath)
	if err != nil {
		exe = "chromium"
	}
	mode, _, _ := b.o.confined(exe, nil)
	return mode
}

// Downloads returns the downloads finished since the last call — paths
// in Options.DownloadDir, under the names the pages suggested (made safe)
// — and forgets them: the caller moves them away (to its artifact store).
func (b *Browser) Downloads() []string {
	b.mu.Lock()
	in := b.in
	b.mu.Unlock()
	if in == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	out := in.finished
	in.finished = nil
	return out
}

// Program is the Chromium binary the browser would start (without
// starting it), or ErrNoChromium with where it looked and how to install
// one: for homard doctor.
func (b *Browser) Program() (string, error) { return findChrome(b.o.ChromePath) }

// Close stops Chromium and waits for it. It is idempotent; any later call
// returns ErrClosed.
func (b *Browser) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if b.idle != nil {
		b.idle.Stop()
	}
	if b.in != nil {
		b.in.stop()
		b.in = nil
	}
	return nil
}

// Blocked returns the most recent refusals (at most 100), oldest first.
func (b *Browser) Blocked() []Blocked { return b.blocked.list() }

// maxBlocked is how many refusals Blocked keeps.
const maxBlocked = 100

// blockedLog is the ring of recent refusals, written by the proxy's and
// the interception's goroutines.
type blockedLog struct {
	mu    sync.Mutex // guards items
	items []Blocked
}

func (l *blockedLog) add(url, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, Blocked{URL: url, Reason: reason, At: time.Now()})
	if len(l.items) > maxBlocked {
		l.items = append([]Blocked(nil), l.items[len(l.items)-maxBlocked:]...)
	}
}

func (l *blockedLog) list() []Blocked {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Blocked(nil), l.items...)
}
