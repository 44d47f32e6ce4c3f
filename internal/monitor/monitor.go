// Package monitor watches one session's trajectory — the tool calls the
// arbiter decided, in order — for patterns no single call shows: calls
// denied again and again, a burst of outbound calls after the session read
// the owner's private data, writes spread over many folders. For a
// proposed call it says whether one of those rules trips, with the rule id
// (internal/policy) and the evidence to put on the owner's card.
//
// Contract: pure. A Trajectory does no I/O and never reads the clock: every
// time is passed in. It only ever answers "ask" (a Trip) or nothing; it
// never allows or denies, so whatever it forgets (a restart, an evicted
// session) can only cost an ask, never let a call through. It keeps only
// the calls within its window, and at most MaxCalls of them. A Trajectory
// is not safe for concurrent use: its owner guards it.
package monitor

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/homard/homard/internal/policy"
)

// Defaults of config's [monitor] section.
const (
	DefaultWindow       = 10 * time.Minute
	DefaultDeniedRepeat = 3
	DefaultFetchBurst   = 3
	DefaultWriteSpread  = 5
)

// MaxCalls bounds the calls one Trajectory keeps within its window; the
// oldest go first. A model making more calls than this within the window
// is already far past every default threshold.
const MaxCalls = 256

// maxLabel caps one call's label in evidence, in runes.
const maxLabel = 72

// maxListed is how many earlier calls evidence lists.
const maxListed = 4

// Limits are the thresholds. A threshold of 0 (or less) turns its rule
// off; the zero Limits turn every rule off.
type Limits struct {
	// Window is how far back a rule looks. Zero means DefaultWindow.
	Window time.Duration
	// DeniedRepeat: after this many denied calls within the window, the
	// next call asks (policy.RuleMonitorDeniedRepeat).
	DeniedRepeat int
	// FetchBurst: once the session has read private data, the
	// FetchBurst-th outbound call (policy.ActionFetch or ActionSend)
	// within the window asks (policy.RuleMonitorFetchBurst).
	FetchBurst int
	// WriteSpread: after writes into this many distinct folders within
	// the window, the next write asks (policy.RuleMonitorWriteSpread).
	WriteSpread int
}

// Off reports whether every rule is off.
func (l Limits) Off() bool { return l.DeniedRepeat <= 0 && l.FetchBurst <= 0 && l.WriteSpread <= 0 }

// Call is one decided call, as the arbiter records it once its outcome is
// known.
type Call struct {
	At   time.Time
	Tool string
	// Action is the Plan's action; empty when the call was decided before
	// it had a Plan (a refusal while preparing it, an unknown tool).
	Action policy.Action
	// Rule is the rule id that decided it.
	Rule string
	// Label says what it did, for evidence: the Plan's display, or the
	// tool's name when there was no Plan. Cut to one short line here.
	Label string
	// Denied: a hard limit or policy refused it.
	Denied bool
	// Ran: the tool ran (whatever it returned).
	Ran bool
	// Private: it ran and its result may hold the owner's private data.
	Private bool
	// Targets are the Plan's targets: root-relative paths ("notes/a.md",
	// "docs:x/y.md") for a file tool.
	Targets []string
}

// Proposal is the call being decided.
type Proposal struct {
	At     time.Time
	Action policy.Action
}

// Trip is a rule that tripped: the rule id and what it saw, one line for
// the owner's card.
type Trip struct {
	Rule     string
	Evidence string
}

// entry is a recorded call with its place in the session.
type entry struct {
	Call
	seq uint64
}

// Trajectory is one session's recent calls.
type Trajectory struct {
	limits Limits
	calls  []entry // oldest first, within the window (pruned lazily)
	seq    uint64  // of the last recorded call
	// private: the session holds private data since the call numbered
	// privateAfter (0: before any call); privateLabel says what brought
	// it in last. None of it ages out with the window: a session never
	// becomes public again.
	private      bool
	privateAfter uint64
	privateLabel string
	// since maps a rule id to the sequence number of the last call
	// recorded when the owner approved that rule's card: the rule counts
	// only calls after it.
	since map[string]uint64
}

// New returns an empty Trajectory under l.
func New(l Limits) *Trajectory {
	if l.Window <= 0 {
		l.Window = DefaultWindow
	}
	return &Trajectory{limits: l, since: map[string]uint64{}}
}

// Record adds a decided call. Calls are expected in the order they were
// decided, with times that do not go backwards.
func (t *Trajectory) Record(c Call) {
	t.seq++
	c.Label = label(c.Label, c.Tool)
	t.prune(c.At)
	if len(t.calls) >= MaxCalls {
		t.calls = append(t.calls[:0], t.calls[len(t.calls)-MaxCalls+1:]...)
	}
	t.calls = append(t.calls, entry{Call: c, seq: t.seq})
	if c.Private {
		t.markPrivate(c.Tool + " (" + c.Label + ")")
	}
}

// MarkPrivate records that private data reached the session other than
// through a tool's result (recalled memory), described by what.
func (t *Trajectory) MarkPrivate(what string) { t.markPrivate(label(what, "private data")) }

func (t *Trajectory) markPrivate(what string) {
	if !t.private {
		t.private, t.privateAfter = true, t.seq
	}
	t.privateLabel = what
}

// Approved records that the owner approved a card of this rule: the rule
// counts again from the next call on, so the owner is asked once per
// burst rather than on every call after it.
func (t *Trajectory) Approved(rule string) { t.since[rule] = t.seq }

// Check says whether a rule trips on p. The first that trips, in the order
// denied-repeat, fetch-burst, write-spread, is returned.
func (t *Trajectory) Check(p Proposal) (Trip, bool) {
	t.prune(p.At)
	if tr, ok := t.deniedRepeat(p); ok {
		return tr, true
	}
	if tr, ok := t.fetchBurst(p); ok {
		return tr, true
	}
	return t.writeSpread(p)
}

// prune drops the calls older than the window before now.
func (t *Trajectory) prune(now time.Time) {
	from := now.Add(-t.limits.Window)
	i := 0
	for i < len(t.calls) && t.calls[i].At.Before(from) {
		i++
	}
	if i > 0 {
		t.calls = append(t.calls[:0], t.calls[i:]...)
	}
}

// counted returns the calls within the window that rule counts: after the
// owner last approved its card, and for which keep says yes.
func (t *Trajectory) counted(rule string, after uint64, keep func(Call) bool) []entry {
	after = max(after, t.since[rule])
	var out []entry
	for _, e := range t.calls {
		if e.seq > after && keep(e.Call) {
			out = append(out, e)
		}
	}
	return out
}

func (t *Trajectory) deniedRepeat(p Proposal) (Trip, bool) {
	n := t.limits.DeniedRepeat
	if n <= 0 {
		return Trip{}, false
	}
	denied := t.counted(policy.RuleMonitorDeniedRepeat, 0, func(c Call) bool { return c.Denied })
	if len(denied) < n {
		return Trip{}, false
	}
	list := make([]string, 0, len(denied))
	for _, e := range denied {
		list = append(list, e.Label+" ("+e.Rule+")")
	}
	return Trip{Rule: policy.RuleMonitorDeniedRepeat, Evidence: fmt.Sprintf(
		"%d calls were denied in %s (%s); the model may be looking for a way around a limit",
		len(denied), span(denied[0].At, p.At), listed(list))}, true
}

func (t *Trajectory) fetchBurst(p Proposal) (Trip, bool) {
	k := t.limits.FetchBurst
	if k <= 0 || !t.private || !outbound(p.Action) {
		return Trip{}, false
	}
	out := t.counted(policy.RuleMonitorFetchBurst, t.privateAfter, func(c Call) bool { return c.Ran && outbound(c.Action) })
	if len(out)+1 < k {
		return Trip{}, false
	}
	if len(out) == 0 { // fetch_burst = 1: every outbound call of a private session
		return Trip{Rule: policy.RuleMonitorFetchBurst, Evidence: fmt.Sprintf(
			"an outbound call after the session read private data (%s)", t.privateLabel)}, true
	}
	list := make([]string, 0, len(out))
	for _, e := range out {
		list = append(list, e.Label)
	}
	return Trip{Rule: policy.RuleMonitorFetchBurst, Evidence: fmt.Sprintf(
		"outbound call %d in %s after the session read private data (%s); earlier: %s",
		len(out)+1, span(out[0].At, p.At), t.privateLabel, listed(list))}, true
}

func (t *Trajectory) writeSpread(p Proposal) (Trip, bool) {
	m := t.limits.WriteSpread
	if m <= 0 || p.Action != policy.ActionWrite {
		return Trip{}, false
	}
	writes := t.counted(policy.RuleMonitorWriteSpread, 0, func(c Call) bool { return c.Ran && c.Action == policy.ActionWrite })
	var folders []string
	seen := map[string]bool{}
	for _, e := range writes {
		for _, target := range e.Targets {
			if f := Folder(target); !seen[f] {
				seen[f] = true
				folders = append(folders, f)
			}
		}
	}
	if len(folders) < m {
		return Trip{}, false
	}
	return Trip{Rule: policy.RuleMonitorWriteSpread, Evidence: fmt.Sprintf(
		"writes into %d folders in %s (%s)", len(folders), span(writes[0].At, p.At), listed(folders))}, true
}

// outbound reports whether an action reaches out of the machine.
func outbound(a policy.Action) bool { return a == policy.ActionFetch || a == policy.ActionSend }

// Folder is the folder a target path lies in: "notes" for "notes/a.md",
// "docs:x" for "docs:x/y.md", "." for "a.md" in the default root, "docs:"
// for "docs:y.md" at the top of root docs.
func Folder(target string) string {
	if i := strings.LastIndexByte(target, '/'); i >= 0 {
		return target[:i]
	}
	if i := strings.IndexByte(target, ':'); i >= 0 {
		return target[:i+1]
	}
	return "."
}

// label is s on one line, cut to maxLabel runes; def when s is empty.
func label(s, def string) string {
	s, _, _ = strings.Cut(s, "\n")
	s = strings.TrimSpace(s)
	if s == "" {
		s = def
	}
	if utf8.RuneCountInString(s) > maxLabel {
		s = string([]rune(s)[:maxLabel-1]) + "…"
	}
	return s
}

// listed joins the last maxListed items, saying how many came before.
func listed(items []string) string {
	if len(items) > maxListed {
		return fmt.Sprintf("%d more, then %s", len(items)-maxListed, strings.Join(items[len(items)-maxListed:], ", "))
	}
	return strings.Join(items, ", ")
}

// span is the time from the first counted call to the proposal, readable:
// "40s", "3m", "under a second".
func span(from, to time.Time) string {
	d := to.Sub(from)
	switch {
	case d < time.Second:
		return "under a second"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	default:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
}
