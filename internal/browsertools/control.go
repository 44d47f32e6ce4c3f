package browsertools

import (
	"context"

	"github.com/homard/homard/internal/channel"
)

// Control is the owner's side of the browser for the web UI
// (channel.BrowserControl): watch it, take it over — the tools refuse the
// model meanwhile —, drive it, hand it back.
type Control struct {
	Engine interface {
		Engine
		Screencast(ctx context.Context, each func(jpeg []byte)) (func(), error)
		Mouse(ctx context.Context, kind string, x, y float64) error
		Key(ctx context.Context, key, text string) error
	}
	Takeover *Takeover
}

var _ channel.BrowserControl = Control{}

// State says whether Chromium runs, who has it, and its active tab.
func (c Control) State(ctx context.Context) (channel.BrowserState, error) {
	st := channel.BrowserState{Running: c.Engine.Running(), Owner: c.Takeover.Has()}
	if !st.Running {
		return st, nil // Tabs never starts Chromium, but there is nothing to read
	}
	tabs, err := c.Engine.Tabs(ctx)
	for _, t := range tabs {
		if t.Active {
			st.URL, st.Title = t.URL, t.Title
		}
	}
	return st, err
}

// Take gives the browser to the owner.
func (c Control) Take(context.Context) error { c.Takeover.Take(); return nil }

// Give hands it back, remembering the host of the page it shows as one
// the owner may have signed in to.
func (c Control) Give(ctx context.Context) error {
	st, err := c.State(ctx)
	c.Takeover.Give(st.URL)
	return err
}

// taken refuses the owner's input while the model has the browser.
func (c Control) taken() error {
	if !c.Takeover.Has() {
		return channel.ErrNotTaken
	}
	return nil
}

// Open loads url in the active tab for the owner; the same egress rules
// hold as for the model.
func (c Control) Open(ctx context.Context, url string) error {
	if err := c.taken(); err != nil {
		return err
	}
	_, err := c.Engine.Navigate(ctx, url)
	return err
}

// Screencast streams the active tab's frames.
func (c Control) Screencast(ctx context.Context, each func([]byte)) (func(), error) {
	return c.Engine.Screencast(ctx, each)
}

// Mouse is the owner's click, while they have the browser.
func (c Control) Mouse(ctx context.Context, kind string, x, y float64) error {
	if err := c.taken(); err != nil {
		return err
	}
	return c.Engine.Mouse(ctx, kind, x, y)
}

// Key is the owner's typing, while they have the browser.
func (c Control) Key(ctx context.Context, key, text string) error {
	if err := c.taken(); err != nil {
		return err
	}
	return c.Engine.Key(ctx, key, text)
}
