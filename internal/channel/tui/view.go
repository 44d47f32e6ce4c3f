package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/lang"
)

type entryKind int

const (
	kindUser   entryKind = iota // the owner's message
	kindAnswer                  // the model's text, rendered as Markdown
	kindTool                    // one tool call
	kindCard                    // an approval card
	kindNote                    // homard speaking: help, budget, notices
	kindError                   // a turn that failed
)

// entry is one block of the transcript. Its rendering is cached per width.
type entry struct {
	kind   entryKind
	text   string
	tool   channel.ToolEvent
	card   channel.Card
	answer string       // how the card was answered; empty while open
	hint   string       // a card's correction ("critical: only o or d")
	md     mdStream     // an answer's rendering, kept as it streams
	p      lang.Printer // the language of a card's labels

	cachedWidth int
	cached      []string
}

func (e *entry) dirty() { e.cached = nil }

func (e *entry) lines(width int) []string {
	if e.cached == nil || e.cachedWidth != width {
		e.cached, e.cachedWidth = e.render(width), width
	}
	return e.cached
}

// render lays the entry out in lines at most width cells wide. Every text
// that came from outside (the model, a tool, a stored conversation, an
// error) goes through clean first.
func (e *entry) render(width int) []string {
	switch e.kind {
	case kindUser:
		// The owner typed it, but it may come from a stored session too.
		return hang(styleUser.Render("you› "), clean(e.text), width)
	case kindAnswer:
		return e.md.render(e.text, width)
	case kindTool:
		return toolLines(e.tool, width)
	case kindCard:
		return cardLines(e, width)
	case kindError:
		var out []string
		for _, l := range wrap(clean(e.text), width) {
			out = append(out, styleError.Render(l))
		}
		return out
	default:
		var out []string
		for _, l := range wrap(clean(e.text), width) {
			out = append(out, styleDim.Render(l))
		}
		return out
	}
}

// statusMark is the symbol a tool line starts with.
func statusMark(s channel.Status) string {
	switch s {
	case channel.Ran:
		return styleOK.Render("✓")
	case channel.Pending:
		return styleWarn.Render("⏸")
	case channel.Denied:
		return styleError.Render("✗")
	case channel.Failed:
		return styleError.Render("!")
	}
	return styleDim.Render("⋯")
}

// toolLines is a call's line: its status, name and what it does (the
// plan's first line once decided, else the arguments), then the reason or
// a preview of the result, each cut to one line.
func toolLines(ev channel.ToolEvent, width int) []string {
	what := ev.Args
	if ev.Plan != "" {
		what = ev.Plan
	}
	what = strings.Join(strings.Fields(clean(what)), " ")
	head := "  " + statusMark(ev.Status) + " " + styleBold.Render(clean(ev.Name)) + " " + styleDim.Render(what)
	out := []string{fit(head, width)}
	detail := ""
	switch ev.Status {
	case channel.Denied, channel.Failed, channel.Pending:
		detail = ev.Reason
		if detail == "" {
			detail = ev.Preview
		}
	case channel.Ran:
		detail = ev.Preview
	}
	if detail = strings.Join(strings.Fields(clean(detail)), " "); detail != "" {
		out = append(out, styleDim.Render(fit("    "+detail, width)))
	}
	return out
}

// cardLines is an approval card: the tool, its risk, the exact plan (all of
// it, wrapped), the plan hash's first 12 hex characters, why homard asks,
// and the keys, or how it was answered.
func cardLines(e *entry, width int) []string {
	c, p := e.card, e.p
	inner := max(width-4, 8) // "│ " … " │"
	var body []string
	// The header is in reverse video, which text from the model can never
	// be (no escape sequence of its own reaches the terminal): a card the
	// model draws with box characters has no such line.
	body = append(body, styleCardHead.Render(fit(p.Sprintf("approval needed: %s · risk %s · %s", clean(c.Tool), clean(c.Risk), clean(c.ApprovalID)), inner)))
	for _, l := range wrap(clean(strings.TrimRight(c.Plan, "\n")), inner-2) {
		body = append(body, "  "+l)
	}
	body = append(body, previewLines(p, c, inner)...)
	meta := p.Sprintf("plan hash %s", shortHash(c.PlanHash))
	if !c.ExpiresAt.IsZero() {
		meta += p.Sprintf(" · expires %s", c.ExpiresAt.Local().Format("15:04"))
	}
	body = append(body, styleDim.Render(fit(meta, inner)))
	if c.Reason != "" {
		body = append(body, hang(styleDim.Render(p.T("why: ")), clean(c.Reason), inner)...)
	}
	switch {
	case e.answer != "":
		body = append(body, styleBold.Render(fit("→ "+e.answer, inner)))
	case c.Critical():
		body = append(body, styleBold.Render(fit(p.T("critical: [o]nce · [d]eny · Esc leave pending"), inner)))
	case !c.Allows(channel.Session):
		body = append(body, styleBold.Render(fit(p.T("[o]nce · [d]eny · Esc leave pending"), inner)))
	case !c.Allows(channel.Always):
		if c.Covers != "" && !c.CoversShown() {
			body = append(body, hang(styleDim.Render(p.T("session would cover: ")), clean(c.Covers), inner)...)
		}
		body = append(body, styleBold.Render(fit(p.T("[o]nce · [s]ession · [d]eny · Esc leave pending"), inner)))
	default:
		if c.Covers != "" && !c.CoversShown() {
			body = append(body, hang(styleDim.Render(p.T("session/always would cover: ")), clean(c.Covers), inner)...)
		}
		body = append(body, styleBold.Render(fit(p.T("[o]nce · [s]ession · [a]lways · [d]eny · Esc leave pending"), inner)))
	}
	if e.hint != "" {
		body = append(body, styleError.Render(fit(e.hint, inner)))
	}
	box := lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1).Width(inner + 2)
	if e.answer == "" {
		box = box.BorderForeground(lipgloss.Color("11"))
	}
	return strings.Split(box.Render(strings.Join(body, "\n")), "\n")
}

// cardPreviewLines caps the preview lines a card shows in the transcript;
// the rest is one command away.
const cardPreviewLines = 40

// previewLines is a card's preview: what the call does (a write's diff, a
// command's argv), each line through clean and wrapped, a diff's lines
// coloured by their first character (which homard wrote: every content
// line of a diff starts with "+", "-" or " "), and a line saying how to
// see what was left out.
func previewLines(p lang.Printer, c channel.Card, inner int) []string {
	if c.Preview == "" {
		return nil
	}
	out := []string{styleDim.Render(fit(p.T("─ what it does ─"), inner))}
	lines := strings.Split(strings.TrimRight(c.Preview, "\n"), "\n")
	omitted := c.PreviewOmitted
	if len(lines) > cardPreviewLines {
		omitted += len(lines) - cardPreviewLines
		lines = lines[:cardPreviewLines]
	}
	for _, line := range lines {
		style := lipgloss.NewStyle()
		if c.PreviewDiff {
			style = diffStyles[channel.DiffLineOf(line)]
		}
		for _, l := range wrap(clean(line), inner-2) {
			out = append(out, "  "+style.Render(l))
		}
	}
	if omitted > 0 {
		out = append(out, hang(styleDim.Render("… "), clean(p.Sprintf("%d more lines; homard approval show %s --full", omitted, c.ApprovalID)), inner)...)
	}
	return out
}

// diffStyles is the style of each kind of diff line.
var diffStyles = [...]lipgloss.Style{channel.DiffContext: lipgloss.NewStyle(), channel.DiffHeader: styleBold,
	channel.DiffAdded: styleOK, channel.DiffRemoved: styleError, channel.DiffHunk: styleHeading}

// shortHash is the prefix of a plan hash people compare by eye.
func shortHash(h string) string {
	h = clean(strings.TrimPrefix(h, "sha256:"))
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}

// layout sizes the parts to the terminal: a header line, the transcript,
// the input and a footer line.
func (m *Model) layout() {
	follow := m.atEnd()
	w := max(m.width, 20)
	m.input.SetWidth(w)
	inH := min(max(m.input.LineCount(), 1), inputHeight)
	if m.height < 12 {
		inH = 1
	}
	m.input.SetHeight(inH)
	m.vp.Width = w
	m.vp.Height = max(m.height-inH-2, 1)
	m.refresh()
	if follow {
		m.vp.GotoBottom()
	}
}

// atEnd reports whether the transcript shows its last line, so that new
// lines should keep it there.
func (m *Model) atEnd() bool {
	return m.vp.AtBottom() || m.vp.TotalLineCount() <= m.vp.Height
}

// refresh lays the transcript out again, following the end unless the
// owner scrolled up.
func (m *Model) refresh() {
	follow := m.atEnd()
	var lines []string
	for i, e := range m.entries {
		if i > 0 && e.kind != kindTool && !(e.kind == kindAnswer && m.entries[i-1].kind == kindUser) {
			lines = append(lines, "")
		}
		lines = append(lines, e.lines(m.vp.Width)...)
	}
	m.vp.SetContent(strings.Join(lines, "\n"))
	if follow || m.card != nil {
		m.vp.GotoBottom()
	}
}

// View draws the screen.
func (m *Model) View() string {
	if m.quitting {
		return ""
	}
	w := m.vp.Width
	head := "homard chat · " + m.session // lang:en: the command's name
	if m.info.Model != "" {
		head += " · " + m.info.Model
	}
	if m.info.Mode != "" {
		head += m.p.Sprintf(" · %s mode", m.info.Mode)
	}
	var foot string
	switch {
	case m.card != nil && m.card.entry.card.Critical():
		foot = lang.N("critical: o approve once · d deny · Esc leave pending · Ctrl+C cancel the turn")
	case m.card != nil:
		foot = lang.N("o once · s session · a always · d deny · Esc leave pending · Ctrl+C cancel")
	case m.busy && m.cancelled:
		foot = lang.N("cancelling…")
	case m.busy:
		foot = lang.N("working… Ctrl+C or /cancel stops the turn · PgUp/PgDn scroll")
	default:
		foot = lang.N("Enter send · Alt+Enter/Ctrl+J new line · PgUp/PgDn scroll · /help · Ctrl+C quit")
	}
	foot = m.p.T(foot)
	return strings.Join([]string{
		styleBar.Render(padRight(fit(clean(head), w), w)),
		m.vp.View(),
		m.input.View(),
		styleDim.Render(fit(foot, w)),
	}, "\n")
}

func padRight(s string, w int) string {
	if n := w - lipgloss.Width(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}
