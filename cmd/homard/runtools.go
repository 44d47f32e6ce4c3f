package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

// runTool is one tool call of a `homard run` turn, as --json prints it
// (docs/JSON.md, "## run").
type runTool struct {
	Name string `json:"name"`
	// Plan is the exact action decided on; the arguments when they were
	// rejected before a plan existed.
	Plan string `json:"plan"`
	// Decision is how homard decided: allowed, approved (asked, and the
	// owner approved), denied (asked, and the owner refused), pending
	// (waits for approval), refused (a hard limit, policy or budget), or
	// invalid (unknown tool or arguments rejected).
	Decision string `json:"decision"`
	// Rule is the id of the rule that decided.
	Rule string `json:"rule"`
	// Status is where the call ended: ran, error, denied or pending.
	Status     channel.Status `json:"status"`
	Reason     string         `json:"reason"`
	ApprovalID string         `json:"approval_id,omitempty"`
	Step       int            `json:"step"`
	// ElapsedMS is how long the call took, from its proposal until it was
	// settled (an approval wait included), in milliseconds.
	ElapsedMS int64 `json:"elapsed_ms"`

	id      string
	pending bool      // a pending event was seen: the owner was or will be asked
	planned bool      // the arbiter made a plan (the arguments were accepted)
	start   time.Time // when it was proposed; zero when it never was (a budget refused it)
	took    time.Duration
}

// toolLog follows the tool calls of one turn from their events, whose
// status is a value (never read back out of text): it prints a line on w
// when a call is proposed (so a long command does not look like a hang)
// and one once the call is settled, with the time it took; a marker when
// the model starts a new step; and keeps every call for --json. It is used
// on the turn's goroutine only.
type toolLog struct {
	w      io.Writer        // nil prints nothing (--json)
	before func()           // ends the streamed answer's line before a line
	now    func() time.Time // the clock; nil means time.Now
	step   int              // the model step of the last event; 0 before any
	open   *runTool         // the call being decided, not printed yet
	calls  []runTool
	say    lang.Printer // the person's language
}

// event takes one tool event.
func (l *toolLog) event(ev channel.ToolEvent) {
	if l.open != nil && l.open.id != ev.ID {
		l.flush()
	}
	if ev.Step != l.step {
		if l.step != 0 && l.w != nil {
			if l.before != nil {
				l.before()
			}
			l.say.Fprintf(l.w, "homard: — step %d —\n", ev.Step)
		}
		l.step = ev.Step
	}
	if l.open == nil {
		l.open = &runTool{id: ev.ID, Name: ev.Name, Step: ev.Step, Plan: ev.Args}
	}
	c := l.open
	if ev.Status == channel.Proposed {
		if c.start.IsZero() {
			c.start = l.clock()
			l.print(l.startLine(*c))
		}
		return
	}
	c.Status, c.Rule, c.Reason = ev.Status, ev.Rule, ev.Reason
	if ev.Plan != "" {
		c.Plan, c.planned = ev.Plan, true
	}
	if ev.Status == channel.Pending {
		// Not settled: the owner may be asked now; the next event of this
		// call, or the next call, or the end of the turn settles it.
		c.pending, c.ApprovalID = true, ev.ApprovalID
		return
	}
	l.flush()
}

// flush settles the open call, prints its line and keeps it.
func (l *toolLog) flush() {
	c := l.open
	if c == nil {
		return
	}
	l.open = nil
	c.Decision = decisionOf(*c)
	if !c.start.IsZero() {
		c.took = l.clock().Sub(c.start)
		c.ElapsedMS = c.took.Milliseconds()
	}
	l.calls = append(l.calls, *c)
	l.print(l.toolLine(*c))
}

// print prints one line on w, after ending the streamed answer's line.
func (l *toolLog) print(line string) {
	if l.w == nil {
		return
	}
	if l.before != nil {
		l.before()
	}
	fmt.Fprintln(l.w, line)
}

func (l *toolLog) clock() time.Time {
	if l.now == nil {
		return time.Now()
	}
	return l.now()
}

// decisionOf names how homard decided c, from its status and whether it
// waited for approval.
func decisionOf(c runTool) string {
	switch {
	case c.Status == channel.Pending:
		return "pending"
	case c.pending && c.Status == channel.Denied:
		return "denied"
	case c.pending:
		return "approved"
	case c.Status == channel.Denied:
		return "refused"
	case c.Status == channel.Failed && !c.planned:
		// Stopped before a plan existed: an unknown tool or rejected
		// arguments.
		return "invalid"
	}
	return "allowed"
}

// Caps of the parts of a tool line, in runes.
const (
	linePlanRunes   = 100
	lineReasonRunes = 160
)

// startLine is the line printed when c is proposed: its arguments (the
// plan is not made yet), first line only, inert and capped.
func (l *toolLog) startLine(c runTool) string {
	return l.say.Sprintf("homard: tool %s starts: %s", termtext.Line(c.Name), capRunes(termtext.Line(firstLine(c.Plan)), linePlanRunes))
}

// toolLine is the line printed once c is settled. Every part the model or
// a tool could have written goes through termtext.Line, then is capped; a
// plan shows its first line only (a command's plan lists its settings on
// the next ones).
func (l *toolLog) toolLine(c runTool) string {
	var b strings.Builder
	l.say.Fprintf(&b, "homard: tool %s: %s — ", termtext.Line(c.Name), capRunes(termtext.Line(firstLine(c.Plan)), linePlanRunes))
	b.WriteString(l.outcome(c))
	if !c.start.IsZero() {
		fmt.Fprintf(&b, " (%s)", elapsed(c.took))
	}
	return b.String()
}

// outcome says how c was decided and how it ended.
func (l *toolLog) outcome(c runTool) string {
	var b strings.Builder
	reason := capRunes(termtext.Line(c.Reason), lineReasonRunes)
	by := ""
	if c.Rule != "" {
		by = " by " + termtext.Line(c.Rule)
	}
	switch c.Decision {
	case "pending":
		l.say.Fprintf(&b, "asked → waiting for approval %s", termtext.Line(c.ApprovalID))
	case "denied":
		b.WriteString(l.say.T("asked → denied"))
	case "approved":
		l.say.Fprintf(&b, "asked → approved → %s", c.Status)
	case "refused":
		l.say.Fprintf(&b, "refused%s: %s", by, reason)
		return b.String()
	case "invalid":
		l.say.Fprintf(&b, "invalid: %s", reason)
		return b.String()
	default:
		l.say.Fprintf(&b, "allowed%s → %s", by, c.Status)
	}
	if c.Status == channel.Failed && reason != "" {
		b.WriteString(": " + reason)
	}
	return b.String()
}

// elapsed is d rounded for a person: milliseconds under a second, tenths
// of a second under a minute, whole seconds above.
func elapsed(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// capRunes cuts s to at most n runes, marking the cut.
func capRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
