package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/bwmarrin/discordgo"

	"github.com/homard/homard/internal/channel/chat"
)

// flagSuppressEmbeds (1<<2) turns link previews off; flagEphemeral (1<<6)
// shows an interaction reply to the presser only.
const (
	flagSuppressEmbeds = 1 << 2
	flagEphemeral      = 1 << 6
)

// Interaction callback types.
const (
	callbackMessage        = 4 // CHANNEL_MESSAGE_WITH_SOURCE
	callbackDeferredUpdate = 6 // DEFERRED_UPDATE_MESSAGE
)

// Component types and the button style homard uses.
const (
	componentRow    = 1
	componentButton = 2
	styleSecondary  = 2
	maxRowButtons   = 5
	maxRows         = 5
	maxLabel        = 80
)

// noMentions is allowed_mentions that pings nobody: no @everyone, no
// role, no user, whatever the text says.
type noMentions struct {
	Parse []string `json:"parse"`
}

type component struct {
	Type       int         `json:"type"`
	Components []component `json:"components,omitempty"`
	Style      int         `json:"style,omitempty"`
	Label      string      `json:"label,omitempty"`
	CustomID   string      `json:"custom_id,omitempty"`
}

type reference struct {
	MessageID       string `json:"message_id"`
	FailIfNotExists bool   `json:"fail_if_not_exists"`
}

type createBody struct {
	Content          string      `json:"content"`
	AllowedMentions  noMentions  `json:"allowed_mentions"`
	Nonce            string      `json:"nonce,omitempty"`
	EnforceNonce     bool        `json:"enforce_nonce,omitempty"`
	MessageReference *reference  `json:"message_reference,omitempty"`
	Components       []component `json:"components,omitempty"`
	Flags            int         `json:"flags"`
}

type editBody struct {
	Content         string      `json:"content"`
	AllowedMentions noMentions  `json:"allowed_mentions"`
	Components      []component `json:"components"` // [] removes the buttons
	Flags           int         `json:"flags"`
}

// buttons turns chat buttons into action rows of at most five buttons.
func buttons(bs []chat.Button) ([]component, error) {
	if len(bs) > maxRowButtons*maxRows {
		return nil, fmt.Errorf("%d buttons; Discord shows at most %d", len(bs), maxRowButtons*maxRows)
	}
	rows := []component{}
	for i, b := range bs {
		if b.Data == "" || len(b.Data) > chat.MaxButtonData {
			return nil, fmt.Errorf("button %d: data must be 1 to %d bytes", i, chat.MaxButtonData)
		}
		label := []rune(b.Label)
		if len(label) == 0 {
			return nil, fmt.Errorf("button %d: empty label", i)
		}
		if len(label) > maxLabel {
			label = append(label[:maxLabel-1], '…')
		}
		if i%maxRowButtons == 0 {
			rows = append(rows, component{Type: componentRow})
		}
		r := &rows[len(rows)-1]
		r.Components = append(r.Components, component{Type: componentButton, Style: styleSecondary, Label: string(label), CustomID: b.Data})
	}
	return rows, nil
}

func checkText(text string) error {
	if n := len([]rune(text)); n > MaxChars {
		return fmt.Errorf("text is %d characters; Discord takes at most %d (split it)", n, MaxChars)
	}
	return nil
}

// Send posts one message to a channel (POST /channels/{id}/messages)
// with allowed_mentions empty, embeds suppressed and, when m.Key is set,
// the nonce for m.Key with enforce_nonce. A 429 or a 5xx is a
// *chat.RetryError.
func (a *Adapter) Send(ctx context.Context, m chat.Outbound) (string, error) {
	const op = "POST /channels/{id}/messages"
	if !snowflake(m.ChatID) || (m.ReplyTo != "" && !snowflake(m.ReplyTo)) {
		return "", fmt.Errorf("discord: %s: channel id %q or reply id %q is not a Discord id", op, m.ChatID, m.ReplyTo)
	}
	if err := checkText(m.Text); err != nil {
		return "", fmt.Errorf("discord: %s: %w", op, err)
	}
	rows, err := buttons(m.Buttons)
	if err != nil {
		return "", fmt.Errorf("discord: %s: %w", op, err)
	}
	body := createBody{
		Content:         m.Text,
		AllowedMentions: noMentions{Parse: []string{}},
		Components:      rows,
		Flags:           flagSuppressEmbeds,
	}
	if m.Key != "" {
		body.Nonce, body.EnforceNonce = nonce(m.Key), true
	}
	if m.ReplyTo != "" {
		body.MessageReference = &reference{MessageID: m.ReplyTo}
	}
	resp, err := a.s.RequestWithBucketID("POST", discordgo.EndpointChannelMessages(m.ChatID), body,
		discordgo.EndpointChannelMessages(m.ChatID), discordgo.WithContext(ctx))
	if err != nil {
		return "", a.fail(op, err, false)
	}
	var sent struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(resp, &sent); err != nil || sent.ID == "" {
		return "", fmt.Errorf("discord: %s: the answer holds no message id", op)
	}
	return sent.ID, nil
}

// Edit replaces a message's text and buttons (PATCH
// /channels/{id}/messages/{id}); no buttons removes them.
func (a *Adapter) Edit(ctx context.Context, chatID, messageID string, m chat.Outbound) error {
	const op = "PATCH /channels/{id}/messages/{id}"
	if !snowflake(chatID) || !snowflake(messageID) {
		return fmt.Errorf("discord: %s: channel id %q or message id %q is not a Discord id", op, chatID, messageID)
	}
	if err := checkText(m.Text); err != nil {
		return fmt.Errorf("discord: %s: %w", op, err)
	}
	rows, err := buttons(m.Buttons)
	if err != nil {
		return fmt.Errorf("discord: %s: %w", op, err)
	}
	body := editBody{Content: m.Text, AllowedMentions: noMentions{Parse: []string{}}, Components: rows, Flags: flagSuppressEmbeds}
	_, err = a.s.RequestWithBucketID("PATCH", discordgo.EndpointChannelMessage(chatID, messageID), body,
		discordgo.EndpointChannelMessage(chatID, ""), discordgo.WithContext(ctx))
	if err != nil {
		return a.fail(op, err, false)
	}
	return nil
}

// AckPress answers a button interaction (POST
// /interactions/{id}/{token}/callback): DEFERRED_UPDATE_MESSAGE, or an
// ephemeral message holding notice when notice is set. Discord requires
// the answer within 3 s of the press.
func (a *Adapter) AckPress(ctx context.Context, p chat.Press, notice string) error {
	const op = "POST /interactions/{id}/{token}/callback"
	if !snowflake(p.ID) || !tokenChars(p.Token) {
		return fmt.Errorf("discord: %s: the press has no valid interaction id or token", op)
	}
	type data struct {
		Content         string     `json:"content"`
		Flags           int        `json:"flags"`
		AllowedMentions noMentions `json:"allowed_mentions"`
	}
	body := struct {
		Type int   `json:"type"`
		Data *data `json:"data,omitempty"`
	}{Type: callbackDeferredUpdate}
	if notice != "" {
		if err := checkText(notice); err != nil {
			return fmt.Errorf("discord: %s: %w", op, err)
		}
		body.Type = callbackMessage
		body.Data = &data{Content: notice, Flags: flagEphemeral | flagSuppressEmbeds, AllowedMentions: noMentions{Parse: []string{}}}
	}
	u := discordgo.EndpointInteractionResponse(p.ID, p.Token)
	_, err := a.s.RequestWithBucketID("POST", u, body, discordgo.EndpointInteractionResponse(p.ID, ""), discordgo.WithContext(ctx))
	if err != nil {
		return a.fail(op, err, false)
	}
	return nil
}

// Typing shows the typing indicator in a channel for about 10 s (POST
// /channels/{id}/typing).
func (a *Adapter) Typing(ctx context.Context, chatID string) error {
	const op = "POST /channels/{id}/typing"
	if !snowflake(chatID) {
		return fmt.Errorf("discord: %s: channel id %q is not a Discord id", op, chatID)
	}
	if err := a.s.ChannelTyping(chatID, discordgo.WithContext(ctx)); err != nil {
		return a.fail(op, err, false)
	}
	return nil
}

// Leave makes the bot leave a guild (DELETE /users/@me/guilds/{id}).
// chatID is a guild id (a KindJoin's Chat.ID) or the id of a guild
// channel the bot has received a message in; Discord has no leaving a
// single channel.
func (a *Adapter) Leave(ctx context.Context, chatID string) error {
	const op = "DELETE /users/@me/guilds/{id}"
	if !snowflake(chatID) {
		return fmt.Errorf("discord: %s: guild id %q is not a Discord id", op, chatID)
	}
	a.mu.Lock()
	guild, ok := a.guilds[chatID]
	a.mu.Unlock()
	if !ok {
		guild = chatID
	}
	if err := a.s.GuildLeave(guild, discordgo.WithContext(ctx)); err != nil {
		var re *discordgo.RESTError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == 404 {
			return fmt.Errorf("discord: %s: HTTP 404: the bot is not in guild %s (a channel id the adapter has not seen a message in?)", op, guild)
		}
		return a.fail(op, err, false)
	}
	return nil
}

// snowflake reports whether id is a Discord id (decimal digits): ids go
// into URL paths, so nothing else may.
func snowflake(id string) bool {
	if id == "" || len(id) > 20 {
		return false
	}
	for _, c := range id {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// tokenChars reports whether an interaction token is safe in a URL path.
func tokenChars(t string) bool {
	if t == "" || len(t) > 500 {
		return false
	}
	for _, c := range t {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			return false
		}
	}
	return true
}
