package app

import (
	"context"
	"time"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/chats"
)

// ChannelStatus is one chat channel as `homard channel list` shows it.
type ChannelStatus = chats.ChannelStatus

// newChats wires the chat core (internal/chats) to r: turns run through
// the front-end contract (Channel), approvals through the one approval
// service and its waiter. The adapters come from the one platform table
// (internal/channel/platforms).
func (r *Runtime) newChats() *chats.Service {
	return chats.New(chats.Deps{
		Store: r.Store, Config: r.Config, ConfigFile: r.Paths.ConfigFile,
		Turns: r.Channel(), Approvals: chatApprovals{r}, Redactor: r.redactor, Tokens: r.Vault,
		Splitter: chatSplitter{r}, Untrusted: agent.WrapUntrusted, BadRequest: ErrBadRequest, Now: r.now,
		Reminders: func() chats.Reminders { return r.Tasks }, Reviews: func() chats.MemoryReviews { return r.reviews },
	})
}

// chatApprovals is the chat core's chats.Approvals: the owner's answers
// are recorded as the web UI and the CLI record them (recordAnswer), and
// waits go through the one approval waiter (awaitAnswer).
type chatApprovals struct{ r *Runtime }

var _ chats.Approvals = chatApprovals{}

func (a chatApprovals) Get(ctx context.Context, id string) (approval.Approval, error) {
	return a.r.Approvals.Get(ctx, id)
}

func (a chatApprovals) Answer(ctx context.Context, id string, c channel.Choice) (approval.Approval, error) {
	return a.r.recordAnswer(ctx, id, c)
}

func (a chatApprovals) Deny(ctx context.Context, id, approver string) (approval.Approval, error) {
	return a.r.Approvals.Deny(ctx, id, approver)
}

func (a chatApprovals) Await(ctx context.Context, id string, within, poll time.Duration) (channel.Choice, error) {
	return a.r.awaitAnswer(ctx, id, within, poll)
}
