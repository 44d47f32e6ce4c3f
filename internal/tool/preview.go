package tool

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"unicode/utf8"
)

// A Plan's preview is what an approval card shows under the Plan's
// one-line Display: the content a write puts in a file (as a unified
// diff), an edit's diff, a command's exact argv, a fetch's URL. The tool
// computes it in Prepare from the same values it puts in the Body, and
// from the workspace as it is then (the current file a diff is taken
// against) — never from text the model wrote for people. It is display,
// like Display: it is not hashed, so a file that changes between the card
// and the run changes no approval. What runs is the Body, which is.
//
// A preview that begins with a line "--- " is a unified diff: surfaces may
// colour its "+", "-" and "@@" lines. Tools write a diff for file content
// only, always with that header, so the model cannot make other text look
// like one (every content line of a diff starts with "+", "-" or " ").

// Preview caps. A card shows at most PreviewLines lines and PreviewBytes
// bytes (ClipPreview); the whole preview, up to MaxPreviewBytes, is kept
// with the approval for `homard approval show ID --full`.
const (
	PreviewLines    = 200
	PreviewBytes    = 16 << 10
	MaxPreviewBytes = 1 << 20
)

// IsDiff reports whether a preview is a unified diff (see above).
func IsDiff(preview string) bool { return strings.HasPrefix(preview, "--- ") }

// ClipPreview cuts preview to at most lines lines and maxBytes bytes (on
// a rune boundary) for a card, and reports how many lines it left out
// (a line cut in the middle counts as left out). Zero or negative limits
// mean PreviewLines and PreviewBytes.
func ClipPreview(preview string, lines, maxBytes int) (shown string, omitted int) {
	if lines <= 0 {
		lines = PreviewLines
	}
	if maxBytes <= 0 {
		maxBytes = PreviewBytes
	}
	preview = strings.TrimSuffix(preview, "\n")
	if preview == "" {
		return "", 0
	}
	total := strings.Count(preview, "\n") + 1
	end, n := 0, 0
	for n < lines && end < len(preview) {
		next := strings.IndexByte(preview[end:], '\n')
		stop := len(preview)
		if next >= 0 {
			stop = end + next
		}
		if stop > maxBytes {
			break
		}
		end, n = stop+1, n+1
	}
	if n == total {
		return preview, 0
	}
	if n == 0 { // the first line alone is over maxBytes: show its start
		return preview[:RuneCut(preview, maxBytes)] + " …", total
	}
	return preview[:end-1], total - n
}

// CapPreview cuts a preview to MaxPreviewBytes, on a line boundary when
// there is one, with a note saying so.
func CapPreview(preview string) string {
	if len(preview) <= MaxPreviewBytes {
		return preview
	}
	cut := MaxPreviewBytes
	if i := strings.LastIndexByte(preview[:cut], '\n'); i > 0 {
		cut = i + 1
	}
	return preview[:RuneCut(preview, cut)] + "\n[homard: preview cut at 1 MiB]\n"
}

// RuneCut returns where to cut s to keep at most n bytes without
// splitting a UTF-8 sequence: the largest i ≤ n at which a rune starts,
// or len(s) when s is no longer than n.
func RuneCut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// BodyPreview is the preview of a Plan whose tool wrote none: its body,
// the exact arguments Run executes, indented. canonical is the body's
// RFC 8785 form.
func BodyPreview(canonical []byte) string {
	var out bytes.Buffer
	if err := json.Indent(&out, canonical, "", "  "); err != nil {
		return string(canonical)
	}
	return out.String()
}

// lazyPreview holds a Plan's preview, computed once on first use. Copies
// of a Plan share it.
type lazyPreview struct {
	once sync.Once // guards text
	f    func() string
	text string
}

func newLazyPreview(text string, f func() string) *lazyPreview {
	if f == nil {
		return &lazyPreview{text: CapPreview(text), f: func() string { return "" }}
	}
	return &lazyPreview{f: f}
}

func (l *lazyPreview) get() string {
	if l == nil {
		return ""
	}
	l.once.Do(func() {
		if s := l.f(); s != "" {
			l.text = CapPreview(s)
		}
	})
	return l.text
}
