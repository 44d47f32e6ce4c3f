// Package telegram is homard's adapter for the Telegram Bot API: it
// implements chat.Adapter with its own getUpdates long-poll loop (an
// update is confirmed to Telegram, by the next call's offset, only after
// the core saved it), plain-text sends with link previews off, inline
// keyboards for buttons, and edits.
//
// It maps each update from Telegram's structured fields only (chat type,
// from, sender_chat, entities by their UTF-16 offsets) and never reads
// meaning into text. It never logs a token or message text, and its errors
// name the Bot API method, never the URL (which holds the token).
package telegram

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/homard/homard/internal/channel/chat"
)

// DefaultAPIBase is Telegram's own Bot API server.
const DefaultAPIBase = "https://api.telegram.org"

// MaxChars is the longest text of one message, in UTF-16 code units (the
// unit Telegram counts in; chat.UTF16Len).
const MaxChars = 4096

// Options configure a Bot.
type Options struct {
	// Token is the bot token from @BotFather. It goes into request paths
	// only, never into a log line or an error.
	Token string
	// APIBase is the Bot API server. Empty means DefaultAPIBase; a
	// self-hosted Bot API server or a test fake may be set here.
	APIBase string
	// HTTPClient sends the requests. Nil means a client with no overall
	// timeout: each call sets its own deadline.
	HTTPClient *http.Client
	// Logger receives reconnects and retries (never tokens or text). Nil
	// discards.
	Logger *slog.Logger
	// PollTimeout is getUpdates' long-poll timeout. Zero means 30s.
	PollTimeout time.Duration
	// RetryMin and RetryMax bound Run's backoff after a failed poll or a
	// failed Receive. Zero means 1s and 1 minute.
	RetryMin, RetryMax time.Duration
}

// Bot is one Telegram bot. Its methods are safe for concurrent use; run
// one Run at a time per token (a second poller is a conflict).
type Bot struct {
	token   string
	base    string
	client  *http.Client
	log     *slog.Logger
	poll    time.Duration
	backMin time.Duration
	backMax time.Duration
}

var _ chat.Adapter = (*Bot)(nil)

// New returns a bot for o. It sends nothing until called.
func New(o Options) *Bot {
	b := &Bot{
		token:   o.Token,
		base:    strings.TrimRight(o.APIBase, "/"),
		client:  o.HTTPClient,
		log:     o.Logger,
		poll:    o.PollTimeout,
		backMin: o.RetryMin,
		backMax: o.RetryMax,
	}
	if b.base == "" {
		b.base = DefaultAPIBase
	}
	if b.client == nil {
		b.client = &http.Client{}
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.poll <= 0 {
		b.poll = 30 * time.Second
	}
	if b.backMin <= 0 {
		b.backMin = time.Second
	}
	if b.backMax <= 0 {
		b.backMax = time.Minute
	}
	if b.backMax < b.backMin {
		b.backMax = b.backMin
	}
	return b
}

// Platform is chat.Telegram.
func (b *Bot) Platform() string { return chat.Telegram }

// MaxChars is 4096: Telegram's limit, counted in UTF-16 code units.
func (b *Bot) MaxChars() int { return MaxChars }

// Info asks getMe who the bot is. A refused token (401, or 404 for one
// that is malformed) is chat.ErrUnauthorized.
func (b *Bot) Info(ctx context.Context) (chat.BotInfo, error) {
	u, err := b.getMe(ctx)
	if err != nil {
		return chat.BotInfo{}, err
	}
	return chat.BotInfo{ID: idString(u.ID), Username: u.Username, Name: fullName(u)}, nil
}

func (b *Bot) getMe(ctx context.Context) (*user, error) {
	var u user
	if err := b.call(ctx, "getMe", struct{}{}, &u); err != nil {
		if code := apiCode(err); code == http.StatusUnauthorized || code == http.StatusForbidden || code == http.StatusNotFound {
			return nil, unauthorized(err)
		}
		return nil, err
	}
	if u.ID == 0 {
		return nil, errorf("getMe", "the answer names no bot id")
	}
	return &u, nil
}
