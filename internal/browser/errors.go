package browser

import "errors"

// Sentinel errors; check them with errors.Is.
var (
	// ErrNoChromium is wrapped when no Chromium binary is found.
	ErrNoChromium = errors.New("browser: no Chromium found: install it (apt-get install chromium) or set [browser] chrome_path to its binary")
	// ErrStart is wrapped when Chromium was found but did not start; the
	// error quotes the last lines it wrote.
	ErrStart = errors.New("browser: chromium did not start")
	// ErrClosed: the Browser was closed.
	ErrClosed = errors.New("browser: closed")
	// ErrRef: a ref that is not in the latest snapshot, or whose element
	// is gone; take a new snapshot.
	ErrRef = errors.New("browser: unknown or stale ref")
	// ErrBlocked: a navigation the egress rules refuse.
	ErrBlocked = errors.New("browser: blocked by the egress rules")
	// ErrNoTab: there is no tab for the call (CloseTab of an unknown id,
	// an action with no page open).
	ErrNoTab = errors.New("browser: no such tab")
	// ErrArgument: an argument outside its closed list (a key, a scroll
	// direction, a mouse action, a URL scheme).
	ErrArgument = errors.New("browser: invalid argument")
)
