package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/homard/homard/internal/channel"
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

	id      string
	pending bool // a pending event was seen: the owner was or will be asked
	planned bool // the arbiter made a plan (the arguments were accepted)
}

// toolLog follows the tool calls of one turn from their events, whose
// status is a value (never read back out of text): it prints one line per
// call on w once the call is settled, a marker when the model starts a new
// step, and keeps every call for --json. It is used on the turn's
// goroutine only.
type toolLog struct {
	w      io.Writer // nil prints nothing (--json)
	before func()    // ends the streamed answer's line before a line
	step   int       // the model step of the last event; 0 before any
	open   *runTool  // the call being decided, not printed yet
	calls  []runTool
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
			fmt.Fprintf(l.w, "homard: — step %d —\n", ev.Step)
		}
		l.step = ev.Step
	}
	if l.open == nil {
		l.open = &runTool{id: ev.ID, Name: ev.Name, Step: ev.Step, Plan: ev.Args}
	}
	c := l.open
	if ev.Status == channel.Proposed {
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
	l.calls = append(l.calls, *c)
	if l.w == nil {
		return
	}
	if l.before != nil {
		l.before()
	}
	fmt.Fprintln(l.w, toolLine(*c))
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

// toolLine is the one line printed for c. Every part the model or a tool
// could have written goes through termtext.Line, then is capped.
func toolLine(c runTool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "homard: tool %s: %s — ", termtext.Line(c.Name), capRunes(termtext.Line(c.Plan), linePlanRunes))
	reason := capRunes(termtext.Line(c.Reason), lineReasonRunes)
	by := ""
	if c.Rule != "" {
		by = " by " + termtext.Line(c.Rule)
	}
	switch c.Decision {
	case "pending":
		fmt.Fprintf(&b, "asked → waiting for approval %s", termtext.Line(c.ApprovalID))
	case "denied":
		b.WriteString("asked → denied")
	case "approved":
		fmt.Fprintf(&b, "asked → approved → %s", c.Status)
	case "refused":
		fmt.Fprintf(&b, "refused%s: %s", by, reason)
		return b.String()
	case "invalid":
		fmt.Fprintf(&b, "invalid: %s", reason)
		return b.String()
	default:
		fmt.Fprintf(&b, "allowed%s → %s", by, c.Status)
	}
	if c.Status == channel.Failed && reason != "" {
		b.WriteString(": " + reason)
	}
	return b.String()
}

// capRunes cuts s to at most n runes, marking the cut.
func capRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
