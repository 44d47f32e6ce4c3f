package chats

import (
	"context"
	"errors"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/store"
)

// Turner runs one turn of the owner's conversation: the front-end
// contract every channel uses (channel.Runtime's Turn).
type Turner interface {
	Turn(ctx context.Context, req channel.TurnRequest) (channel.TurnResult, error)
}

// Splitter runs an owner's "/split TASK" (internal/split): the plan is
// approved as a card answered with ask, and the answer comes back as the
// reply's text. Nil: /split is not available.
type Splitter interface {
	Split(ctx context.Context, session, task string, ask func(context.Context, channel.Card) (channel.Choice, error)) (string, error)
}

// Approvals is what the chat core asks of homard's approvals: read one,
// record the owner's answer to a card (as the web UI and the CLI do),
// deny a guest's call, and wait, through the one approval waiter, until
// one is answered anywhere.
type Approvals interface {
	// Get returns one approval.
	Get(ctx context.Context, id string) (approval.Approval, error)
	// Answer records the configured owner's answer c.
	Answer(ctx context.Context, id string, c channel.Choice) (approval.Approval, error)
	// Deny denies a pending approval as approver.
	Deny(ctx context.Context, id, approver string) (approval.Approval, error)
	// Await waits until approval id is answered anywhere
	// (channel.Recorded) or within passes or it expires
	// (channel.Lapsed); it records nothing.
	Await(ctx context.Context, id string, within, poll time.Duration) (channel.Choice, error)
}

// Deliveries hands the sending of each chat's parts to jobs that any
// replica of a shared store may run (issue 27: automation's river client
// on PostgreSQL; app wires it). chat_outbox stays the queue of record: a
// job only names a chat, and its work is the drain Work is given, which
// sends that chat's due parts in the order they were queued, under the
// chat's lock. A build without -tags postgres has no Deliveries: its
// outbox loop sends every part itself whatever Options say.
type Deliveries interface {
	// Work makes drain the work of this replica's chat jobs; Run calls
	// it once, before it queues any.
	Work(drain func(ctx context.Context, platform, chatID string) (next time.Time, err error))
	// Deliver queues a job that drains chatID on platform, unless one
	// waits to start already (a job that has started may have passed
	// the part just queued, so a new one is queued next to it).
	Deliver(ctx context.Context, platform, chatID string) error
}

// Redactor hides known secrets and secret patterns in text.
type Redactor interface{ Redact(s string) string }

// Tokens releases a channel's secrets from the vault: the value of the
// secret name, stored with --channel for platform (secrets.ErrNoSecret
// when there is none).
type Tokens interface {
	ChannelToken(name, platform string) (string, error)
}

// Deps are what the chat core is built on. Every field must be set but
// BadRequest.
type Deps struct {
	Store *store.Store
	// Config is homard's configuration, read at each use: the channels'
	// sections and gateway.approval_wait.
	Config *config.Config
	// ConfigFile is the config's path, named where an error sends the
	// owner there.
	ConfigFile string
	Turns      Turner
	// Splitter runs "/split TASK"; nil answers that it is not available.
	Splitter  Splitter
	Approvals Approvals
	// Redactor redacts a delivery's text before it is saved, and the
	// ids of an audit record.
	Redactor Redactor
	Tokens   Tokens
	// Untrusted wraps text from outside the sender's control (a
	// forwarded or quoted message) in untrusted markers for the model
	// (agent.WrapUntrusted).
	Untrusted func(string) string
	// BadRequest is the error a person's mistake wraps (app's
	// ErrBadRequest: the CLI exits with its usage code). Nil means a
	// plain "bad request".
	BadRequest error
	// Now is the clock.
	Now func() time.Time
	// Reminders returns the service a reminder's buttons use (built after
	// the chats); nil refuses their presses.
	Reminders func() Reminders
	// Reviews returns the weekly memory review its card's buttons answer
	// (built after the chats); nil refuses their presses.
	Reviews func() MemoryReviews
}

// Service is the chat channels of one homard: it builds their adapters
// and runners, pairs owners, lists the channels and allows groups, and
// queues messages and cards for the running channel to send.
type Service struct {
	d Deps
}

// New returns the chat service over d.
func New(d Deps) *Service {
	if d.BadRequest == nil {
		d.BadRequest = errors.New("bad request") // lang:en
	}
	return &Service{d: d}
}
