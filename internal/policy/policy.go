// Package policy makes the arbiter's pure decisions: given what a Plan does
// (its action and risk), who asked (entry trust), the permission mode and the
// operator's rules, it returns Allow, Ask or Deny with a reason and a rule id.
//
// Contract: no I/O, no clock, no environment. Every input is a value and
// every rule is a table test. Hard limits (workspace confinement, secrets in
// arguments, size caps) are enforced before policy runs and cannot be lifted
// here; policy can only make things stricter than the hard limits.
package policy

import (
	"fmt"
	"path"
	"strings"
)

// Action says what kind of effect a Plan has.
type Action string

// Actions known to policy.
const (
	ActionRead  Action = "read"  // reads the workspace or the clock; no effect
	ActionWrite Action = "write" // changes files in the workspace
	ActionExec  Action = "exec"  // runs a program
	ActionFetch Action = "fetch" // reads from the network
	ActionSend  Action = "send"  // sends data out (messages, posts)
)

// Risk orders how much harm a Plan can do if it is wrong.
type Risk int

// Risk classes, from harmless to must-always-ask.
const (
	RiskLow Risk = iota + 1
	RiskMedium
	RiskHigh
	RiskCritical
)

// riskNames are the risks' names, by Risk: what String writes (and Plan
// hashes) and ParseRisk reads.
var riskNames = [...]string{RiskLow: "low", RiskMedium: "medium", RiskHigh: "high", RiskCritical: "critical"}

func (r Risk) String() string {
	if RiskLow <= r && r <= RiskCritical {
		return riskNames[r]
	}
	return fmt.Sprintf("risk(%d)", int(r))
}

// ParseRisk is the inverse of Risk.String.
func ParseRisk(s string) (Risk, error) {
	for r := RiskLow; r <= RiskCritical; r++ {
		if riskNames[r] == s {
			return r, nil
		}
	}
	return 0, fmt.Errorf("unknown risk %q (want low, medium, high or critical)", s)
}

// Mode is the owner's chosen level of supervision. A mode only chooses
// between running an allowed action at once and asking; it never lifts a
// hard limit and never skips the approval of a critical action.
type Mode string

// Permission modes, from most to least supervised.
const (
	ModeSafe      Mode = "safe"      // only read-only low-risk actions run unasked
	ModeSmart     Mode = "smart"     // plus exact operator allow rules
	ModeAutopilot Mode = "autopilot" // plus an owner's low and medium risk actions
	ModeYolo      Mode = "yolo"      // plus high risk; critical still asks
)

// Modes lists every mode in order of decreasing supervision.
var Modes = []Mode{ModeSafe, ModeSmart, ModeAutopilot, ModeYolo}

// ParseMode validates a mode name.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown mode %q (want safe, smart, autopilot or yolo)", s)
}

// Trust is how far homard trusts the entry a request came through. It comes
// from the channel's authentication, never from message text.
type Trust string

// Entry trust levels. Anything not listed is treated as TrustUnknown.
const (
	TrustOwner Trust = "owner" // the authenticated owner
	TrustGuest Trust = "guest" // a known non-owner (a group chat, a paired guest)
	// TrustPaired is another MCP client using homard as its tool layer
	// (`homard mcp serve`), on the owner's machine: the owner's tools but
	// memory, in a mode never above smart, without the owner's grants.
	// Channels never set it; ParseTrust does not accept it.
	TrustPaired  Trust = "paired"
	TrustUnknown Trust = "unknown" // anyone else; fails closed
)

// Known reports whether t is a trust level the arbiter decides for: the
// ones ParseTrust reads, and paired, which only `homard mcp serve` sets.
func (t Trust) Known() bool {
	switch t {
	case TrustOwner, TrustGuest, TrustUnknown, TrustPaired:
		return true
	}
	return false
}

// ParseTrust validates a trust level name that came from a channel or a
// request: owner, guest or unknown (never paired).
func ParseTrust(s string) (Trust, error) {
	switch Trust(s) {
	case TrustOwner, TrustGuest, TrustUnknown:
		return Trust(s), nil
	}
	return "", fmt.Errorf("unknown trust %q (want owner, guest or unknown)", s)
}

// Verdict is the outcome of a decision.
type Verdict string

// Verdicts.
const (
	Allow Verdict = "allow"
	Ask   Verdict = "ask"
	Deny  Verdict = "deny"
)

// Effect is what an operator rule asks for when it matches.
type Effect = Verdict

// Rule is one operator rule from config. It matches a tool by exact name and,
// when Path is set, the Plan's target paths against a slash-separated glob
// ("notes/**", "*.md"); "**" matches any number of path elements.
type Rule struct {
	ID     string
	Tool   string
	Path   string
	Effect Effect
	// Command, when set, matches a command Plan's full argv — the resolved
	// absolute program path first — element by element with path.Match; a
	// last element "**" matches any remaining arguments. A rule with a
	// Command never matches a Plan without one.
	Command []string
	// Host, when set, matches the host of a web Plan's targets
	// ("https://host[:port]"): an exact lowercase name, or "*.example.com"
	// for any name under example.com (not example.com itself). The port is
	// not compared. Path and Host are never both set (config refuses it).
	Host string
}

// MatchesCommand reports whether r's Command pattern (if any) matches argv.
// It matches the resolved absolute path and every argument, never just the
// first word: ["/usr/bin/git", "status"] does not match "git status -s",
// and "git" alone does not match "/usr/bin/git".
func (r Rule) MatchesCommand(argv []string) bool {
	if len(r.Command) == 0 {
		return true
	}
	if len(argv) == 0 {
		return false
	}
	for i, pat := range r.Command {
		if pat == "**" && i == len(r.Command)-1 {
			return true
		}
		if i >= len(argv) {
			return false
		}
		if ok, err := path.Match(pat, argv[i]); err != nil || !ok {
			return false
		}
	}
	return len(argv) == len(r.Command)
}

// Matches reports whether r applies to a Plan of tool with these targets.
// A rule with a Path never matches a Plan without targets. Otherwise each
// effect errs on its safe side: an Allow rule applies only when every
// target matches its Path; a Deny or Ask rule (or one with an unknown
// effect) applies when any target matches, or when a target is not clean
// (see MatchPath). Were every target required for a denial, adding one
// harmless target to a Plan would slip it past the rule.
func (r Rule) Matches(tool string, targets []string) bool {
	if r.Tool != tool {
		return false
	}
	if r.Host != "" {
		return r.matchesHost(targets)
	}
	if r.Path == "" {
		return true
	}
	if len(targets) == 0 {
		return false
	}
	if r.Effect == Allow {
		for _, t := range targets {
			if !MatchPath(r.Path, t) {
				return false
			}
		}
		return true
	}
	for _, t := range targets {
		if !cleanName(t) || MatchPath(r.Path, t) {
			return true
		}
	}
	return false
}

// matchesHost is Matches for a rule with a Host, with the same safe sides:
// an Allow rule needs every target to be a URL on a matching host; a Deny
// or Ask rule applies when any target is on a matching host or is not a
// URL it can read.
func (r Rule) matchesHost(targets []string) bool {
	if len(targets) == 0 {
		return false
	}
	for _, t := range targets {
		host, ok := targetHost(t)
		switch {
		case r.Effect == Allow && (!ok || !MatchHost(r.Host, host)):
			return false
		case r.Effect != Allow && (!ok || MatchHost(r.Host, host)):
			return true
		}
	}
	return r.Effect == Allow
}

// targetHost returns the lowercase host of a web Plan's target
// "scheme://host[:port]" (an IPv6 literal in brackets keeps them).
func targetHost(t string) (string, bool) {
	_, rest, ok := strings.Cut(t, "://")
	if !ok || rest == "" || strings.ContainsAny(rest, "/?#@ ") {
		return "", false
	}
	host := rest
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return "", false
		}
		return strings.ToLower(host[:end+1]), true
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	if host == "" {
		return "", false
	}
	return strings.ToLower(host), true
}

// MatchHost matches a lowercase host name against a rule's Host: equal,
// or for "*.suffix" any name ending in ".suffix" (at least one label more).
func MatchHost(pattern, host string) bool {
	if suffix, ok := strings.CutPrefix(pattern, "*."); ok {
		return len(host) > len(suffix)+1 && strings.HasSuffix(host, "."+suffix)
	}
	return host == pattern
}

// MatchPath matches a slash-separated path against a glob in which "**"
// stands for any number (including zero) of whole path elements and the
// other elements follow path.Match. It is hand-rolled because path.Match
// has no "**" and the pattern must never match across a "..".
//
// A name that is not clean (an empty, "." or ".." element) never matches:
// targets reach policy already resolved, so anything else is suspect.
func MatchPath(pattern, name string) bool {
	if !cleanName(name) || name == "." {
		return name == "." && pattern == "."
	}
	return matchParts(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

// cleanName reports whether name is "." or has no empty, "." or ".."
// element.
func cleanName(name string) bool {
	if name == "." {
		return true
	}
	for _, p := range strings.Split(name, "/") {
		if p == "" || p == "." || p == ".." {
			return false
		}
	}
	return true
}

// matchParts reports whether the elements of name match those of pat. It
// works from the ends backwards, keeping for each j whether the rest of
// the pattern matches name[j:], so that several "**" cost
// O(len(pat)·len(name)) steps: a backtracking match takes time exponential
// in their number, and the name comes from the model.
func matchParts(pat, name []string) bool {
	ok := make([]bool, len(name)+1) // ok[j]: pat[i+1:] matches name[j:]
	next := make([]bool, len(name)+1)
	ok[len(name)] = true
	for i := len(pat) - 1; i >= 0; i-- {
		if pat[i] == "**" {
			found := false // "**" takes name[j:k] for some k ≥ j
			for j := len(name); j >= 0; j-- {
				found = found || ok[j]
				next[j] = found
			}
		} else {
			next[len(name)] = false
			for j := len(name) - 1; j >= 0; j-- {
				m, err := path.Match(pat[i], name[j])
				next[j] = ok[j+1] && err == nil && m
			}
		}
		ok, next = next, ok
	}
	return ok[0]
}

// Input is everything a decision depends on.
type Input struct {
	Tool     string
	Action   Action
	Risk     Risk
	ReadOnly bool // the Plan has no effect outside reading
	// Class is a command Plan's class from the catalog (ClassNone for
	// every other tool). Read runs in every mode; write follows the risk
	// as any write does; runs code has its own row (decideRunsCode).
	Class Class
	// UnknownCommands is config commands.unknown: UnknownSandbox lets
	// autopilot run a command that runs code; anything else (UnknownAsk,
	// or empty) asks.
	UnknownCommands string
	Targets         []string // root-relative paths the Plan touches, slash-separated
	Command         []string // a command Plan's argv, absolute program path first
	Trust           Trust
	Mode            Mode
	Rules           []Rule   // operator rules, first match wins
	Guest           []string // tools a guest may use; only read-only ones take effect
	// Private says the caller's session already holds the owner's private
	// data (a file, command output or memory entered its context), so an
	// outbound request (ActionFetch, ActionSend) could carry it out. The
	// arbiter leaves it false when the operator turned the check off
	// (permissions.private_egress = "allow").
	Private bool
	// PrivateText, with permissions.taint = "value", says which private
	// text the request's own arguments carry: where it was read and how it
	// is encoded ("the file notes/bank.txt, base64-encoded"). Private is
	// then true; PrivateText empty with Private true is the session mark.
	PrivateText string
	// Ceiling is the blast ceiling of the scheduled task whose run made
	// the call: a Plan whose class (ReachOf) is above it is denied. The
	// zero Ceiling (interactive turns) is none.
	Ceiling Ceiling
	// NewRecipient says the call sends a message to someone the owner
	// has not confirmed yet: it asks in every mode, and no allow rule
	// lifts that (RuleRecipientNew).
	NewRecipient bool
}

// Decision is the answer with its reason and the id of the rule that made it.
type Decision struct {
	Verdict Verdict
	Reason  string
	Rule    string
}

func (d Decision) String() string { return fmt.Sprintf("%s (%s: %s)", d.Verdict, d.Rule, d.Reason) }
