package ui_test

import (
	"context"
	"image/color"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/homard/homard/internal/channel"
)

// TestBrowserView: the owner sees the browser's frame, takes it over,
// clicks (at the page's coordinates, scaled from the picture shown) and
// types into it, then hands it back.
func TestBrowserView(t *testing.T) {
	f := newFakeServer(t, true, nil)
	b := newFakeBrowser(t)
	f.browser = b
	p := newPage(t, f, 1000, 900, false)
	p.login()
	if eval[bool](p, `document.getElementById("nav-browser").hidden`) {
		t.Fatal("the Browser entry is hidden although the server runs a browser")
	}
	p.do(chromedp.Click(chromedp.CSS(`nav a[data-view="browser"]`)))
	p.waitFor("a frame", `Number(document.getElementById("browser-screen").dataset.frames || 0) > 0`)
	if w, h := eval[int](p, `document.getElementById("browser-screen").width`), eval[int](p, `document.getElementById("browser-screen").height`); w != frameW || h != frameH {
		t.Errorf("the frame is drawn at %d×%d; want the page's %d×%d", w, h, frameW, frameH)
	}
	px := eval[[]int](p, `(() => { const c = document.getElementById("browser-screen"); return [...c.getContext("2d").getImageData(640, 400, 1, 1).data]; })()`)
	if len(px) != 4 || px[0] < 150 || px[1] > 80 || px[2] > 80 {
		t.Errorf("the frame's middle pixel is %v; want the fake's red", px)
	}
	if got := eval[string](p, `document.getElementById("browser-title").textContent`); got != "Log in <b>here</b>" {
		t.Errorf("the title shows %q; want the page's title as text", got)
	}
	if got := eval[string](p, `document.getElementById("browser-url").textContent`); got != "https://example.com/login" {
		t.Errorf("the address shows %q", got)
	}
	if note := eval[string](p, `document.getElementById("view-browser").textContent`); !strings.Contains(note, "While you have the browser, homard's model cannot use it.") {
		t.Errorf("the view does not say the model cannot use a browser the owner has:\n%s", note)
	}
	visible := func() string {
		return eval[string](p, `["browser-take", "browser-give", "browser-open"].filter(id => !document.getElementById(id).hidden).join(" ")`)
	}
	if v := visible(); v != "browser-take" {
		t.Errorf("while the model has the browser, the view shows %q; want only Take over", v)
	}

	// A click before taking over reaches nothing.
	p.do(chromedp.Click(chromedp.CSS(`#browser-screen`)))
	p.do(chromedp.KeyEvent("x"))

	p.do(chromedp.Click(chromedp.CSS(`#browser-take`)))
	p.waitFor("the owner to have the browser", `document.getElementById("view-browser").dataset.owner === "owner"`)
	if !b.owner() {
		t.Fatal("the view says the owner has the browser; the fake was not taken")
	}
	if v := visible(); v != "browser-give browser-open" {
		t.Errorf("while the owner has the browser, the view shows %q; want Hand back and Open", v)
	}
	select {
	case in := <-b.inputs:
		t.Fatalf("input before taking over reached the browser: %s", in)
	default:
	}

	// Click 200×100 CSS pixels into the picture: the picture is shown
	// narrower than the page's 1280 pixels, so the page gets the point
	// scaled by 1280/shown width.
	rect := eval[[]float64](p, `(() => { const r = document.getElementById("browser-screen").getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	if rect[2] >= frameW {
		t.Fatalf("the picture is %.0f px wide; the test needs it shown narrower than %d", rect[2], frameW)
	}
	scale := frameW / rect[2]
	p.do(chromedp.MouseClickXY(rect[0]+200, rect[1]+100))
	for _, kind := range []string{channel.MousePress, channel.MouseRelease} {
		got := strings.Fields(recv(t, b.inputs, "the "+kind))
		if len(got) != 3 || got[0] != kind {
			t.Fatalf("the browser got %q; want %s x y", got, kind)
		}
		x, _ := strconv.ParseFloat(got[1], 64)
		y, _ := strconv.ParseFloat(got[2], 64)
		if math.Abs(x-200*scale) > 1 || math.Abs(y-100*scale) > 1 {
			t.Errorf("%s at (%g, %g); want about (%.1f, %.1f): the click scaled by %.3f", kind, x, y, 200*scale, 100*scale, scale)
		}
	}
	if !eval[bool](p, `document.activeElement === document.getElementById("browser-screen")`) {
		t.Fatal("the picture does not have focus after a click")
	}
	p.do(chromedp.KeyEvent("ab"))
	for _, want := range []string{"text a", "text b"} {
		if got := recv(t, b.inputs, want); got != want {
			t.Errorf("typing ab: the browser got %q; want %q", got, want)
		}
	}
	p.do(chromedp.KeyEvent("\r"))
	if got := recv(t, b.inputs, "Enter"); got != "key Enter" {
		t.Errorf("pressing Enter: the browser got %q; want key Enter", got)
	}
	p.screenshot("#view-browser", "browser-taken.png")

	p.do(chromedp.Click(chromedp.CSS(`#browser-give`)))
	p.waitFor("the model to have the browser", `document.getElementById("view-browser").dataset.owner === "model"`)
	if b.owner() {
		t.Error("the view says the model has the browser; the fake was not given back")
	}
	if v := visible(); v != "browser-take" {
		t.Errorf("after handing back, the view shows %q; want only Take over", v)
	}
}

// TestBrowserViewHiddenWhenOff: without a browser the nav has no Browser
// entry, and #browser shows the chat.
func TestBrowserViewHiddenWhenOff(t *testing.T) {
	f := newFakeServer(t, true, nil)
	p := newPage(t, f, 1000, 700, false)
	p.login()
	if !eval[bool](p, `document.getElementById("nav-browser").hidden`) {
		t.Error("the Browser entry shows although the server has no browser")
	}
	p.do(chromedp.Navigate(f.srv.URL + "/#browser"))
	p.waitFor("the app", `document.body.dataset.ready === "1"`)
	if eval[bool](p, `document.getElementById("view-browser").hidden === false || document.getElementById("view-chat").hidden`) {
		t.Error("#browser without a browser does not fall back to the chat")
	}
}

// TestToolEventArtifact: a screenshot's tool event shows the picture from
// /api/artifacts/ID (loaded under the page's CSP); another call's
// artifact is a link to the whole result in a new tab.
func TestToolEventArtifact(t *testing.T) {
	script := func(ctx context.Context, f *fakeServer, s *stream, msg string) {
		s.send("tool", map[string]any{"id": "c1", "name": "browser_screenshot", "args": "{}", "status": "ran", "plan": "screenshot of https://example.com/",
			"reason": "", "preview": "", "artifact": "art 1/png"})
		s.send("tool", map[string]any{"id": "c2", "name": "fetch", "args": "{}", "status": "ran", "plan": "GET https://example.com/",
			"reason": "", "preview": "<html>", "artifact": "art-2"})
		s.done("Here is the page.")
	}
	f := newFakeServer(t, true, script)
	f.artifacts = map[string]channel.Artifact{"art 1/png": {ID: "art 1/png", MIME: "image/png", Data: pngOf(t, 64, 48, color.RGBA{G: 160, A: 255})}}
	p := newPage(t, f, 1000, 800, false)
	p.login()
	p.sendMessage("show me the page")
	p.waitFor("the end of the turn", `document.querySelector("#transcript .usage")`)
	img := `#transcript .tool[data-tool-id="c1"] img`
	p.waitFor("the screenshot to load", `document.querySelector('`+img+`') && document.querySelector('`+img+`').complete && document.querySelector('`+img+`').naturalWidth > 0`)
	if src := eval[string](p, `document.querySelector('`+img+`').getAttribute("src")`); src != "/api/artifacts/art%201%2Fpng" {
		t.Errorf("the screenshot's src is %q; want /api/artifacts/ with the id URL-encoded", src)
	}
	if alt, w := eval[string](p, `document.querySelector('`+img+`').alt`), eval[int](p, `document.querySelector('`+img+`').naturalWidth`); alt != "screenshot" || w != 64 {
		t.Errorf("the screenshot is alt=%q, %d px wide; want alt=screenshot, 64", alt, w)
	}
	if n := eval[int](p, `document.querySelectorAll('#transcript img').length`); n != 1 {
		t.Errorf("the transcript holds %d images; want only the screenshot", n)
	}
	link := eval[[]string](p, `[...document.querySelectorAll('#transcript .tool[data-tool-id="c2"] a')].map(a => [a.textContent, a.getAttribute("href"), a.target, a.rel].join(" "))`)
	if len(link) != 1 || link[0] != "whole result /api/artifacts/art-2 _blank noopener noreferrer" {
		t.Errorf("the fetch's artifact link is %q; want one \"whole result\" link to /api/artifacts/art-2 in a new tab, rel noopener", link)
	}
	p.screenshot("#transcript", "screenshot-artifact.png")
}
