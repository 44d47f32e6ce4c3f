package wire

import "github.com/homard/homard/internal/channel"

// The owner's view of the isolated browser (docs/API.md "Browser").

// EventFrame names the events of GET /api/browser/frames: the data is a
// JPEG of the active tab in standard base64, not JSON.
const EventFrame = "frame"

// Browser is the body of GET /api/browser and of the answers of take,
// give and open: a channel.BrowserState. URL and Title are the page's:
// untrusted text.
type Browser struct {
	Running bool   `json:"running"`
	Owner   bool   `json:"owner"` // the owner has it: the model's browser tools are refused
	URL     string `json:"url"`
	Title   string `json:"title"`
}

// NewBrowser is b on the wire.
func NewBrowser(b channel.BrowserState) Browser {
	return Browser{Running: b.Running, Owner: b.Owner, URL: b.URL, Title: b.Title}
}

// Channel is b as a channel value.
func (b Browser) Channel() channel.BrowserState {
	return channel.BrowserState{Running: b.Running, Owner: b.Owner, URL: b.URL, Title: b.Title}
}

// BrowserOpen is the body of POST /api/browser/open.
type BrowserOpen struct {
	URL string `json:"url"`
}

// Kinds of BrowserInput besides the mouse's (channel.MousePress,
// MouseRelease, MouseMove).
const (
	InputKey  = "key"  // Key names a key
	InputText = "text" // Text is typed
)

// BrowserInput is the body of POST /api/browser/input: a mouse event
// (kind press, release or move, with X and Y in CSS pixels of the page's
// viewport), a key (kind key, with Key) or typed text (kind text, with
// Text).
type BrowserInput struct {
	Kind string   `json:"kind"`
	X    *float64 `json:"x,omitempty"`
	Y    *float64 `json:"y,omitempty"`
	Key  string   `json:"key,omitempty"`
	Text string   `json:"text,omitempty"`
}
