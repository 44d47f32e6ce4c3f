// Package wire is the JSON shape of the HTTP gateway's turn API
// (docs/API.md): the chat and answer requests, the Server-Sent Events of a
// turn, a session's messages, the runtime's info, the error body and the
// scheduled tasks API (tasks.go) and the owner's view of the isolated
// browser (browser.go). The
// gateway (internal/channel/web) encodes with these types and the attach
// client (internal/app/attach.go) decodes with them, so the two sides
// cannot drift; each type converts to and from its internal/channel value.
// It imports only internal/channel and the standard library.
//
// Field names and order are the wire format: changing one changes the API
// every browser tab, script and attached terminal speaks.
package wire

import (
	"time"

	"github.com/homard/homard/internal/channel"
)

// Names of the events of a turn's stream (POST /api/chat and GET
// /api/sessions/{id}/stream). A stream starts with session, then carries
// delta, tool and approval events in the order the turn made them, and
// ends with done or error.
const (
	EventSession  = "session"  // Session: the turn's session
	EventDelta    = "delta"    // Delta: a fragment of the answer
	EventTool     = "tool"     // Tool: a call proposed or decided
	EventApproval = "approval" // Card: a call waits for the owner
	EventDone     = "done"     // Done: the turn's result
	EventError    = "error"    // Error: the turn failed or was cancelled
)

// ChatRequest is the body of POST /api/chat. An empty Session asks the
// gateway to name a new one.
type ChatRequest struct {
	Session string `json:"session"`
	Message string `json:"message"`
}

// AnswerRequest is the body of POST /api/approvals/{id}: once, session,
// always or deny.
type AnswerRequest struct {
	Choice channel.Choice `json:"choice"`
	// Code is a code from the owner's authenticator app, which approving
	// a card at or above permissions.totp's risk needs.
	Code string `json:"code,omitempty"`
}

// Session is the data of a session event.
type Session struct {
	Session string `json:"session"`
}

// Delta is the data of a delta event.
type Delta struct {
	Text string `json:"text"`
}

// Error is the data of an error event and the body of every error answer.
type Error struct {
	Error string `json:"error"`
}

// Tool is the data of a tool event: a channel.ToolEvent.
type Tool struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Args    string `json:"args"`
	Status  string `json:"status"`
	Plan    string `json:"plan"`
	Reason  string `json:"reason"`
	Preview string `json:"preview"`
	Rule    string `json:"rule,omitempty"`
	Step    int    `json:"step,omitempty"`
	// ApprovalID is set while the call is pending.
	ApprovalID string `json:"approval_id,omitempty"`
	// Artifact is the id of the artifact the result was kept as (GET
	// /api/artifacts/{id}); left out when none.
	Artifact string `json:"artifact,omitempty"`
	// Session is set on the live-event hub (GET /api/events), where
	// events of every session mix; a turn's own stream leaves it out.
	Session string `json:"session,omitempty"`
}

// NewTool is ev on the wire.
func NewTool(ev channel.ToolEvent) Tool {
	return Tool{ID: ev.ID, Name: ev.Name, Args: ev.Args, Status: string(ev.Status), Plan: ev.Plan, Reason: ev.Reason,
		Preview: ev.Preview, Rule: ev.Rule, Step: ev.Step, ApprovalID: ev.ApprovalID, Artifact: ev.Artifact}
}

// Channel is t as a channel value.
func (t Tool) Channel() channel.ToolEvent {
	return channel.ToolEvent{ID: t.ID, Name: t.Name, Args: t.Args, Status: channel.Status(t.Status), Plan: t.Plan,
		Reason: t.Reason, Preview: t.Preview, Rule: t.Rule, Step: t.Step, ApprovalID: t.ApprovalID, Artifact: t.Artifact}
}

// Card is the data of an approval event: a channel.Card and its session.
type Card struct {
	ApprovalID string    `json:"approval_id"`
	Tool       string    `json:"tool"`
	Plan       string    `json:"plan"`
	PlanHash   string    `json:"plan_hash"`
	Risk       string    `json:"risk"`
	Reason     string    `json:"reason"`
	ExpiresAt  time.Time `json:"expires_at"`
	Session    string    `json:"session"`
	// Preview is what the call does (a diff, an argv), cut to a card;
	// PreviewOmitted counts the lines left out; PreviewKind is
	// PreviewKind's.
	Preview        string `json:"preview"`
	PreviewOmitted int    `json:"preview_omitted_lines"`
	PreviewKind    string `json:"preview_kind"`
	// OnceOnly: only once or deny (channel.Card.OnceOnly).
	OnceOnly bool `json:"once_only"`
	// NoAlways: not always (channel.Card.NoAlways).
	NoAlways bool `json:"no_always,omitempty"`
	// NeedsCode: approving needs a code (channel.Card.NeedsCode).
	NeedsCode bool `json:"needs_code,omitempty"`
	// Covers is what a session or always answer would cover.
	Covers string `json:"covers,omitempty"`
}

// NewCard is c, shown in session, on the wire.
func NewCard(c channel.Card, session string) Card {
	return Card{ApprovalID: c.ApprovalID, Tool: c.Tool, Plan: c.Plan, PlanHash: c.PlanHash, Risk: c.Risk,
		Reason: c.Reason, ExpiresAt: c.ExpiresAt, Session: session,
		Preview: c.Preview, PreviewOmitted: c.PreviewOmitted, PreviewKind: PreviewKind(c.Preview, c.PreviewDiff),
		OnceOnly: c.OnceOnly, NoAlways: c.NoAlways, NeedsCode: c.NeedsCode, Covers: c.Covers}
}

// Channel is c as a channel value.
func (c Card) Channel() channel.Card {
	return channel.Card{ApprovalID: c.ApprovalID, Tool: c.Tool, Plan: c.Plan, PlanHash: c.PlanHash, Risk: c.Risk,
		Reason: c.Reason, ExpiresAt: c.ExpiresAt,
		Preview: c.Preview, PreviewOmitted: c.PreviewOmitted, PreviewDiff: c.PreviewKind == "diff", OnceOnly: c.OnceOnly, NoAlways: c.NoAlways, NeedsCode: c.NeedsCode, Covers: c.Covers}
}

// PreviewKind says how a client shows a preview: "diff" (it may colour
// the "+", "-" and "@@" lines), "text", or "" when there is none.
func PreviewKind(preview string, diff bool) string {
	switch {
	case preview == "":
		return ""
	case diff:
		return "diff"
	}
	return "text"
}

// Usage counts a turn's tokens.
type Usage struct {
	Input  int `json:"input"`
	Output int `json:"output"`
	Cached int `json:"cached"`
}

// Capture counts a session's memory capture calls (channel.CaptureUsage).
type Capture struct {
	Calls int   `json:"calls"`
	Turns int   `json:"turns"`
	Usage Usage `json:"usage"`
}

// Done is the data of a done event: a channel.TurnResult and its session.
type Done struct {
	Text     string   `json:"text"`
	Pending  []string `json:"pending"` // never null
	Usage    Usage    `json:"usage"`
	Calls    int      `json:"calls"`
	Units    int      `json:"units"`
	MaxCalls int      `json:"max_calls"`
	MaxUnits int      `json:"max_units"`
	Stopped  string   `json:"stopped"`
	Session  string   `json:"session"`
	Capture  Capture  `json:"capture"`
}

// NewDone is res, the result of a turn in session, on the wire.
func NewDone(res channel.TurnResult, session string) Done {
	pending := res.Pending
	if pending == nil {
		pending = []string{}
	}
	return Done{Text: res.Text, Pending: pending, Stopped: res.Stopped, Session: session,
		Usage: Usage{Input: res.Usage.Input, Output: res.Usage.Output, Cached: res.Usage.Cached},
		Calls: res.Calls, Units: res.Units, MaxCalls: res.MaxCalls, MaxUnits: res.MaxUnits,
		Capture: Capture{Calls: res.Capture.Calls, Turns: res.Capture.Turns,
			Usage: Usage{Input: res.Capture.Usage.Input, Output: res.Capture.Usage.Output, Cached: res.Capture.Usage.Cached}}}
}

// Channel is d as a channel value.
func (d Done) Channel() channel.TurnResult {
	return channel.TurnResult{Text: d.Text, Pending: d.Pending, Stopped: d.Stopped,
		Usage: channel.Usage{Input: d.Usage.Input, Output: d.Usage.Output, Cached: d.Usage.Cached},
		Calls: d.Calls, Units: d.Units, MaxCalls: d.MaxCalls, MaxUnits: d.MaxUnits,
		Capture: channel.CaptureUsage{Calls: d.Capture.Calls, Turns: d.Capture.Turns,
			Usage: channel.Usage{Input: d.Capture.Usage.Input, Output: d.Capture.Usage.Output, Cached: d.Capture.Usage.Cached}}}
}

// Message is one entry of GET /api/sessions/{id}/messages.
type Message struct {
	Role   string `json:"role"`
	Text   string `json:"text"`
	Tool   string `json:"tool"`
	Status string `json:"status"`
}

// NewMessage is m on the wire.
func NewMessage(m channel.Message) Message {
	return Message{Role: m.Role, Text: m.Text, Tool: m.Tool, Status: string(m.Status)}
}

// Channel is m as a channel value.
func (m Message) Channel() channel.Message {
	return channel.Message{Role: m.Role, Text: m.Text, Tool: m.Tool, Status: channel.Status(m.Status)}
}

// Info is the body of GET /api/info. Its fields are in alphabetical
// order, as the gateway has always sent them.
type Info struct {
	Mode      string `json:"mode"`
	Model     string `json:"model"`
	Owner     string `json:"owner"`
	Version   string `json:"version"`
	Workspace string `json:"workspace"`
}

// NewInfo is i on the wire.
func NewInfo(i channel.Info) Info {
	return Info{Mode: i.Mode, Model: i.Model, Owner: i.Owner, Version: i.Version, Workspace: i.Workspace}
}

// Channel is i as a channel value.
func (i Info) Channel() channel.Info {
	return channel.Info{Model: i.Model, Mode: i.Mode, Workspace: i.Workspace, Owner: i.Owner, Version: i.Version}
}
