// Package split runs a task that mixes the owner's data and the open web
// as a planner and workers that never share a context (issue 23): the
// planner sees the owner's task once and writes a plan of items, each
// public (a worker that reads the web: no files, no memory, no secrets)
// or sensitive (a worker that holds the owner's data and may reach only
// the hosts its item names, never an arbitrary page). The owner approves
// the exact plan (its hash). What a worker returns reaches the planner
// only through the typed sanitiser its item declares — a number, a date,
// a URL on an allowlist, yes or no, a short text, or an artifact the
// planner passes on without reading — so a web page cannot talk to the
// planner, and the planner's last call, which writes the owner's answer,
// has no tools at all.
//
// The package holds the plan (strict decoding, validation, hash, display)
// and the run (Run), over small interfaces: a Planner (ModelPlanner: model
// calls without tools) and Workers (AgentWorkers: fresh agent turns). The
// arbiter enforces each worker's limits (Limit) as hard limits; this
// package only declares them.
package split

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

// Item kinds.
const (
	Public    = "public"
	Sensitive = "sensitive"
)

// Return types a worker's answer is sanitised to.
const (
	Number   = "number"
	Date     = "date"
	URL      = "url"
	YesNo    = "yesno"
	Text     = "text"
	Artifact = "artifact"
)

// Limits of a plan.
const (
	MaxItems    = 8
	MaxTaskLen  = 2000
	MaxTextLen  = 200
	MaxHosts    = 8
	maxQuestion = 500
)

// ErrPlan wraps every reason a planner's plan is refused.
var ErrPlan = errors.New("the planner's plan is not valid")

// Plan is what the planner proposes and the owner approves.
type Plan struct {
	// Question, when set, is the planner finding the task ambiguous: it
	// asks the owner instead of planning, and Items is empty.
	Question string `json:"question,omitempty"`
	Items    []Item `json:"items,omitempty"`
}

// Item is one worker's job.
type Item struct {
	// ID names the item: 1-32 of a-z, 0-9, _ and -.
	ID string `json:"id"`
	// Kind is Public or Sensitive.
	Kind string `json:"kind"`
	// Task is the sub-task the worker is given, distilled: the worker
	// sees this, not the owner's task.
	Task string `json:"task"`
	// Hosts are the only hosts a sensitive worker may reach (none: it
	// works on local data only). A public item names none: it reads the
	// web as egress allows, with nothing private to carry.
	Hosts []string `json:"hosts,omitempty"`
	// Returns is what the worker's answer is sanitised to.
	Returns Returns `json:"returns"`
}

// Returns declares a worker's return type.
type Returns struct {
	Type string `json:"type"`
	// Allow lists the hosts a URL may point at (Type URL: required).
	Allow []string `json:"allow,omitempty"`
}

var (
	idRe   = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)
	hostRe = regexp.MustCompile(`^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
)

// Parse decodes a planner's answer strictly (unknown, duplicate or
// mis-cased keys refused) and validates it. The planner may wrap the JSON
// in a Markdown code fence; nothing else around it is accepted.
func Parse(answer string) (Plan, error) {
	s := strings.TrimSpace(answer)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		if body, ok := strings.CutSuffix(strings.TrimSpace(rest), "```"); ok {
			s = strings.TrimSpace(body)
		}
	}
	var p Plan
	if err := tool.DecodeStrict([]byte(s), &p, tool.Limits{MaxBytes: 64 << 10, MaxString: 4 << 10, MaxItems: 64, MaxDepth: 6}); err != nil {
		return Plan{}, fmt.Errorf("%w: %w", ErrPlan, err)
	}
	if err := p.Validate(); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// Validate checks a plan against the rules above, normalising its hosts
// (lower case, sorted, unique).
func (p *Plan) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrPlan}, args...)...)
	}
	if p.Question != "" {
		if len(p.Items) > 0 {
			return bad("a plan asks a question or lists items, not both")
		}
		if len(p.Question) > maxQuestion {
			return bad("the question is longer than %d bytes", maxQuestion)
		}
		return nil
	}
	if len(p.Items) == 0 || len(p.Items) > MaxItems {
		return bad("%d items; want 1 to %d", len(p.Items), MaxItems)
	}
	seen := map[string]bool{}
	for i := range p.Items {
		it := &p.Items[i]
		switch {
		case !idRe.MatchString(it.ID) || seen[it.ID]:
			return bad("item %q: the id is not 1-32 of a-z, 0-9, _ and -, or is used twice", it.ID)
		case it.Kind != Public && it.Kind != Sensitive:
			return bad("item %s: kind %q; want public or sensitive", it.ID, it.Kind)
		case strings.TrimSpace(it.Task) == "" || len(it.Task) > MaxTaskLen:
			return bad("item %s: the task is empty or longer than %d bytes", it.ID, MaxTaskLen)
		case it.Kind == Public && len(it.Hosts) > 0:
			return bad("item %s: a public item names no hosts (it reads the web with nothing private)", it.ID)
		case len(it.Hosts) > MaxHosts:
			return bad("item %s: more than %d hosts", it.ID, MaxHosts)
		}
		seen[it.ID] = true
		var err error
		if it.Hosts, err = hosts(it.Hosts, false); err != nil {
			return bad("item %s: %v", it.ID, err)
		}
		switch it.Returns.Type {
		case Number, Date, YesNo, Text, Artifact:
			if len(it.Returns.Allow) > 0 {
				return bad("item %s: only a url return lists allowed hosts", it.ID)
			}
		case URL:
			if len(it.Returns.Allow) == 0 || len(it.Returns.Allow) > MaxHosts {
				return bad("item %s: a url return lists 1 to %d hosts it may point at", it.ID, MaxHosts)
			}
			if it.Returns.Allow, err = hosts(it.Returns.Allow, true); err != nil {
				return bad("item %s: returns: %v", it.ID, err)
			}
		default:
			return bad("item %s: returns %q; want number, date, url, yesno, text or artifact", it.ID, it.Returns.Type)
		}
	}
	return nil
}

// hosts normalises a host list: lower case, sorted, unique; wild allows
// "*.example.com".
func hosts(in []string, wild bool) ([]string, error) {
	out := make([]string, 0, len(in))
	for _, h := range in {
		h = strings.ToLower(strings.TrimSpace(h))
		if !hostRe.MatchString(h) || (!wild && strings.HasPrefix(h, "*.")) || !strings.Contains(strings.TrimPrefix(h, "*."), ".") && h != "localhost" {
			return nil, fmt.Errorf("host %q: want a host name such as api.example.com", h)
		}
		out = append(out, h)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Hash is the plan's SHA-256, hex: what the owner's approval binds.
func (p Plan) Hash() string {
	b, _ := json.Marshal(p) // a Plan always encodes
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Sensitive reports whether a sensitive item may reach a host: private
// data may then leave the machine, to the hosts it names.
func (p Plan) Sensitive() bool {
	for _, it := range p.Items {
		if it.Kind == Sensitive && len(it.Hosts) > 0 {
			return true
		}
	}
	return false
}

// Risk is how much approving the plan risks: high when a sensitive item
// may reach a host (the owner's data may leave, to the hosts it names),
// medium otherwise. permissions.totp compares it like a card's.
func (p Plan) Risk() policy.Risk {
	if p.Sensitive() {
		return policy.RiskHigh
	}
	return policy.RiskMedium
}

// Reach is the plan's blast class, its furthest item's, for
// permissions.totp: a public item reads the web (network); a sensitive
// item reads the owner's files (read), and one with hosts may carry what
// it read to them (send).
func (p Plan) Reach() policy.Reach {
	top := policy.ReachRead
	for _, it := range p.Items {
		switch {
		case it.Kind == Public:
			top = max(top, policy.ReachNetwork)
		case len(it.Hosts) > 0:
			top = max(top, policy.ReachSend)
		}
	}
	return top
}

// String shows the plan as a card does: every item, its kind, task,
// hosts and return type, and the hash. Task text is the planner's: the
// caller shows it through termtext.
func (p Plan) String() string {
	if p.Question != "" {
		return "the planner asks: " + p.Question
	}
	var b strings.Builder
	for _, it := range p.Items {
		fmt.Fprintf(&b, "%s  %s  returns %s", it.ID, it.Kind, it.Returns.Type)
		if len(it.Returns.Allow) > 0 {
			fmt.Fprintf(&b, " (on %s)", strings.Join(it.Returns.Allow, ", "))
		}
		switch {
		case it.Kind == Sensitive && len(it.Hosts) > 0:
			fmt.Fprintf(&b, "; your data, may reach only %s", strings.Join(it.Hosts, ", "))
		case it.Kind == Sensitive:
			b.WriteString("; your data, no network")
		default:
			b.WriteString("; the web, nothing of yours")
		}
		fmt.Fprintf(&b, "\n    %s\n", strings.ReplaceAll(strings.TrimSpace(it.Task), "\n", "\n    "))
	}
	fmt.Fprintf(&b, "plan hash %s", p.Hash())
	return b.String()
}
