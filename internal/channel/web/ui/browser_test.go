package ui_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The tests drive a real headless Chromium through chromedp. Chromium comes
// from the system (Debian's chromium package; .ci/run installs it); set
// HOMARD_CHROMIUM to use another binary. Without one the tests skip, and
// under CI (CI set) they fail, so a green CI run always means they ran.

func chromiumPath() string {
	if p := os.Getenv("HOMARD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// artifactDir is where screenshots go: $HOMARD_TEST_ARTIFACTS when set,
// else testdata/artifacts next to this file (ignored by git).
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("HOMARD_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("create artifact folder: %v", err)
	}
	return dir
}

// page is one browser tab on one fake server.
type page struct {
	t   *testing.T
	ctx context.Context
	f   *fakeServer

	mu         sync.Mutex // guards exceptions
	exceptions []string
}

// newPage starts Chromium with a window of w×h CSS pixels; mobile also
// emulates a phone (touch, the viewport meta tag honoured).
func newPage(t *testing.T, f *fakeServer, w, h int64, mobile bool) *page {
	t.Helper()
	exe := chromiumPath()
	if exe == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is not installed; under CI the browser tests must run (apt-get install chromium fonts-wqy-microhei)")
		}
		t.Skip("Chromium is not installed (apt-get install chromium fonts-wqy-microhei); skipping the browser tests")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", "new"),
		chromedp.DisableGPU,
		chromedp.Flag("lang", "en-US"),
		chromedp.WindowSize(int(w), int(h)),
		chromedp.UserDataDir(t.TempDir()),
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to start its sandbox as root (CI runs as root).
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	p := &page{t: t, ctx: ctx, f: f}
	// The first action starts the browser; it must not run under a timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium %s: %v", exe, err)
	}
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			msg := "exception"
			if d := ev.ExceptionDetails; d != nil {
				msg = d.Text
				if d.Exception != nil && d.Exception.Description != "" {
					msg += ": " + d.Exception.Description
				}
			}
			p.mu.Lock()
			p.exceptions = append(p.exceptions, msg)
			p.mu.Unlock()
		}
	}()
	view := chromedp.EmulateViewport(w, h)
	if mobile {
		view = chromedp.EmulateViewport(w, h, chromedp.EmulateMobile, chromedp.EmulateScale(2))
	}
	p.do(view)
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, e := range p.exceptions {
			t.Errorf("JavaScript exception in the page: %s", e)
		}
	})
	return p
}

// do runs actions with a time limit, failing the test on error. A single
// action whose node the page replaced between finding and using it (a
// list drawn again as an event arrives: "Could not find node with given
// id") is run again, finding the node anew: it never reached the page, as
// a person's click at that place would have reached the new node.
func (p *page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	for try := 1; ; try++ {
		err := chromedp.Do(ctx, actions...)
		if err == nil {
			return
		}
		if len(actions) != 1 || try == 3 || !strings.Contains(err.Error(), "Could not find node with given id") {
			p.t.Fatalf("browser: %v", err)
		}
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](p *page, js string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitFor waits until the JavaScript expression is truthy; what names it
// in the failure.
func (p *page) waitFor(what, js string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](js,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(15*time.Second)))
	if err != nil {
		text, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		p.t.Fatalf("waiting for %s (%s): %v\npage text:\n%s", what, js, err, text)
	}
}

// login opens the one-time login URL and waits for the app to start.
func (p *page) login() {
	p.t.Helper()
	p.do(chromedp.Navigate(p.f.loginURL()))
	p.waitFor("the app to start", `document.body.dataset.ready === "1"`)
}

// screenshot saves a PNG of the element matching sel ("" for the whole page).
func (p *page) screenshot(sel, name string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	var png []byte
	var err error
	if sel == "" {
		png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	} else {
		png, err = chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel), chromedp.NodeVisible))
	}
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(artifactDir(p.t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatalf("save screenshot: %v", err)
	}
	p.t.Logf("screenshot: %s", path)
}

// transcriptText is what the transcript shows, as text.
func (p *page) transcriptText() string {
	p.t.Helper()
	return eval[string](p, `document.getElementById("transcript").textContent`)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "<", `\u003c`, "\u2028", `\u2028`, "\u2029", `\u2029`)
	return `"` + r.Replace(s) + `"`
}

// recv waits for one value from c, failing the test after a while.
func recv[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(15 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// pressEnter presses Enter the way a keyboard does: one keyDown that
// carries the text, so a page that cancels the keydown gets no new line.
// (chromedp.KeyEvent sends the text as a separate char event, which a
// cancelled keydown does not stop.)
func pressEnter(modifiers int64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		key := input.DispatchKeyEventParams{
			Type: input.DispatchKeyEventTypeKeyDown, Modifiers: modifiers, Key: "Enter", Code: "Enter",
			Text: "\r", UnmodifiedText: "\r", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13,
		}
		if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, key); err != nil {
			return err
		}
		key.Type, key.Text, key.UnmodifiedText = input.DispatchKeyEventTypeKeyUp, "", ""
		_, err := cdp.Call(ctx, t, input.DispatchKeyEvent, key)
		return err
	})
}
