// Package arbiter decides every tool call the model proposes. It runs the
// eleven stages of DESIGN.md §2 in order — lookup, strict decode, prepare,
// hard limits, policy, permission mode, approval, ToolRun, execute, result,
// audit — and nothing reaches a tool any other way.
//
// Contract: Decide never executes anything but the Plan it decided on; every
// proposal, including unknown tools, malformed arguments and denials, leaves
// exactly one hash-chained audit record with its arguments redacted (a run
// whose process died gets it from RecoverInterrupted at the next start); a
// Go error is returned only when homard itself failed (database gone), never
// for something the model did. While homard's records are known to be
// damaged, no Plan with an effect runs (hygiene.go).
package arbiter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/monitor"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/tool"
)

// Decision is the outcome class of one proposal.
type Decision string

// Decisions, as printed by `homard tool call`.
const (
	Ran     Decision = "ran"     // the Plan ran; Result holds its (redacted) output
	Pending Decision = "pending" // waiting for the owner; ApprovalID names the card
	Denied  Decision = "denied"  // refused by a hard limit or policy
	Error   Decision = "error"   // unknown tool, bad arguments, or the tool failed
)

// Caller is who proposed the call. It comes from the channel's
// authentication, never from anything the model wrote.
type Caller struct {
	Owner   string
	Trust   policy.Trust
	Session string
	// Limit, when set, narrows what the caller may do as hard limits no
	// mode, rule or approval lifts (a planner/worker split's worker).
	Limit *Limit
}

// Limit narrows a caller: a split's worker (internal/split).
type Limit struct {
	// Name says who in a refusal: "public worker rate".
	Name string
	// Tools are the only tools it may call.
	Tools []string
	// Hosts, when not nil, are the only hosts an outbound call may
	// reach; nil leaves them to egress.
	Hosts []string
	// NoSecrets refuses a call that sends one of the owner's secrets
	// (a Plan that says PrivateResult: an answer obtained with one).
	NoSecrets bool
	// ToolRule is the rule id of a call to a tool not in Tools; empty
	// means policy.RuleSplitTool (a split's worker).
	ToolRule string
}

// Proposal is one tool call as the model emitted it.
type Proposal struct {
	Tool   string
	Args   json.RawMessage
	Caller Caller
	// Mode overrides the configured permission mode when set.
	Mode policy.Mode
	// Ceiling is the blast ceiling of the scheduled task whose run
	// proposes the call (task.Body.Ceiling): policy denies a Plan above
	// it. The zero Ceiling, every interactive turn's, is none.
	Ceiling policy.Ceiling
	// Refuse, when set, is a refusal the caller decided before proposing
	// (the agent's tool budget, a stopped loop): the proposal is denied
	// with this rule and reason and audited like any other denial, so the
	// audit holds every call the model made. It can only deny; nothing in
	// it lets a call run.
	Refuse *tool.Refusal
}

// Outcome is what the arbiter decided and, if it ran, what came back.
type Outcome struct {
	Decision   Decision `json:"decision"`
	Reason     string   `json:"reason"`
	Rule       string   `json:"rule,omitempty"`
	ApprovalID string   `json:"approval_id,omitempty"`
	Plan       string   `json:"plan,omitempty"`
	PlanHash   string   `json:"plan_hash,omitempty"`
	Risk       string   `json:"risk,omitempty"`
	// Preview is a pending call's card body (tool.Plan.Preview, redacted):
	// a write's diff, a command's argv. Empty unless Decision is Pending.
	Preview string       `json:"preview,omitempty"`
	RunID   string       `json:"run_id,omitempty"`
	Result  *tool.Result `json:"result,omitempty"`
	// Artifact names the artifact holding the whole result when it was too
	// long for the model; Result then holds a preview and a note.
	Artifact string `json:"artifact,omitempty"`
	AuditSeq int64  `json:"audit_seq"`
	// DecideDur is how long the arbiter took to decide: from Decide's
	// start until the tool began to run (stages 1 to 8), or until Decide
	// returned when nothing ran. RunDur is how long the tool ran (stage
	// 9); zero when it did not. The audit write after a run is in
	// neither. Measured on the monotonic clock, not Options.Now: they are
	// for telemetry, never records, and are not serialised.
	DecideDur time.Duration `json:"-"`
	RunDur    time.Duration `json:"-"`
}

// Approvals is what the arbiter needs from the approval service.
type Approvals interface {
	// ConsumeUnchanged consumes an approval for b created after changed
	// (zero: any); see approval.Service.ConsumeUnchanged.
	ConsumeUnchanged(ctx context.Context, b approval.Binding, changed time.Time) (approval.Approval, bool, error)
	MatchGrant(ctx context.Context, owner, session, tool string, targets []string, risk policy.Risk) (approval.Grant, bool, error)
	MatchCommandGrant(ctx context.Context, owner, session, tool string, call policy.Template, risk policy.Risk, inside policy.Inside) (approval.Grant, bool, error)
	Request(ctx context.Context, b approval.Binding, c approval.Card) (approval.Approval, error)
}

// Workspace tells when changes were last applied in the root a Plan
// target names (workspace.(*Workspace).LastApplied). The arbiter lets an
// approval to run the workspace's code lapse when that root changed after
// the card was drawn.
type Workspace interface {
	LastApplied(target string) (time.Time, error)
}

// Redactor removes secrets from text and spots them in arguments.
type Redactor interface {
	Redact(s string) string
	Contains(s string) (kind string, ok bool)
}

// Options configure an Arbiter. Registry, Store, Approvals and Redactor are
// required.
type Options struct {
	Registry  *tool.Registry
	Store     *store.Store
	Approvals Approvals
	Redactor  Redactor
	// Mode is the default permission mode. Zero means smart.
	Mode       policy.Mode
	Rules      []policy.Rule
	GuestTools []string
	// Now is the clock. Zero means time.Now.
	Now func() time.Time
	// MaxResultBytes caps the text returned to the model. Zero means 64 KiB.
	MaxResultBytes int
	// ArtifactChars is the longest result, in characters (runes), handed
	// to the model whole; a longer one is stored as an artifact and the
	// model gets a preview and its id. Zero means 6000; negative turns
	// artifacts off (results are then only cut at MaxResultBytes).
	ArtifactChars int
	// MaxArtifactBytes caps the text kept in one artifact; beyond it the
	// text is cut on a rune boundary with a marker saying how much was
	// kept. Zero means 1 MiB.
	MaxArtifactBytes int
	// MaxAuditArgs caps the redacted arguments kept in an audit record.
	// Zero means 16 KiB; the Plan hash still binds the full arguments.
	MaxAuditArgs int
	// Workspace, when set, makes approvals of Plans that run the
	// workspace's code lapse when a root they run in changed after the
	// card was drawn. Nil turns the lapse off (tests of other stages).
	Workspace Workspace
	// AllowPrivateEgress turns off the private-egress check
	// (permissions.private_egress = "allow"): policy is then never told
	// that a session holds private data. Sessions are still marked, so
	// turning the check back on applies to what they have already read.
	AllowPrivateEgress bool
	// TaintByValue is permissions.taint = "value": an outbound Plan of a
	// private session asks only when its own arguments carry private
	// text the session was shown (taint.go); false asks for every one.
	TaintByValue bool
	// UnknownCommands is config commands.unknown: policy.UnknownSandbox
	// lets autopilot run a command that runs code (in the sandbox, its
	// changes checked before they apply); policy.UnknownAsk, or empty,
	// asks.
	UnknownCommands string
	// CommandSlotInside resolves a path operand of a command against a
	// command grant's slot at run time (symlinks followed, protected
	// paths excluded): see policy.Inside. Nil means no command grant ever
	// covers a command with a path slot.
	CommandSlotInside policy.Inside
	// Monitor holds the monitors' thresholds (config [monitor]): a
	// pattern over a session's recent calls makes the next call ask
	// (stage 5b, monitor.go). The zero Limits turn every monitor off.
	Monitor monitor.Limits
}

// Arbiter is the pipeline. It is safe for concurrent use.
type Arbiter struct {
	o Options
	// owners caches session id → owner for sessions read from or written
	// to the store. A session never changes hands (the store refuses it),
	// so an entry can never go stale; it saves a query per read-only call.
	owners sync.Map
	// private holds the ids of sessions known to hold the owner's private
	// data (value struct{}). Only "private" is cached, never "not
	// private": a session never becomes public again, so an entry cannot
	// go stale, while another process (a CLI call in the same session)
	// may mark a session this one has seen public. A miss reads the store.
	private sync.Map
	// ledgers are the sessions' per-value taint ledgers (taint.go).
	ledgers ledgers
	// monitors are the sessions' recent trajectories (monitor.go).
	monitors monitors
}

// New builds an Arbiter.
func New(o Options) *Arbiter {
	if o.Mode == "" {
		o.Mode = policy.ModeSmart
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxResultBytes == 0 {
		o.MaxResultBytes = 64 << 10
	}
	if o.MaxAuditArgs == 0 {
		o.MaxAuditArgs = 16 << 10
	}
	if o.ArtifactChars == 0 {
		o.ArtifactChars = DefaultArtifactChars
	}
	if o.MaxArtifactBytes == 0 {
		o.MaxArtifactBytes = 1 << 20
	}
	return &Arbiter{o: o, monitors: monitors{limits: o.Monitor}}
}

// Registry returns the tools the arbiter decides for.
func (a *Arbiter) Registry() *tool.Registry { return a.o.Registry }

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return prefix + hex.EncodeToString(b[:])
}
