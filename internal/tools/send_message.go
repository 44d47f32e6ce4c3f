package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

//go:embed send_message.md
var sendMessageDoc string

// maxMessage is the longest message send_message sends, in characters.
const maxMessage = 4000

// Messenger is what send_message needs from the chat channels: the
// platforms it may use, whom the owner confirmed, and the outbox.
type Messenger interface {
	// Platforms are the enabled chat platforms.
	Platforms() []string
	// Trusted reports whether chat on platform may receive a message
	// without asking: one of the owner's paired chats or a recipient the
	// owner confirmed.
	Trusted(ctx context.Context, platform, chat string) (bool, error)
	// Send queues text for chat on platform and, with confirm, records
	// the chat as a confirmed recipient (the owner approved this message
	// to them), in one transaction.
	Send(ctx context.Context, platform, chat, text string, confirm bool) error
}

// SendMessageParams are send_message's arguments.
type SendMessageParams struct {
	Platform string `json:"platform" jsonschema:"telegram, discord or feishu"`
	Chat     string `json:"chat" jsonschema:"the chat's id on the platform"`
	Text     string `json:"text"`
}

// SendMessage is the send_message tool.
type SendMessage struct{ m Messenger }

// NewSendMessage builds send_message over m.
func NewSendMessage(m Messenger) tool.Tool {
	return tool.Adapt[SendMessageParams](&SendMessage{m: m})
}

type sendMessageBody struct {
	Platform string `json:"platform"`
	Chat     string `json:"chat"`
	Text     string `json:"text"`
	New      bool   `json:"new_recipient"`
}

func (t *SendMessage) Spec() tool.Spec {
	return tool.Spec{Name: "send_message", Description: doc(sendMessageDoc), Action: policy.ActionSend, Risk: policy.RiskMedium}
}

func (t *SendMessage) Prepare(ctx context.Context, p SendMessageParams) (tool.Plan, error) {
	switch {
	case !slices.Contains(t.m.Platforms(), p.Platform):
		return tool.Plan{}, tool.InvalidArgs("platform %q: want one of the enabled channels (%s)", p.Platform, strings.Join(t.m.Platforms(), ", "))
	case p.Chat == "" || len(p.Chat) > 64 || strings.ContainsAny(p.Chat, " \t\r\n:/"):
		return tool.Plan{}, tool.InvalidArgs("chat: want the chat's id on %s", p.Platform)
	case strings.TrimSpace(p.Text) == "":
		return tool.Plan{}, tool.InvalidArgs("text: empty")
	case utf8.RuneCountInString(p.Text) > maxMessage:
		return tool.Plan{}, tool.InvalidArgs("text: longer than %d characters", maxMessage)
	}
	trusted, err := t.m.Trusted(ctx, p.Platform, p.Chat)
	if err != nil {
		return tool.Plan{}, err
	}
	who := p.Platform + " chat " + p.Chat
	if !trusted {
		who += " (not confirmed yet)"
	}
	return t.Spec().Plan(tool.PlanSpec{
		Display:      fmt.Sprintf("send to %s: %d characters", who, utf8.RuneCountInString(p.Text)),
		Preview:      p.Text,
		Targets:      []string{p.Platform + ":" + p.Chat},
		NewRecipient: !trusted,
		Body:         sendMessageBody{Platform: p.Platform, Chat: p.Chat, Text: p.Text, New: !trusted},
	})
}

func (t *SendMessage) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b sendMessageBody
	if err := plan.Decode(&b); err != nil {
		return tool.Result{}, err
	}
	// A new recipient's message runs only once the owner approved it
	// (policy asks in every mode): sending it confirms them.
	if err := t.m.Send(ctx, b.Platform, b.Chat, b.Text, b.New); err != nil {
		if errors.Is(err, context.Canceled) {
			return tool.Result{}, err
		}
		return tool.Result{Text: "not sent: " + err.Error(), IsError: true}, nil
	}
	msg := "queued for " + b.Platform + " chat " + b.Chat + " (the running homard serve sends it)"
	if b.New {
		msg += "; the owner confirmed this recipient"
	}
	return tool.Result{Text: msg}, nil
}
