package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/homard/homard/internal/agent"
	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/channel/discord"
	"github.com/homard/homard/internal/channel/feishu"
	"github.com/homard/homard/internal/channel/telegram"
	"github.com/homard/homard/internal/chats"
	"github.com/homard/homard/internal/config"
)

// ChannelStatus is one chat channel as `homard channel list` shows it.
type ChannelStatus = chats.ChannelStatus

// newChats wires the chat core (internal/chats) to r: turns run through
// the front-end contract (Channel), approvals through the one approval
// service and its waiter, and the adapters built into homard.
func (r *Runtime) newChats() *chats.Service {
	return chats.New(chats.Deps{
		Store: r.Store, Config: r.Config, ConfigFile: r.Paths.ConfigFile,
		Turns: r.Channel(), Approvals: chatApprovals{r}, Redactor: r.redactor, Tokens: r.Vault,
		Adapters: chatAdapters, Untrusted: agent.WrapUntrusted, BadRequest: ErrBadRequest, Now: r.now,
	})
}

// chatAdapters are the adapters built into homard, one per platform.
var chatAdapters = map[string]chats.Constructor{
	chat.Telegram: func(cfg config.Channel, s chats.Secrets) (chat.Adapter, error) {
		return telegram.New(telegram.Options{Token: s.Token, APIBase: cfg.Base(chat.Telegram), Logger: slog.Default()}), nil
	},
	chat.Discord: func(cfg config.Channel, s chats.Secrets) (chat.Adapter, error) {
		return discord.New(discord.Options{Token: s.Token, APIBase: cfg.Base(chat.Discord), Log: slog.Default()})
	},
	chat.Feishu: func(cfg config.Channel, s chats.Secrets) (chat.Adapter, error) {
		// Feishu authenticates with the app id (config) and app secret
		// (the vault secret token_secret names); in callback mode Feishu
		// signs its requests with the Encrypt Key (encrypt_key_secret).
		return feishu.New(feishu.Options{AppID: cfg.AppID, AppSecret: s.Token, APIBase: cfg.Base(chat.Feishu),
			Callback: cfg.Callback(), EncryptKey: s.EncryptKey}), nil
	},
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
