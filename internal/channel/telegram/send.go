package telegram

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/homard/homard/internal/channel/chat"
)

// notModified starts the description Telegram gives an edit that changes
// nothing (the card was already edited, or a retry of one that landed).
const notModified = "Bad Request: message is not modified"

type linkPreview struct {
	IsDisabled bool `json:"is_disabled"`
}

type replyParameters struct {
	MessageID                int64 `json:"message_id"`
	AllowSendingWithoutReply bool  `json:"allow_sending_without_reply"`
}

type inlineButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

type inlineKeyboard struct {
	InlineKeyboard [][]inlineButton `json:"inline_keyboard"`
}

// sendParams is sendMessage's body. There is no parse_mode: text is plain,
// so nothing in it is read as markup.
type sendParams struct {
	ChatID             int64            `json:"chat_id"`
	Text               string           `json:"text"`
	LinkPreviewOptions linkPreview      `json:"link_preview_options"`
	ReplyParameters    *replyParameters `json:"reply_parameters,omitempty"`
	ReplyMarkup        *inlineKeyboard  `json:"reply_markup,omitempty"`
}

type editParams struct {
	ChatID             int64           `json:"chat_id"`
	MessageID          int64           `json:"message_id"`
	Text               string          `json:"text"`
	LinkPreviewOptions linkPreview     `json:"link_preview_options"`
	ReplyMarkup        *inlineKeyboard `json:"reply_markup"`
}

// Send posts one message part with sendMessage: plain text, link previews
// off, a reply when m.ReplyTo is set (sent even if that message is gone),
// buttons as one row of an inline keyboard. It returns the message_id.
//
// Telegram has no duplicate-send guard (m.Key is not sent): if homard
// stops between Telegram's answer and the outbox noting it, the part is
// sent again. A 429 is a *chat.RetryError with Telegram's retry_after,
// a 5xx or a network failure one with no delay; any other refusal (400,
// 403 when the user blocked the bot) is a plain error.
func (b *Bot) Send(ctx context.Context, m chat.Outbound) (string, error) {
	p := sendParams{Text: m.Text, LinkPreviewOptions: linkPreview{IsDisabled: true}}
	var err error
	if p.ChatID, err = parseID("chat id", m.ChatID); err != nil {
		return "", err
	}
	if err := checkText("sendMessage", m.Text); err != nil {
		return "", err
	}
	if m.ReplyTo != "" {
		id, err := parseID("reply-to message id", m.ReplyTo)
		if err != nil {
			return "", err
		}
		p.ReplyParameters = &replyParameters{MessageID: id, AllowSendingWithoutReply: true}
	}
	if len(m.Buttons) > 0 {
		if p.ReplyMarkup, err = keyboard("sendMessage", m.Buttons); err != nil {
			return "", err
		}
	}
	var sent message
	if err := b.call(ctx, "sendMessage", p, &sent); err != nil {
		return "", retryable(ctx, err)
	}
	if sent.MessageID == 0 {
		return "", errorf("sendMessage", "the answer names no message_id")
	}
	return idString(sent.MessageID), nil
}

// Edit replaces the text and buttons of a message the bot sent with
// editMessageText; no buttons removes the keyboard. An edit that changes
// nothing ("message is not modified") is a success.
func (b *Bot) Edit(ctx context.Context, chatID, messageID string, m chat.Outbound) error {
	p := editParams{Text: m.Text, LinkPreviewOptions: linkPreview{IsDisabled: true}}
	var err error
	if p.ChatID, err = parseID("chat id", chatID); err != nil {
		return err
	}
	if p.MessageID, err = parseID("message id", messageID); err != nil {
		return err
	}
	if err := checkText("editMessageText", m.Text); err != nil {
		return err
	}
	// An empty inline_keyboard states "no buttons" rather than relying on
	// an omitted field.
	p.ReplyMarkup = &inlineKeyboard{InlineKeyboard: [][]inlineButton{}}
	if len(m.Buttons) > 0 {
		if p.ReplyMarkup, err = keyboard("editMessageText", m.Buttons); err != nil {
			return err
		}
	}
	err = b.call(ctx, "editMessageText", p, nil)
	var api *APIError
	if errors.As(err, &api) && api.Code == 400 && strings.HasPrefix(api.Description, notModified) {
		return nil
	}
	return retryable(ctx, err)
}

// AckPress answers the callback query (Telegram stops the button's
// spinner), showing notice to the presser when not empty.
func (b *Bot) AckPress(ctx context.Context, p chat.Press, notice string) error {
	params := struct {
		ID   string `json:"callback_query_id"`
		Text string `json:"text,omitempty"`
	}{p.ID, notice}
	if p.ID == "" {
		return errorf("answerCallbackQuery", "the press has no callback query id")
	}
	return retryable(ctx, b.call(ctx, "answerCallbackQuery", params, nil))
}

// Typing shows "typing…" in chatID for about five seconds.
func (b *Bot) Typing(ctx context.Context, chatID string) error {
	return b.chatCall(ctx, "sendChatAction", chatID, "typing")
}

// Leave makes the bot leave a group, supergroup or channel.
func (b *Bot) Leave(ctx context.Context, chatID string) error {
	return b.chatCall(ctx, "leaveChat", chatID, "")
}

// chatCall calls a method whose only parameters are the chat and, for
// sendChatAction, the action ("" leaves the key out).
func (b *Bot) chatCall(ctx context.Context, method, chatID, action string) error {
	id, err := parseID("chat id", chatID)
	if err != nil {
		return err
	}
	params := struct {
		ChatID int64  `json:"chat_id"`
		Action string `json:"action,omitempty"`
	}{id, action}
	return retryable(ctx, b.call(ctx, method, params, nil))
}

// checkText refuses what Telegram would refuse with a 400: no text, or
// more than MaxChars UTF-16 units (the core splits with chat.Split).
func checkText(method, text string) error {
	if strings.TrimSpace(text) == "" {
		return errorf(method, "the text is empty")
	}
	if n := chat.UTF16Len(text); n > MaxChars {
		return errorf(method, "the text is %d UTF-16 units, over Telegram's %d: split it with chat.Split", n, MaxChars)
	}
	return nil
}

// keyboard is one row of callback buttons. Telegram takes 1 to 64 bytes
// of callback_data; longer data is refused here rather than cut.
func keyboard(method string, buttons []chat.Button) (*inlineKeyboard, error) {
	row := make([]inlineButton, 0, len(buttons))
	for _, bt := range buttons {
		if bt.Data == "" || len(bt.Data) > chat.MaxButtonData {
			return nil, errorf(method, "button %q has %d bytes of data; Telegram takes 1 to %d", bt.Label, len(bt.Data), chat.MaxButtonData)
		}
		if strings.TrimSpace(bt.Label) == "" {
			return nil, fmt.Errorf("telegram %s: a button has no label", method)
		}
		row = append(row, inlineButton{Text: bt.Label, CallbackData: bt.Data})
	}
	return &inlineKeyboard{InlineKeyboard: [][]inlineButton{row}}, nil
}
