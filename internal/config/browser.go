package config

import (
	"path/filepath"
	"time"
)

// Browser configures the isolated browser (internal/browser): a headless
// Chromium of homard's own, with its own profile under homard's home,
// driven by the browser_* tools. Off unless enabled.
type Browser struct {
	// Enabled offers the browser tools. Missing means false.
	Enabled bool `toml:"enabled"`
	// ChromePath is the Chromium (or Chrome) program: an absolute path.
	// Missing means the first of chromium, chromium-browser,
	// google-chrome and google-chrome-stable on PATH.
	ChromePath string `toml:"chrome_path"`
	// IdleTimeout closes Chromium after this long without a browser
	// call: from "1m" to "24h". Missing means "10m".
	IdleTimeout Duration `toml:"idle_timeout"`
	// SnapshotBytes caps the page text one snapshot hands the model (the
	// whole page is kept as an artifact): from 1024 to 65536. Missing
	// means 4096.
	SnapshotBytes int `toml:"snapshot_bytes"`
}

// Browser defaults.
const (
	DefaultBrowserIdle          = 10 * time.Minute
	DefaultBrowserSnapshotBytes = 4096
)

// browserSection prefixes the section's keys in messages (as
// monitorSection: rule ids start with "browser." nowhere, but keep one
// spelling).
const browserSection = "browser"

func applyBrowserDefaults(b *Browser) {
	orDefault(&b.IdleTimeout, Duration(DefaultBrowserIdle))
	orDefault(&b.SnapshotBytes, DefaultBrowserSnapshotBytes)
}

func validateBrowser(b *Browser, ps *problems) {
	if b.ChromePath != "" && !filepath.IsAbs(b.ChromePath) {
		ps.add("%s.chrome_path = %q: want an absolute path such as \"/usr/bin/chromium\", or leave it out to find Chromium on PATH", browserSection, b.ChromePath)
	}
	if d := b.IdleTimeout.Std(); d < time.Minute || d > 24*time.Hour {
		ps.add("%s.idle_timeout = %q: want a duration from \"1m\" to \"24h\" (the default is %v)", browserSection, b.IdleTimeout.String(), DefaultBrowserIdle)
	}
	if b.SnapshotBytes < 1024 || b.SnapshotBytes > 65536 {
		ps.add("%s.snapshot_bytes = %d: want from 1024 to 65536 (the default is %d)", browserSection, b.SnapshotBytes, DefaultBrowserSnapshotBytes)
	}
}

func renderBrowser(w func(string, ...any), b *Browser) {
	w(`
[browser]
# An isolated headless Chromium for the browser_* tools: its own profile
# under homard's home (never your personal browser), every request a page
# makes checked by the [egress] rules, nothing typed or clicked in smart
# mode without your approval, passwords typed from the vault without the
# model seeing them (browser_fill_secret). Needs Chromium
# (apt-get install chromium).
enabled = %t
# The Chromium program; "" finds chromium or google-chrome on PATH.
chrome_path = %s
# Chromium is closed after this long without a browser call.
idle_timeout = %s
# The most page text one snapshot hands the model; the whole page is kept
# as an artifact.
snapshot_bytes = %d
`, b.Enabled, quote(b.ChromePath), quote(b.IdleTimeout.String()), b.SnapshotBytes)
}
