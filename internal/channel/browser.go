package channel

import (
	"context"
	"errors"
	"time"
)

// Artifact is one of the owner's artifacts as a front end shows it: the
// whole of a tool result the model saw only in part, or a file the model
// cannot read (a screenshot). Everything in it is untrusted content.
type Artifact struct {
	ID, Tool string
	// MIME is "" for text (Text holds it), else the type of Data
	// ("image/png" for a screenshot).
	MIME string
	// Name is a file name to offer ("screenshot.png"); may be "".
	Name string
	Text string
	Data []byte
	// Untrusted says the content came from outside (a web page, a fetch).
	Untrusted bool
	CreatedAt time.Time
}

// ArtifactReader reads the configured owner's artifacts.
type ArtifactReader interface {
	// Artifact returns one artifact; ErrNotFound for an unknown id or
	// another owner's.
	Artifact(ctx context.Context, id string) (Artifact, error)
}

// BrowserState is the isolated browser as the owner sees it.
type BrowserState struct {
	Running bool // Chromium is up
	// Owner says the owner has taken it over: the model's browser tools
	// are refused until the owner gives it back.
	Owner bool
	// URL and Title are the active tab's (untrusted text).
	URL, Title string
}

// BrowserControl lets the owner watch the isolated browser and take it
// over (to log in to a site), then hand it back. The refusal of the
// model's browser tools while it is taken is the browser tools' own rule;
// a front end only relays the owner's requests.
type BrowserControl interface {
	// State says whether the browser runs, who has it and its active tab.
	State(ctx context.Context) (BrowserState, error)
	// Take gives the browser to the owner: the model's browser tools are
	// refused until Give.
	Take(ctx context.Context) error
	// Give hands the browser back to the model.
	Give(ctx context.Context) error
	// Open loads url in the active tab, only while taken (ErrNotTaken
	// otherwise); the same egress rules as the model's apply.
	Open(ctx context.Context, url string) error
	// Screencast calls each with JPEG frames of the active tab until stop
	// is called or ctx ends. each must return quickly (it runs on the
	// browser's goroutine); the slice is each's to keep.
	Screencast(ctx context.Context, each func(jpeg []byte)) (stop func(), err error)
	// Mouse sends a mouse event: kind is MousePress, MouseRelease or
	// MouseMove; x, y are CSS pixels of the page's viewport. Only while
	// taken (ErrNotTaken otherwise).
	Mouse(ctx context.Context, kind string, x, y float64) error
	// Key sends a key (key: "Enter", "Backspace", "Tab", "Escape", an
	// arrow…) or types text (key ""). Only while taken (ErrNotTaken
	// otherwise).
	Key(ctx context.Context, key, text string) error
}

// Kinds of BrowserControl.Mouse.
const (
	MousePress   = "press"
	MouseRelease = "release"
	MouseMove    = "move"
)

// Errors a BrowserControl returns; check them with errors.Is.
var (
	// ErrNotTaken: input or a page load while the model has the browser.
	ErrNotTaken = errors.New("take the browser over first")
	// ErrBrowserOff: homard runs no isolated browser.
	ErrBrowserOff = errors.New("the browser is off: set [browser] enabled = true in config.toml")
)
