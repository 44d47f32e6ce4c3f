package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/homard/homard/internal/termtext"
)

// clean makes text that came from the model or a tool inert on a terminal,
// through the one printer of untrusted text (termtext.Visible): every
// control character but newline, ESC, C1 controls, bidi controls, invisible
// characters and invalid UTF-8 are shown as escapes such as \x1b or \u202e,
// so "\x1b[2J" or an OSC 52 clipboard write is printed, not obeyed. A tab
// becomes four spaces (its width is the terminal's choice), and carriage
// returns are dropped from CRLF line ends (shown otherwise).
func clean(s string) string {
	if strings.ContainsAny(s, "\r\t") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\t", "    ")
	}
	return termtext.Visible(s)
}

// wrap breaks s (which may hold our own styling) into lines at most width
// cells wide, by display width: a CJK character takes two cells, and a word
// longer than the line is broken.
func wrap(s string, width int) []string {
	if width < 4 {
		width = 4
	}
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for _, l := range strings.Split(ansi.Wrap(line, width, ""), "\n") {
			// Wrap can leave a line one cell over (a leading space before
			// a word as long as the line); break such a line by cells.
			if ansi.StringWidth(l) > width {
				out = append(out, strings.Split(ansi.Hardwrap(l, width, true), "\n")...)
				continue
			}
			out = append(out, l)
		}
	}
	return out
}

// hang wraps s to width with prefix on the first line and as many spaces
// on the others (a list item, a quoted line, the owner's message).
func hang(prefix, s string, width int) []string {
	pw := ansi.StringWidth(prefix)
	lines := wrap(s, width-pw)
	pad := strings.Repeat(" ", pw)
	for i := range lines {
		if i == 0 {
			lines[i] = prefix + lines[i]
		} else {
			lines[i] = pad + lines[i]
		}
	}
	return lines
}

// fit cuts s to one line of at most width cells.
func fit(s string, width int) string {
	s, _, _ = strings.Cut(s, "\n")
	return ansi.Truncate(s, width, "…")
}

// styles used in the transcript. Colours degrade to nothing on a terminal
// without them.
var (
	styleBold     = lipgloss.NewStyle().Bold(true)
	styleHeading  = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("12"))
	styleCode     = lipgloss.NewStyle().Foreground(lipgloss.Color("10"))
	styleDim      = lipgloss.NewStyle().Faint(true)
	styleUser     = lipgloss.NewStyle().Foreground(lipgloss.Color("14")).Bold(true)
	styleError    = lipgloss.NewStyle().Foreground(lipgloss.Color("9"))
	styleWarn     = lipgloss.NewStyle().Foreground(lipgloss.Color("11"))
	styleOK       = lipgloss.NewStyle().Foreground(lipgloss.Color("10"))
	styleBar      = lipgloss.NewStyle().Reverse(true)
	styleCardHead = lipgloss.NewStyle().Reverse(true).Bold(true).Foreground(lipgloss.Color("11"))
)

// markdown renders an answer as terminal lines at most width cells wide.
//
// This is a deliberately small, hand-rolled renderer (no glamour, to keep
// the binary small): ATX headings, **bold**, `inline code`, fenced code
// blocks, bullet and numbered lists and block quotes. Anything else is
// shown as written. Each source line is rendered on its own (only the
// fence state carries over), so a streamed answer is rendered line by line
// as it grows (see mdStream); an unclosed fence or ** renders plainly until
// it closes. Every line is cleaned first: the model's text never reaches
// the terminal raw.
func markdown(src string, width int) []string {
	var s mdStream
	return s.render(src, width)
}

// mdStream renders a growing answer, keeping the lines of its complete
// source lines so that each fragment costs only its last line.
type mdStream struct {
	width  int
	done   int      // bytes of the source rendered into lines (complete lines)
	fenced bool     // inside a code fence after those bytes
	lines  []string // the rendering of src[:done]
}

func (s *mdStream) render(src string, width int) []string {
	if width != s.width || s.done > len(src) {
		*s = mdStream{width: width}
	}
	if end := strings.LastIndexByte(src, '\n'); end >= s.done {
		for _, line := range strings.Split(src[s.done:end], "\n") {
			s.lines = append(s.lines, mdLine(strings.TrimSuffix(line, "\r"), width, &s.fenced)...)
		}
		s.done = end + 1
	}
	fenced := s.fenced
	out := s.lines[:len(s.lines):len(s.lines)] // the tail never writes into the cache
	if tail := src[s.done:]; tail != "" || s.done == 0 {
		out = append(out, mdLine(tail, width, &fenced)...)
	}
	return out
}

// mdLine renders one source line; fenced is the code-fence state, updated.
func mdLine(line string, width int, fenced *bool) []string {
	line = clean(line)
	trimmed := strings.TrimSpace(line)
	if strings.HasPrefix(trimmed, "```") {
		*fenced = !*fenced
		if lang := strings.TrimPrefix(trimmed, "```"); *fenced && lang != "" {
			return []string{styleDim.Render(fit("  "+lang, width))}
		}
		return nil
	}
	var out []string
	if *fenced {
		// Code keeps its spaces and is broken, not word-wrapped.
		for _, l := range strings.Split(ansi.Hardwrap(line, max(width-2, 4), true), "\n") {
			out = append(out, "  "+styleCode.Render(l))
		}
		return out
	}
	indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
	if len(indent) > 8 {
		indent = indent[:8]
	}
	switch {
	case trimmed == "":
		return []string{""}
	case isHeading(trimmed):
		for _, l := range wrap(strings.TrimSpace(strings.TrimLeft(trimmed, "#")), width) {
			out = append(out, styleHeading.Render(l))
		}
		return out
	case strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "* ") || strings.HasPrefix(trimmed, "+ "):
		return hang(indent+"• ", inline(trimmed[2:]), width)
	case isNumbered(trimmed):
		n, rest, _ := strings.Cut(trimmed, " ")
		return hang(indent+n+" ", inline(rest), width)
	case strings.HasPrefix(trimmed, ">"):
		return hang(styleDim.Render("│ "), inline(strings.TrimSpace(trimmed[1:])), width)
	}
	return wrap(inline(line), width)
}

func isHeading(s string) bool {
	n := len(s) - len(strings.TrimLeft(s, "#"))
	return n >= 1 && n <= 6 && len(s) > n && s[n] == ' '
}

func isNumbered(s string) bool {
	i := 0
	for i < len(s) && i < 4 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && s[i+1] == ' '
}

// inline styles `code` and **bold** spans; an unclosed marker is shown as
// written.
func inline(s string) string {
	var b strings.Builder
	for s != "" {
		i := strings.IndexAny(s, "`*")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		if s[0] == '`' {
			if j := strings.IndexByte(s[1:], '`'); j > 0 {
				b.WriteString(styleCode.Render(s[1 : 1+j]))
				s = s[j+2:]
				continue
			}
		} else if strings.HasPrefix(s, "**") {
			if j := strings.Index(s[2:], "**"); j > 0 {
				b.WriteString(styleBold.Render(s[2 : 2+j]))
				s = s[j+4:]
				continue
			}
		}
		b.WriteByte(s[0])
		s = s[1:]
	}
	return b.String()
}
