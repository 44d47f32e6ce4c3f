package channel

import "strings"

// DiffLine is what one line of a unified diff preview is (a Card's
// Preview when PreviewDiff), for a channel that colours it.
type DiffLine int

// The kinds of line of a unified diff.
const (
	DiffContext DiffLine = iota // any other line
	DiffHeader                  // "--- " or "+++ ": a file's name
	DiffAdded                   // "+"
	DiffRemoved                 // "-"
	DiffHunk                    // "@@": where a hunk starts
)

// DiffLineOf is the kind of one line of a unified diff, judged by its
// first characters (which the tool wrote: every content line of a diff
// starts with "+", "-" or " ").
func DiffLineOf(line string) DiffLine {
	switch {
	case strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "):
		return DiffHeader
	case strings.HasPrefix(line, "+"):
		return DiffAdded
	case strings.HasPrefix(line, "-"):
		return DiffRemoved
	case strings.HasPrefix(line, "@@"):
		return DiffHunk
	}
	return DiffContext
}
