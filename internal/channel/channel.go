// Package channel is the contract between homard's core and a front end
// that talks with the owner (the terminal UI today; web and chat channels
// later). It holds plain types only: a channel package imports this one and
// nothing else of homard, and internal/app adapts its Runtime to Runtime.
//
// Contract: everything in a ToolEvent, a Card, a Message or a TurnResult
// that came from the model or a tool is untrusted text; a channel shows it
// as inert text (no terminal escapes, no markup it did not expect). The
// owner's identity never comes from here: the Runtime knows who the owner
// is. Ask is the only way a channel approves anything, and it answers for
// exactly the call on the Card it was shown.
package channel

import (
	"context"
	"strings"
	"time"
)

// Runtime is what a channel needs from homard.
type Runtime interface {
	// Turn runs one turn of the owner's conversation in req.Session. It
	// returns ctx.Err() when ctx ends (the model stream and a running tool
	// stop; nothing of the turn is stored).
	Turn(ctx context.Context, req TurnRequest) (TurnResult, error)
	// History returns the earlier conversation of session, oldest first,
	// for showing a resumed session. An unknown session has none; a
	// session of another owner is refused with an error.
	History(ctx context.Context, session string) ([]Message, error)
	// Info describes the runtime for a header line.
	Info() Info
}

// Info describes a runtime to the owner.
type Info struct {
	Model     string // model name
	Mode      string // permission mode: safe, smart, autopilot, yolo
	Workspace string // the first workspace root's path
	Owner     string // the owner's id
	Version   string // homard's version
}

// TurnRequest is one turn to run: one message and the hooks that show the
// turn as it runs. It is the one turn contract of every front end (the
// TUI, `homard run`, the HTTP gateway, the attach client, chat channels).
// The hooks are called on the turn's goroutine, one at a time.
type TurnRequest struct {
	// Session is the conversation to continue. Empty means "cli" (for a
	// guest or a stranger, "cli-guest" or "cli-unknown").
	Session string
	// Text is the message; it must not be empty.
	Text string
	// As is the entry trust of whoever sent Text: "owner", "guest" (a
	// group chat, a paired guest) or "unknown". Empty means owner. It is
	// decided by internal/app from the entry's authentication, never by a
	// channel package and never from message text: a channel that
	// authenticated only the owner leaves it empty. Only the owner's
	// turns read memory and feed it; a guest's or stranger's turn is
	// recorded under their own identity and never sees the owner's
	// sessions.
	As string
	// OnText, when set, receives fragments of the answer as they stream.
	OnText func(string)
	// OnTool, when set, is told about each tool call when it is proposed
	// and again when it is decided (same ID).
	OnTool func(ToolEvent)
	// Ask, when set, is called for each call that needs the owner's
	// approval; the turn waits for it. It must return when ctx ends. The
	// Runtime records the returned Choice (see Choice); without Ask, a
	// call that needs approval is left pending.
	Ask func(ctx context.Context, c Card) (Choice, error)
	// MaxCalls, when positive, lowers the turn's tool-call budget
	// (agent.max_calls; the owner's /budget N in homard chat). It never
	// raises it.
	MaxCalls int
	// NoTools offers the model no tool this turn, and refuses any call it
	// makes anyway (limit.tools-off): the owner's /tools off, for text
	// relayed from somewhere untrusted.
	NoTools bool
	// Lang is the language the owner reads in this turn's channel ("zh",
	// "en"; a chat's language). Empty means the config's lang (auto: the
	// environment's). Chinese adds one line to the system prompt; English
	// adds nothing.
	Lang string
}

// Status is where a tool call stands.
type Status string

// Statuses of a ToolEvent.
const (
	Proposed Status = "proposed" // the model asked; not decided yet
	Ran      Status = "ran"      // run, and it succeeded
	Pending  Status = "pending"  // waits for the owner's approval
	Denied   Status = "denied"   // refused (hard limit, policy, the owner or a budget)
	Failed   Status = "error"    // invalid, or ran and failed
)

// ToolEvent is one tool call as it is proposed and decided.
type ToolEvent struct {
	ID     string // the model's call id; events of one call share it
	Name   string // tool name
	Args   string // the arguments, redacted and compacted
	Status Status
	// Plan is the exact action the arbiter decided on (empty while
	// proposed or when the arguments were rejected).
	Plan string
	// Reason says why it was asked, denied or failed.
	Reason string
	// Rule is the id of the rule that decided (such as "mode.smart.read"
	// or "budget.calls"); empty while proposed.
	Rule string
	// Step is the model call of the turn, from 1, that proposed the call.
	Step int
	// ApprovalID is the approval a pending call waits for.
	ApprovalID string
	// Preview is the start of the tool's result, redacted.
	Preview string
	// Artifact is the id of the artifact the call's result was kept as
	// (the whole result, or a file such as a screenshot); "" when none.
	// ArtifactReader reads it.
	Artifact string
}

// Card is a call waiting for the owner's approval during a turn.
type Card struct {
	ApprovalID string
	Tool       string
	// Plan is the exact plan that runs if approved, as shown to people.
	Plan string
	// PlanHash is "sha256:<hex>" of the canonical plan the approval binds.
	PlanHash string
	Risk     string // low, medium, high or critical
	Reason   string // why homard asks
	// ExpiresAt is when the approval lapses; zero when unknown.
	ExpiresAt time.Time
	// Preview is what the call does, computed by homard from the plan: a
	// write's unified diff, a command's argv, a fetch's URL. It is cut
	// to what a card shows (200 lines, 16 KiB); PreviewOmitted counts the
	// lines left out (`homard approval show ID --full` has them all).
	Preview        string
	PreviewOmitted int
	// PreviewDiff says Preview is a unified diff: a channel may colour
	// its "+", "-" and "@@" lines.
	PreviewDiff bool
	// OnceOnly says the call may only be approved once or denied: the
	// approval service's own rule (approval.Approval.OnceOnly: a critical
	// plan, a command that runs code, a call asked by a scheduled task's
	// run or by a paired MCP client). A channel offers Allows' choices,
	// and refuses any other answer in place; the approval service refuses
	// them anyway.
	OnceOnly bool
	// NoAlways says the call may not be approved always
	// (approval.Approval.NoAlways: a command that runs code, which a
	// session answer covers at most). Allows refuses Always for it.
	NoAlways bool
	// NeedsCode says approving the call needs a code from the owner's
	// authenticator app (permissions.totp): a channel that cannot take
	// one says where to approve (the web UI, `homard approval approve ID
	// --code CODE`); Deny works everywhere.
	NeedsCode bool
	// Covers is what a session or always answer would let run without
	// asking (approval.Approval.Covers): "docs/**", "commands like cp
	// notes.txt ‹new name in ./›". Channels show it next to those choices.
	Covers string
}

// CoversShown reports whether the plan already says what a grant covers
// (a command's plan names its argv template), so a channel need not say
// it twice.
func (c Card) CoversShown() bool {
	t, ok := strings.CutPrefix(c.Covers, "commands like ")
	return ok && strings.Contains(c.Plan, t)
}

// Critical reports whether the card's plan is critical: it may only be
// approved once or denied.
func (c Card) Critical() bool { return c.Risk == "critical" }

// Choice is the owner's answer to a Card.
type Choice string

// Choices. Leave keeps the call pending: the model is told it waits, and
// the owner may approve it later (`homard approval approve ID`).
//
// Recorded and Lapsed are for a channel that does not take the answer
// itself but waits while someone else records it (the HTTP gateway: a
// browser tab, another API client or `homard approval approve`):
// Recorded means the card is no longer pending because an answer was
// recorded elsewhere; the Runtime records nothing and proposes the call
// again, so it runs only if a real approval exists. Lapsed means no one
// answered while the turn waited: the call stays pending and the model is
// told it was not approved.
const (
	Once     Choice = "once"
	Session  Choice = "session"
	Always   Choice = "always"
	Deny     Choice = "deny"
	Leave    Choice = ""
	Recorded Choice = "recorded"
	Lapsed   Choice = "lapsed"
)

// Approves reports whether c approves the call (Once, Session or Always).
func (c Choice) Approves() bool { return c == Once || c == Session || c == Always }

// Allows reports whether the owner may answer the card with ch: a
// critical or once-only card may only be approved once or denied (or
// left pending), and a NoAlways card not always. Every channel derives
// the choices it offers from it.
func (c Card) Allows(ch Choice) bool {
	return allows(ch, c.Critical() || c.OnceOnly, c.NoAlways)
}

// allows is Card.Allows and Approval.Allows.
func allows(ch Choice, onceOnly, noAlways bool) bool {
	switch ch {
	case Session:
		return !onceOnly
	case Always:
		return !onceOnly && !noAlways
	}
	return true
}

// ParseChoice reads an answer the owner typed: once, session, always or
// deny (the wire strings), their first letters, or n / no for deny; case
// and surrounding space do not matter. An empty answer is Leave. ok is
// false for anything else.
func ParseChoice(s string) (c Choice, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return Leave, true
	case "o", "once":
		return Once, true
	case "s", "session":
		return Session, true
	case "a", "always":
		return Always, true
	case "d", "deny", "n", "no":
		return Deny, true
	}
	return Leave, false
}

// TurnResult is what a turn produced.
type TurnResult struct {
	Text string
	// Pending lists the approval ids the turn waits for.
	Pending []string
	Usage   Usage
	// Calls and Units are the tool budget this turn spent, of MaxCalls
	// and MaxUnits.
	Calls, Units       int
	MaxCalls, MaxUnits int
	// Stopped says why the loop stopped early; empty when the model
	// answered on its own.
	Stopped string
	// Capture is the session's memory capture so far: one capture call
	// covers several turns and runs after them, so a turn's own capture
	// shows in a later result. Zero for a guest's turn.
	Capture CaptureUsage
}

// CaptureUsage counts a session's memory capture calls and their tokens.
type CaptureUsage struct {
	Calls int // capture calls the model answered
	Turns int // the turns they covered
	Usage Usage
}

// Usage counts the tokens of a turn.
type Usage struct {
	Input      int // prompt tokens, cached ones included
	Output     int
	Cached     int // of Input, read from the provider's prompt cache
	CacheWrite int // of Input, written to the provider's prompt cache
}

// Message is one entry of an earlier conversation.
type Message struct {
	// Role is "user", "assistant" or "tool".
	Role string
	// Text is the message; for a tool call, its arguments.
	Text string
	// Tool and Status are set when Role is "tool".
	Tool   string
	Status Status
}
