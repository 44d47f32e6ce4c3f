// Package chat is the contract between homard's core and a chat-platform
// adapter (Telegram, Discord, Feishu). It holds plain types only: an
// adapter package imports this one and nothing else of homard, and
// internal/app owns everything that decides.
//
// The split of duties:
//
//   - An adapter speaks one platform's API: it receives deliveries, turns
//     each into an Inbound holding what the platform authenticated
//     (sender id, chat id and kind, whether the sender is a bot, whether
//     the bot was mentioned) and hands it to a Sink; it sends, edits and
//     acknowledges what app asks it to. It never decides who a sender is,
//     never reads meaning into message text, never retries a send on its
//     own (the outbox does), and never logs a token or message text.
//   - app decides entry trust (owner, guest, unknown) from an Inbound's
//     platform-authenticated fields and homard's own pairing records —
//     never from text; keeps the inbox and the outbox in SQLite; runs one
//     session per chat; shows approval cards and checks every button
//     press against the card message it recorded.
//
// Text in an Inbound is untrusted: it came from whoever can write to the
// bot. Button data is forgeable: a press proves only that someone pressed
// something; app checks who, where and on which message.
package chat

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Platform names, used in config ([channels.<platform>]), the inbox and
// outbox keys, pairing records and audit records.
const (
	Telegram = "telegram"
	Discord  = "discord"
	Feishu   = "feishu"
)

// Adapter is one bot on one platform.
type Adapter interface {
	// Platform is one of the platform names above.
	Platform() string
	// Info asks the platform who the bot is (Telegram getMe, Discord
	// /users/@me, Feishu bot/v3/info). It is how doctor checks the token
	// and how Run learns the bot's own id (mentions, its own messages).
	Info(ctx context.Context) (BotInfo, error)
	// Run receives deliveries until ctx ends or the connection fails for
	// good. For each delivery it calls sink.Receive and acknowledges the
	// delivery to the platform only after Receive returned nil (Telegram:
	// the next getUpdates offset; Feishu: the ack frame). A Receive error
	// means "not saved": the adapter does not acknowledge, and retries or
	// lets the platform redeliver. Run reconnects with backoff on its own
	// and returns ErrConflict when the platform says another client
	// receives for this bot (Telegram's 409).
	Run(ctx context.Context, sink Sink) error
	// Send delivers one message part. Key is homard's outbox row id: an
	// adapter whose platform has a duplicate-send guard passes it
	// (Discord nonce with enforce_nonce, Feishu uuid). It returns the
	// platform's message id. A *RetryError says when to try again.
	Send(ctx context.Context, m Outbound) (messageID string, err error)
	// Edit replaces a message homard sent (a card answered elsewhere):
	// its text and buttons (none removes them).
	Edit(ctx context.Context, chatID, messageID string, m Outbound) error
	// AckPress acknowledges a button press within the platform's window,
	// showing notice to the presser when not empty.
	AckPress(ctx context.Context, p Press, notice string) error
	// Typing shows that the bot is working in chatID (best effort).
	Typing(ctx context.Context, chatID string) error
	// Leave makes the bot leave a group chat.
	Leave(ctx context.Context, chatID string) error
	// MaxChars is the longest text one message may hold (Telegram 4096,
	// Discord 2000); app splits longer replies into parts.
	MaxChars() int
}

// Pushed is implemented by an adapter the platform may push its
// deliveries to over HTTP (Feishu's callback mode) rather than one that
// polls or holds a connection. Behind a load balancer any replica may be
// sent a delivery, so with Pushed true every replica receives (the inbox
// keeps one of each); sending stays with the one replica that holds the
// platform's lease.
type Pushed interface {
	Pushed() bool
}

// Sink receives what an adapter got. Receive must save the delivery
// durably (the inbox) before it returns nil, and returns nil for a
// delivery it already has (a redelivery is not an error). It returns
// quickly: the turn runs elsewhere.
type Sink interface {
	Receive(ctx context.Context, in Inbound) error
}

// BotInfo is the bot's own identity on its platform.
type BotInfo struct {
	ID       string // the bot's user id
	Username string // its handle, without "@", when the platform has one
	Name     string // display name
}

// Kind is what a delivery is.
type Kind string

// Kinds of Inbound.
const (
	// KindMessage is a new message with text.
	KindMessage Kind = "message"
	// KindPress is a button press on a message the bot sent.
	KindPress Kind = "press"
	// KindJoin: the bot was added to a group chat (Telegram my_chat_member,
	// Discord GUILD_CREATE, Feishu bot.added). app may post its notice
	// and leave.
	KindJoin Kind = "join"
	// KindOther is anything app must not act on (an edit, a channel post, a
	// reaction, an unknown event). It is still recorded in the inbox so
	// a redelivery is recognised.
	KindOther Kind = "other"
)

// Inbound is one delivery from a platform, normalised. Every field but
// Text, Quoted and Press.Data comes from the platform's own structured
// fields (authenticated by the platform), never from parsing text.
type Inbound struct {
	Platform string
	// Bot is the receiving bot's id (BotInfo.ID): the inbox key is
	// (Platform, Bot, DeliveryID).
	Bot string
	// DeliveryID identifies this delivery uniquely for the bot: Telegram
	// update_id, Discord message or interaction id, Feishu event_id. A
	// redelivery carries the same id.
	DeliveryID string
	Kind       Kind
	// At is when the platform says it happened (zero when unknown).
	At time.Time

	Chat   Chat
	Sender Sender

	// MessageID is the platform's id of the message (for a reply to it,
	// and for "a reply to the bot's own message").
	MessageID string
	// Text is the message text, untrusted. Mentions of the bot are left
	// in; app does not read meaning into them.
	Text string
	// Mentioned: the platform marks the bot as explicitly mentioned in
	// this message (an entity or mention list naming the bot's id), or the
	// message replies to one of the bot's own messages.
	Mentioned bool
	// Quoted is forwarded, quoted or link-preview text attached to the
	// message: untrusted data, never instructions, never the sender's own
	// words.
	Quoted string
	// Forwarded: the message was forwarded from elsewhere (its author is
	// not the sender).
	Forwarded bool

	// Lang is the sender's language as the platform states it (Telegram
	// from.language_code such as "zh-hans", Discord's interaction
	// locale), empty where the platform gives none. The chat core keeps
	// it as the chat's language for its cards and notices.
	Lang string

	// Press is set when Kind is KindPress.
	Press *Press
}

// Chat is where a delivery happened.
type Chat struct {
	ID string
	// Direct: a one-to-one chat between the sender and the bot (Telegram
	// private chat, Discord DM, Feishu p2p chat). Anything else (groups,
	// supergroups, channels, guild channels, threads) is not direct.
	Direct bool
	// Title is a group's name for people (untrusted; may be empty).
	Title string
	// Group is the group that holds this chat on a platform where a
	// group holds many chats (Discord: the guild of a guild channel; a
	// KindJoin's ID and Group are both the guild id). Empty where the
	// chat is the group (Telegram, Feishu) and in direct chats. An
	// allow-list of groups matches Group when it is set, ID otherwise.
	// (Added for Discord; Discord's Leave takes either id.)
	Group string
}

// Sender is who sent a delivery, as the platform authenticated it.
type Sender struct {
	// ID is the platform's user id (Telegram from.id, Discord author.id,
	// Feishu sender_id.open_id). Empty when the platform names no user
	// (a channel post, an anonymous group admin).
	ID string
	// Name is a display name for people (untrusted).
	Name string
	// Bot: the sender is a bot, a webhook or an app, not a person.
	Bot bool
	// IsChat: in a direct chat, the platform states that the sender is
	// the chat's own user (Telegram: from.id equals chat.id and there is
	// no sender_chat, business_connection_id or via_bot; Discord: a DM
	// channel whose recipient is the author and no webhook_id; Feishu:
	// chat_type p2p and sender_type user). Only such a sender can be an
	// owner.
	IsChat bool
}

// Press is a button press.
type Press struct {
	// ID is what AckPress needs (Telegram callback_query id, Discord
	// interaction id and token, Feishu card action token).
	ID string
	// Token is a second value some platforms need to answer (Discord's
	// interaction token); empty otherwise.
	Token string
	// MessageID is the message whose button was pressed, as the
	// platform reports it.
	MessageID string
	// Data is the button's data as the platform returned it: forgeable.
	Data string
}

// Outbound is one message part to send or an edit.
type Outbound struct {
	ChatID string
	// Text is plain text; the adapter sends it with no markup parsing
	// (Telegram: no parse_mode; Discord: allowed_mentions empty; Feishu:
	// <at> and other tags escaped), link previews off.
	Text string
	// ReplyTo is a message id to reply to (empty: none).
	ReplyTo string
	// Buttons, when set, are native buttons under the message (Telegram
	// inline keyboard, Discord components, Feishu card actions), one row.
	Buttons []Button
	// Key is homard's outbox row id, for platforms with a duplicate-send
	// guard.
	Key string
}

// Button is one native button.
type Button struct {
	Label string // shown to people
	Data  string // returned in Press.Data (≤ 64 bytes: Telegram's limit)
}

// MaxButtonData is the longest Button.Data every platform accepts.
const MaxButtonData = 64

// ErrConflict: another client receives for this bot (Telegram answers
// 409 to getUpdates). doctor reports it; Run stops.
var ErrConflict = errors.New("another client is receiving updates for this bot")

// ErrUnauthorized: the platform refused the token (401/403 on Info).
var ErrUnauthorized = errors.New("the platform refused the bot token")

// RetryError is a send the platform refused for now (429, 5xx, a network
// failure): try again after After (the platform's retry_after when it
// gave one; zero: the outbox's own backoff).
type RetryError struct {
	After time.Duration
	Err   error
}

func (e *RetryError) Error() string {
	if e.After > 0 {
		return fmt.Sprintf("%v (retry after %s)", e.Err, e.After)
	}
	return fmt.Sprintf("%v (retry later)", e.Err)
}

func (e *RetryError) Unwrap() error { return e.Err }
