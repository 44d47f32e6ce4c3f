// Package ui holds the web UI of homard serve: one HTML page, one
// stylesheet and its scripts, hand-written and embedded in the binary so
// nothing is fetched from a CDN and no npm step is needed to build homard.
//
// Contract: FS returns the files rooted at the static folder (index.html,
// app.css, lang.js, markdown.js, tasks.js, browser.js, app.js); the server serves them at "/"
// next to the API of spec/API.md, under a Content-Security-Policy of
// default-src 'self' with no 'unsafe-inline' (the page has no inline
// script, style or handler). The scripts render everything that came from
// the model, a tool, memory, a task or the audit log as text: a Markdown
// subset is built from DOM nodes with textContent, links are http(s) only
// with rel="noopener noreferrer", and images are never loaded (their alt
// text and URL are shown as text) but for one: a screenshot artifact from
// the gateway's own /api/artifacts/ID. The isolated browser's frames are
// drawn on a canvas from decoded bytes, with no URL. Tool names, plans, previews, audit
// records, memory, task bodies and session ids show each control, bidi or
// invisible character as a marked escape (\u202e in a span.hidden-char),
// the set internal/termtext shows on a terminal.
package ui

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// FS returns the UI's files rooted at the static folder, so "index.html"
// is at the top.
func FS() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		// fs.Sub fails only for an invalid path; "static" is a constant.
		panic("ui: " + err.Error())
	}
	return sub
}
