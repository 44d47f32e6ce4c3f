package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/homard/homard/internal/app"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/termtext"
)

// Colours of a diff preview on a terminal. Each wraps one line that went
// through termtext first, so the line's own text can hold no escape: the
// colour is homard's, chosen from the line's first character, which the
// tool wrote (every content line of a diff starts with "+", "-" or " ").
const (
	sgrAdd    = "\x1b[32m" // green
	sgrDel    = "\x1b[31m" // red
	sgrHunk   = "\x1b[36m" // cyan
	sgrHeader = "\x1b[1m"  // bold
	sgrPlain  = "\x1b[0m"
)

// diffColours is the colour of each kind of diff line; none for context.
var diffColours = [...]string{channel.DiffHeader: sgrHeader, channel.DiffAdded: sgrAdd, channel.DiffRemoved: sgrDel, channel.DiffHunk: sgrHunk}

// previewOpts says how printPreview shows a preview.
type previewOpts struct {
	indent  string
	colour  bool   // the writer is a terminal
	full    bool   // show it whole, not clipped
	omitted int    // lines a serve already cut (an attached card)
	id      string // the approval id, for the "--full" hint
}

// printPreview prints an approval's preview: clipped to what a card shows
// (200 lines, 16 KiB) unless full, with a line saying how to see the
// rest; every line through termtext, so control characters, escape
// sequences and bidi controls in a file's content show as inert escapes.
func (c *cli) printPreview(w io.Writer, preview string, o previewOpts) {
	if preview == "" {
		return
	}
	shown, omitted := preview, 0
	if !o.full {
		shown, omitted = app.ClipPreview(preview)
	}
	omitted += o.omitted
	diff := app.IsDiff(preview)
	for _, line := range strings.Split(strings.TrimSuffix(shown, "\n"), "\n") {
		text := termtext.Visible(line)
		if o.colour && diff {
			if c := diffColours[channel.DiffLineOf(line)]; c != "" {
				text = c + text + sgrPlain
			}
		}
		fmt.Fprintf(w, "%s%s\n", o.indent, text)
	}
	if omitted > 0 {
		c.say.Fprintf(w, "%s… %d more lines; `homard approval show %s --full`\n", o.indent, omitted, termtext.Line(o.id))
	}
}

// isTerminal reports whether w is a terminal (and so may be coloured).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
