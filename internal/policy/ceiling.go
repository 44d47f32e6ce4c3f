package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Reach is how far a Plan's effect goes: the effect classes a scheduled
// task's blast ceiling is written in, ordered from harmless to furthest.
// The zero value is no class: as a Ceiling's Reach it means no ceiling.
type Reach int

// Effect classes, in order.
const (
	ReachNone    Reach = iota // no class; a zero Ceiling
	ReachRead                 // reads the workspace or the clock
	ReachWrite                // changes files in the roots, applies a change set, runs a command
	ReachNetwork              // reads from the network (http_get, web_search)
	ReachSend                 // sends data out (messages, an MCP server that reaches the network)
)

// reachNames are the classes' names, as written in a ceiling.
var reachNames = map[Reach]string{ReachRead: "read", ReachWrite: "write", ReachNetwork: "network", ReachSend: "send"}

func (r Reach) String() string {
	if n, ok := reachNames[r]; ok {
		return n
	}
	return fmt.Sprintf("reach(%d)", int(r))
}

// ParseReach reads a class by its name (read, write, network, send).
func ParseReach(s string) (Reach, bool) {
	for r, n := range reachNames {
		if n == s {
			return r, true
		}
	}
	return ReachNone, false
}

// what says what a call of class r does, for a refusal.
func (r Reach) what() string {
	switch r {
	case ReachRead:
		return "reads"
	case ReachWrite:
		return "writes files or runs a command"
	case ReachNetwork:
		return "reaches the network"
	}
	return "sends data out"
}

// ReachOf is the class of a Plan (or, for the lowest ceiling covering a
// tool, of a tool's Spec) with this action, read-only flag and command
// class. Outbound actions are classed by their action whatever ReadOnly
// says (an MCP tool the operator listed read-only still sends its
// arguments to the server); a read-only Plan is a read unless the
// command catalog classed it write or runs code; any other action
// writes at least. An action policy does not know is a send: it fails
// closed, to the highest class.
func ReachOf(act Action, readOnly bool, class Class) Reach {
	switch act {
	case ActionSend:
		return ReachSend
	case ActionFetch:
		return ReachNetwork
	case ActionRead, ActionWrite, ActionExec:
		if readOnly && (class == ClassNone || class == ClassRead) {
			return ReachRead
		}
		return ReachWrite
	}
	return ReachSend
}

// Ceiling is a scheduled task's blast ceiling: the highest class of
// effect its unattended runs may reach. A call above it is refused,
// never asked (Decide, RuleCeilingExceeded). The zero Ceiling is none:
// interactive turns, and tasks sealed before ceilings existed, are
// decided by the other rules only.
type Ceiling struct {
	Reach Reach
	// Hosts, with ReachNetwork only, are the hosts fetches may reach,
	// matched as an operator rule's Host is ("api.example.com",
	// "*.example.org"); none means any host egress allows. Sorted,
	// without repeats, as ParseCeiling returns them.
	Hosts []string
}

// IsZero reports whether c is no ceiling.
func (c Ceiling) IsZero() bool { return c.Reach == ReachNone && len(c.Hosts) == 0 }

// String is c as ParseCeiling reads it: "read", "write", "network",
// "network:a.example,*.example.org", "send"; "" for no ceiling.
func (c Ceiling) String() string {
	if c.IsZero() {
		return ""
	}
	if len(c.Hosts) > 0 {
		return c.Reach.String() + ":" + strings.Join(c.Hosts, ",")
	}
	return c.Reach.String()
}

// ParseCeiling reads a ceiling as `homard task add --ceiling` takes it
// and a task body stores it: read, write, network, network:HOSTS (a
// comma-separated list of lowercase host names or "*.example.org"
// patterns) or send. "" is no ceiling. The hosts come back sorted
// without repeats, so String gives the one canonical spelling.
func ParseCeiling(s string) (Ceiling, error) {
	if s == "" {
		return Ceiling{}, nil
	}
	name, hosts, hasHosts := strings.Cut(s, ":")
	var c Ceiling
	c.Reach, _ = ParseReach(name)
	if c.Reach == ReachNone {
		return Ceiling{}, fmt.Errorf("unknown ceiling %q (want read, write, network, network:HOSTS or send)", s)
	}
	if !hasHosts {
		return c, nil
	}
	if c.Reach != ReachNetwork {
		return Ceiling{}, fmt.Errorf("ceiling %q: only network takes hosts (network:api.example.com,*.example.org)", s)
	}
	for h := range strings.SplitSeq(hosts, ",") {
		if !HostPattern(h) {
			return Ceiling{}, fmt.Errorf("ceiling %q: host %q: want a lowercase host name such as api.weather.example, or *.example.org for any name under it (no scheme, port or path)", s, h)
		}
		c.Hosts = append(c.Hosts, h)
	}
	slices.Sort(c.Hosts)
	c.Hosts = slices.Compact(c.Hosts)
	return c, nil
}

// HostPattern reports whether h is a lowercase host name or IPv4 address
// ("nas", "api.example.com", "192.168.1.20"), or "*." and a name of at
// least two labels ("*.com" would be most of the web): the host of an
// operator rule or of a ceiling. Checked by hand rather than by a regexp:
// Go compiles the counted repetition of a label pattern into a program of
// ~0.3 MB, allocated at every start.
func HostPattern(h string) bool {
	if rest, ok := strings.CutPrefix(h, "*."); ok {
		return hostLabels(rest) >= 2
	}
	return hostLabels(h) >= 1
}

// hostLabels counts the dot-separated labels of a lowercase host name,
// each 1–63 of a-z, 0-9 and inner hyphens; 0 when h is not one.
func hostLabels(h string) int {
	n := 0
	for l := range strings.SplitSeq(h, ".") {
		if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return 0
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return 0
			}
		}
		n++
	}
	return n
}

// Covers is the lowest ceiling that lets a task use tools of these
// classes: the highest of them, network without hosts. No tools: read.
func Covers(reaches ...Reach) Ceiling {
	top := ReachRead
	for _, r := range reaches {
		top = max(top, r)
	}
	return Ceiling{Reach: top}
}

// exceeds returns why a call of class r with these targets is above c,
// or "" when c allows it (or is none). A network call under a ceiling
// with hosts needs every target on one of them; a target whose host
// cannot be read is refused.
func (c Ceiling) exceeds(r Reach, targets []string) string {
	if c.IsZero() {
		return ""
	}
	if r > c.Reach || r <= ReachNone {
		return "this call " + r.what() + "; the task's ceiling is " + c.String()
	}
	if r != ReachNetwork || c.Reach != ReachNetwork || len(c.Hosts) == 0 {
		return ""
	}
	if len(targets) == 0 {
		return "this call reaches the network and names no host; the task's ceiling is " + c.String()
	}
	for _, t := range targets {
		host, ok := targetHost(t)
		if !ok || !slices.ContainsFunc(c.Hosts, func(p string) bool { return MatchHost(p, host) }) {
			if !ok {
				host = "an unreadable host"
			}
			return "this call reaches " + host + ", not one of the task's hosts; the task's ceiling is " + c.String()
		}
	}
	return ""
}
