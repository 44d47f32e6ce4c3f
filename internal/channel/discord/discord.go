// Package discord is homard's Discord adapter: it implements chat.Adapter
// over Discord's gateway (a websocket, for receiving) and REST API (for
// sending), through github.com/bwmarrin/discordgo.
//
// Its contract is internal/channel/chat's: it reports every message,
// button press and guild join it receives as a chat.Inbound built from
// Discord's own structured fields (author id, guild id, mentions[],
// webhook_id, application_id), never from message text, and decides
// nothing about trust. It sends plain text with allowed_mentions empty,
// link previews (embeds) suppressed, and homard's outbox row id as the
// message nonce with enforce_nonce set, so Discord itself drops a second
// send of the same row (within the few minutes Discord keeps nonces).
//
// REST goes through the session's HTTP client, whose transport rewrites
// discordgo's https://discord.com/api/v9/ prefix to Options.APIBase; the
// gateway URL is whatever GET /gateway at that base answers. Nothing
// rewrites discordgo's package-level endpoint variables, so two adapters
// with different bases (a test's fake and the real platform) can run in
// one process.
//
// The gateway has no acknowledgement: an event whose Sink.Receive fails is
// retried a few times in-process and then dropped with a log line. Discord
// does not redeliver it (a resume replays only what the connection missed,
// not what the application failed to save).
package discord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/homard/homard/internal/channel/chat"
)

// DefaultAPIBase is Discord's REST API root.
const DefaultAPIBase = "https://discord.com/api/v10"

// MaxChars is the longest content one Discord message may hold.
const MaxChars = 2000

// Intents are the gateway intents the adapter asks for: GUILDS (GUILD_CREATE,
// so joins are seen), GUILD_MESSAGES, DIRECT_MESSAGES and MESSAGE_CONTENT.
// MESSAGE_CONTENT is privileged: enable it for the bot in the developer
// portal, or guild messages arrive with empty content.
const Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages |
	discordgo.IntentsDirectMessages | discordgo.IntentMessageContent

// Options configure an Adapter.
type Options struct {
	// Token is the bot token, with or without its "Bot " prefix. It is
	// sent only as the Authorization header and in the gateway's IDENTIFY;
	// no error or log line holds it.
	Token string
	// APIBase is the REST API root. Zero means DefaultAPIBase. A test
	// points it at a discordtest.Server.
	APIBase string
	// HTTPClient carries REST calls; its Transport (nil: http's default)
	// is wrapped by the base-rewriting transport. Zero means a client with
	// a 20 s timeout.
	HTTPClient *http.Client
	// Log receives connection and delivery problems (never message text
	// nor the token). Zero means discard.
	Log *slog.Logger
	// ReceiveTries is how many times one event is handed to Sink.Receive
	// before it is dropped. Zero means 4.
	ReceiveTries int
	// RetryWait is the wait before the second try of a failed Receive; it
	// doubles for each further try. Zero means 250 ms.
	RetryWait time.Duration
	// ReconnectWait is the first wait before reopening a lost gateway
	// connection; it doubles up to ReconnectMax. Zero means 1 s.
	ReconnectWait time.Duration
	// ReconnectMax caps the reconnect wait. Zero means 2 min.
	ReconnectMax time.Duration
}

// Adapter is one Discord bot. Its methods may be called concurrently.
type Adapter struct {
	opts  Options
	token string // without the "Bot " prefix, for redaction
	s     *discordgo.Session
	base  string // APIBase without a trailing slash
	log   *slog.Logger

	mu     sync.Mutex
	botID  string            // guarded by mu: learned by Info or READY
	guilds map[string]string // guarded by mu: channel id → guild id, for Leave
}

var _ chat.Adapter = (*Adapter)(nil)

// discordgoAPI is the prefix of every REST URL discordgo builds.
var discordgoAPI = discordgo.EndpointAPI

// New builds an adapter. It does not touch the network.
func New(o Options) (*Adapter, error) {
	token := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(o.Token), "Bot "))
	if token == "" {
		return nil, errors.New("discord: no bot token: store it in the vault (see docs/CHANNELS.md)")
	}
	if o.APIBase == "" {
		o.APIBase = DefaultAPIBase
	}
	base := strings.TrimRight(o.APIBase, "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("discord: api_base %q is not an http(s) URL", o.APIBase)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.ReceiveTries <= 0 {
		o.ReceiveTries = 4
	}
	if o.RetryWait <= 0 {
		o.RetryWait = 250 * time.Millisecond
	}
	if o.ReconnectWait <= 0 {
		o.ReconnectWait = time.Second
	}
	if o.ReconnectMax <= 0 {
		o.ReconnectMax = 2 * time.Minute
	}
	hc := http.Client{Timeout: 20 * time.Second}
	if o.HTTPClient != nil {
		hc = *o.HTTPClient
	}
	hc.Transport = &rewrite{from: discordgoAPI, to: base + "/", next: hc.Transport}

	s, err := discordgo.New("Bot " + token)
	if err != nil {
		return nil, fmt.Errorf("discord: new session: %w", err)
	}
	s.Client = &hc
	s.Identify.Intents = Intents
	// The outbox retries sends; discordgo must not (it would sleep through
	// a 429 or resend a 502 behind the outbox's back).
	s.ShouldRetryOnRateLimit = false
	s.MaxRestRetries = 0
	// Run owns reconnecting (see Run): discordgo's own loop is a goroutine
	// nobody can stop.
	s.ShouldReconnectOnError = false
	s.ShouldReconnectVoiceOnSessionError = false
	// Events are handled in the gateway's reading goroutine, in order.
	s.SyncEvents = true
	// No cache of guilds, channels or messages.
	s.StateEnabled = false
	// discordgo logs through the standard logger, some levels with event
	// payloads; the adapter logs for itself.
	s.LogLevel = -1
	d := *websocket.DefaultDialer
	d.HandshakeTimeout = 20 * time.Second
	s.Dialer = &d

	return &Adapter{opts: o, token: token, s: s, base: base, log: o.Log, guilds: map[string]string{}}, nil
}

// Platform is chat.Discord.
func (a *Adapter) Platform() string { return chat.Discord }

// MaxChars is Discord's 2,000-character message limit.
func (a *Adapter) MaxChars() int { return MaxChars }

// Info asks GET /users/@me who the bot is.
func (a *Adapter) Info(ctx context.Context) (chat.BotInfo, error) {
	u, err := a.s.User("@me", discordgo.WithContext(ctx))
	if err != nil {
		return chat.BotInfo{}, a.fail("GET /users/@me", err, true)
	}
	a.mu.Lock()
	a.botID = u.ID
	a.mu.Unlock()
	name := u.GlobalName
	if name == "" {
		name = u.Username
	}
	return chat.BotInfo{ID: u.ID, Username: u.Username, Name: name}, nil
}

// rewrite sends discordgo's REST calls to the configured base.
type rewrite struct {
	from, to string
	next     http.RoundTripper
}

func (r *rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	next := r.next
	if next == nil {
		next = http.DefaultTransport
	}
	u := req.URL.String()
	if !strings.HasPrefix(u, r.from) {
		return nil, errors.New("discord: refusing a request outside the configured API base")
	}
	nu, err := url.Parse(r.to + strings.TrimPrefix(u, r.from))
	if err != nil {
		return nil, fmt.Errorf("discord: rewrite URL: %w", err)
	}
	req = req.Clone(req.Context())
	req.URL = nu
	req.Host = nu.Host
	return next.RoundTrip(req)
}

// fail turns a REST error into the contract's errors: a 429 into a
// *chat.RetryError with Discord's retry_after, a 5xx or a network failure
// into a *chat.RetryError for the outbox's backoff, a 401/403 into
// chat.ErrUnauthorized when auth (Info) says so. The result names the
// operation and the status, never a URL (an interaction URL holds its
// token) nor the bot token.
func (a *Adapter) fail(op string, err error, auth bool) error {
	var rl *discordgo.RateLimitError
	var re *discordgo.RESTError
	switch {
	case errors.As(err, &rl):
		after := time.Duration(0)
		if rl.RateLimit != nil && rl.TooManyRequests != nil {
			after = rl.RetryAfter
		}
		return &chat.RetryError{After: after, Err: fmt.Errorf("discord: %s: rate limited (429)", op)}
	case errors.As(err, &re) && re.Response != nil:
		code := re.Response.StatusCode
		what := ""
		if re.Message != nil {
			what = fmt.Sprintf(" (code %d: %s)", re.Message.Code, a.redact(re.Message.Message))
		}
		e := fmt.Errorf("discord: %s: HTTP %d%s", op, code, what)
		switch {
		case code >= 500:
			return &chat.RetryError{Err: e}
		case auth && (code == http.StatusUnauthorized || code == http.StatusForbidden):
			return fmt.Errorf("discord: %s: HTTP %d: %w; check the bot token in the vault", op, code, chat.ErrUnauthorized)
		}
		return e
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("discord: %s: %w", op, err)
	}
	// A network failure, or a 502 (discordgo reports it as plain text):
	// the *url.Error's URL may hold an interaction token, so keep only
	// its cause.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return &chat.RetryError{Err: fmt.Errorf("discord: %s: %s", op, a.redact(err.Error()))}
}

// redact removes the bot token from text bound for an error.
func (a *Adapter) redact(s string) string {
	return strings.ReplaceAll(s, a.token, "[token]")
}

// nonce is the message nonce for an outbox key: Discord takes at most 25
// characters, so a longer key is replaced by the first 25 hex digits of
// its SHA-256 (the same key always gives the same nonce).
func nonce(key string) string {
	if len(key) <= 25 {
		return key
	}
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])[:25]
}
