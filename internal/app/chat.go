package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"

	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/tui"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/llm"
)

// ChatOptions configure Chat.
type ChatOptions struct {
	// Session is the conversation to resume or start. Empty means "chat".
	Session string
	// In and Out are the terminal.
	In  io.Reader
	Out io.Writer
}

// Chat runs the terminal UI on r until the owner leaves, and returns the
// session the owner was last in (so the caller can say how to resume it),
// or "" when the chat did not start (a session of another owner).
func (r *Runtime) Chat(ctx context.Context, o ChatOptions) (string, error) {
	if o.Session == "" {
		o.Session = "chat"
	}
	rt, _, attached := r.TurnRuntime()
	last, err := tui.Run(ctx, rt, tui.Options{Session: o.Session, In: o.In, Out: o.Out, Lang: lang.ForTurn("", r.Config.Lang, os.Getenv)})
	if !attached {
		// This process ran the turns: capture what waits before it
		// ends (Close waits for it), even when leaving cancelled ctx.
		_ = r.FlushCapture(context.WithoutCancel(ctx))
	}
	return last, err
}

// TurnRuntime is where a front end in another process than `homard serve`
// (`homard run`, `homard chat`) runs its turns. When serve runs on this
// home, it is the serve (attached is true and si describes it): one
// process runs every turn, and a card can be answered in the terminal or
// in a browser tab. Otherwise it is r itself (see Channel), which takes the
// session's lock for each turn, so a session in which another process runs
// a turn is refused with ErrSessionBusy.
func (r *Runtime) TurnRuntime() (rt channel.Runtime, si ServeInfo, attached bool) {
	if remote, si, ok := r.Attached(); ok {
		return remote, si, true
	}
	return r.Channel(), ServeInfo{}, false
}

// Channel returns r as the channel contract a front end talks to; its
// turns run in this process under the session's lock.
func (r *Runtime) Channel() channel.Runtime { return chatRuntime{r} }

// chatRuntime adapts Runtime to channel.Runtime.
type chatRuntime struct{ r *Runtime }

var _ channel.Runtime = chatRuntime{}

func (c chatRuntime) Info() channel.Info {
	info := channel.Info{Model: c.r.mainModel().Name, Mode: c.r.Config.Permissions.Mode, Owner: c.r.Config.Owner, Version: Build().Version}
	if roots := c.r.Config.Workspace.Roots; len(roots) > 0 {
		info.Workspace = roots[0].Path
	}
	return info
}

// Turn runs req under the session's lock, so no other process (a second
// `homard run`, a `homard chat`) runs a turn in the same session at once.
func (c chatRuntime) Turn(ctx context.Context, req channel.TurnRequest) (channel.TurnResult, error) {
	_, session, err := entrySession(req.As, req.Session, "trust")
	if err != nil {
		return channel.TurnResult{}, err
	}
	unlock, err := c.r.LockSession(session)
	if err != nil {
		return channel.TurnResult{}, err
	}
	defer unlock()
	return c.r.Run(ctx, req)
}

// previewBytes caps a tool result's preview; a channel shows its first line.
const previewBytes = 512

// toolEvent describes a call for a channel: arguments redacted and
// compacted, the outcome's plan, reason and the start of its result.
func (r *Runtime) toolEvent(call ToolCall, out *Outcome, step int) channel.ToolEvent {
	ev := channel.ToolEvent{ID: call.ID, Name: call.Name, Args: r.redactor.Redact(compactJSON(call.Args)), Status: channel.Proposed, Step: step}
	if out == nil {
		return ev
	}
	ev.Status = statusOf(out.Decision)
	ev.Plan, ev.Reason, ev.Rule, ev.Artifact = out.Plan, out.Reason, out.Rule, out.Artifact
	if ev.Status == channel.Pending {
		ev.ApprovalID = out.ApprovalID
	}
	if out.Result != nil {
		p := out.Result.Text
		if len(p) > previewBytes {
			p = strings.ToValidUTF8(p[:previewBytes], "")
		}
		ev.Preview = p
		if out.Result.IsError && ev.Status == channel.Ran {
			ev.Status = channel.Failed
		}
	}
	return ev
}

func statusOf(d arbiter.Decision) channel.Status {
	switch d {
	case arbiter.Ran:
		return channel.Ran
	case arbiter.Pending:
		return channel.Pending
	case arbiter.Denied:
		return channel.Denied
	}
	return channel.Failed
}

func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// History returns the owner's earlier conversation in session for display:
// the owner's messages, the answers, and one entry per tool call with the
// decision its result recorded. A session of another owner is refused.
func (c chatRuntime) History(ctx context.Context, session string) ([]channel.Message, error) {
	rows, err := c.r.historyRows(ctx, session, c.r.Config.Owner)
	if err != nil {
		return nil, err
	}
	msgs, err := messages(session, rows)
	if err != nil {
		return nil, err
	}
	// How each call ended is stored as a value on its tool message.
	decided := map[string]channel.Status{}
	for i, m := range msgs {
		if m.Role == llm.RoleTool {
			decided[m.ToolCallID] = storedStatus(rows[i].Status, m.Content)
		}
	}
	var out []channel.Message
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleUser:
			out = append(out, channel.Message{Role: "user", Text: m.Content})
		case llm.RoleAssistant:
			if strings.TrimSpace(m.Content) != "" {
				out = append(out, channel.Message{Role: "assistant", Text: m.Content})
			}
			for _, call := range m.ToolCalls {
				st, ok := decided[call.ID]
				if !ok {
					st = channel.Proposed
				}
				// Stored arguments are already redacted.
				out = append(out, channel.Message{Role: "tool", Tool: call.Name, Text: compactJSON(call.Args), Status: st})
			}
		}
	}
	return out, nil
}

// storedStatus is how a stored call ended: the status stored with its tool
// message, or, for a row stored before migration 0016 kept none, what the
// first line of the text written for the model said ("decision: <d>" from
// agent.render, or "not run: …"). The fallback reads only homard's own
// first line, never model text.
func storedStatus(stored, content string) channel.Status {
	if stored != "" {
		return channel.Status(stored)
	}
	first, _, _ := strings.Cut(content, "\n")
	if d, ok := strings.CutPrefix(first, "decision: "); ok {
		return statusOf(arbiter.Decision(d))
	}
	return channel.Denied
}
