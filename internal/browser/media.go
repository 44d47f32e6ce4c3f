package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// key is one key of the closed list Press accepts.
type key struct {
	key, code string
	vk        int64
	text      string // what it types, if anything
}

var keys = map[string]key{
	"Enter":      {"Enter", "Enter", 13, "\r"},
	"Tab":        {"Tab", "Tab", 9, ""},
	"Escape":     {"Escape", "Escape", 27, ""},
	"Backspace":  {"Backspace", "Backspace", 8, ""},
	"Delete":     {"Delete", "Delete", 46, ""},
	"Space":      {" ", "Space", 32, " "},
	"ArrowDown":  {"ArrowDown", "ArrowDown", 40, ""},
	"ArrowUp":    {"ArrowUp", "ArrowUp", 38, ""},
	"ArrowLeft":  {"ArrowLeft", "ArrowLeft", 37, ""},
	"ArrowRight": {"ArrowRight", "ArrowRight", 39, ""},
	"PageDown":   {"PageDown", "PageDown", 34, ""},
	"PageUp":     {"PageUp", "PageUp", 33, ""},
	"Home":       {"Home", "Home", 36, ""},
	"End":        {"End", "End", 35, ""},
}

// Keys lists the key names Press accepts, sorted.
func Keys() []string {
	var out []string
	for k := range keys {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// pressKey sends a key down and up.
func pressKey(ctx context.Context, s session, k key) error {
	down := keyEvent{
		Type: "rawKeyDown", Key: k.key, Code: k.code,
		WindowsVirtualKeyCode: k.vk, NativeVirtualKeyCode: k.vk,
	}
	if k.text != "" {
		down.Type, down.Text, down.UnmodifiedText = "keyDown", k.text, k.text
	}
	up := keyEvent{
		Type: "keyUp", Key: k.key, Code: k.code,
		WindowsVirtualKeyCode: k.vk, NativeVirtualKeyCode: k.vk,
	}
	for _, e := range []*keyEvent{&down, &up} {
		if err := s.Call(ctx, cmdInputDispatchKeyEvent, e, nil); err != nil {
			return fmt.Errorf("browser: key %s: %w", k.key, err)
		}
	}
	return nil
}

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// Screenshot returns a PNG of the active tab's viewport.
func (b *Browser) Screenshot(ctx context.Context) ([]byte, error) {
	var png []byte
	err := b.withActive(ctx, func(in *instance, t *tab) error {
		var res captureScreenshotResult
		if err := t.s.Call(ctx, cmdPageCaptureScreenshot, &captureScreenshotParams{Format: "png"}, &res); err != nil {
			return fmt.Errorf("browser: screenshot: %w", err)
		}
		if !bytes.HasPrefix(res.Data, pngMagic) {
			return errors.New("browser: screenshot: chromium sent no PNG")
		}
		png = res.Data
		return nil
	})
	return png, err
}

// Screencast streams the active tab as JPEG frames to each, acknowledging
// every frame once each returns (so Chromium sends the next one). It runs
// until stop is called, ctx ends or Chromium exits; while it runs the
// browser is not idle. each runs on a goroutine of the screencast, one
// frame at a time, and must not call stop.
func (b *Browser) Screencast(ctx context.Context, each func(jpeg []byte)) (func(), error) {
	b.op.Lock()
	defer b.op.Unlock()
	in, release, err := b.acquire(ctx)
	if err != nil {
		return nil, err
	}
	t, err := in.activeTab()
	if err != nil {
		release()
		return nil, err
	}
	frames, unsubscribe := t.s.Subscribe(evPageScreencastFrame)
	if err := t.s.Call(ctx, cmdPageStartScreencast, &startScreencastParams{
		Format: "jpeg", Quality: 70, MaxWidth: int64(b.o.Width), MaxHeight: int64(b.o.Height), EveryNthFrame: 1,
	}, nil); err != nil {
		unsubscribe()
		release()
		return nil, fmt.Errorf("browser: screencast: %w", err)
	}
	done := make(chan struct{})
	go func() { // ends when the subscription closes (stop, or Chromium gone)
		defer close(done)
		defer release()
		for raw := range frames {
			var f screencastFrame
			if err := json.Unmarshal(raw, &f); err != nil {
				continue
			}
			each(f.Data)
			t.s.c.notify(t.s.id, cmdPageScreencastFrameAck, &screencastFrameAckParams{SessionID: f.SessionID})
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			t.s.c.notify(t.s.id, cmdPageStopScreencast, nil)
			unsubscribe()
			<-done
		})
	}
	context.AfterFunc(ctx, func() { go stop() })
	return stop, nil
}

// Mouse sends one mouse event to the active tab at x, y (CSS pixels of
// the viewport), for the owner's takeover: "press" and "release" of the
// left button, or "move".
func (b *Browser) Mouse(ctx context.Context, kind string, x, y float64) error {
	e := mouseEvent{X: x, Y: y}
	switch kind {
	case "press":
		e.Type, e.Button, e.Buttons, e.ClickCount = "mousePressed", "left", 1, 1
	case "release":
		e.Type, e.Button, e.ClickCount = "mouseReleased", "left", 1
	case "move":
		e.Type = "mouseMoved"
	default:
		return fmt.Errorf("%w: mouse action %q; use press, release or move", ErrArgument, kind)
	}
	return b.withActive(ctx, func(in *instance, t *tab) error {
		if kind == "move" && b.mouseDown {
			e.Buttons = 1
		}
		if err := t.s.Call(ctx, cmdInputDispatchMouseEvent, &e, nil); err != nil {
			return fmt.Errorf("browser: mouse: %w", err)
		}
		b.mouseDown = kind == "press" || (kind == "move" && b.mouseDown)
		return nil
	})
}

// Key types one key in the active tab for the owner's takeover: a named
// key of Keys, or any other key with the text it types.
func (b *Browser) Key(ctx context.Context, name string, text string) error {
	k, ok := keys[name]
	if !ok {
		if text == "" {
			return fmt.Errorf("%w: key %q types nothing; use one of %v or give its text", ErrArgument, name, Keys())
		}
		k = key{key: name, text: text}
		if k.key == "" {
			k.key = text
		}
	}
	return b.withActive(ctx, func(in *instance, t *tab) error {
		return pressKey(ctx, t.s, k)
	})
}
