package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/homard/homard/internal/channel/chat"
)

// maxChannelGuilds bounds the channel → guild map Leave uses.
const maxChannelGuilds = 10000

// Run connects to the gateway and hands every message, button press,
// guild join and message edit to sink until ctx ends (then it returns
// nil) or the token is refused (chat.ErrUnauthorized).
//
// discordgo speaks the gateway (HELLO, IDENTIFY or RESUME, heartbeats,
// zlib); Run owns reconnecting: when discordgo reports the connection
// lost it reopens it with a doubling wait, and discordgo resumes the
// session it had, so Discord replays what the connection missed.
//
// Discord has no acknowledgement for gateway events: a delivery whose
// sink.Receive fails is retried Options.ReceiveTries times, then dropped
// with a log line, and Discord will not send it again.
func (a *Adapter) Run(ctx context.Context, sink chat.Sink) error {
	if err := a.waitInfo(ctx); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return nil
	}
	lost := make(chan struct{}, 1)
	removeEvent := a.s.AddHandler(func(_ *discordgo.Session, e *discordgo.Event) {
		a.dispatch(ctx, sink, e)
	})
	removeLost := a.s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) {
		select {
		case lost <- struct{}{}:
		default:
		}
	})
	defer removeEvent()
	defer removeLost()

	wait := a.opts.ReconnectWait
	for {
		select {
		case <-lost: // a stale signal from the connection before
		default:
		}
		err := a.s.Open()
		if err == nil {
			wait = a.opts.ReconnectWait
			a.log.Info("discord: gateway connected")
			select {
			case <-ctx.Done():
				if err := a.s.Close(); err != nil {
					a.log.Warn("discord: close gateway", "err", err)
				}
				return nil
			case <-lost:
				a.log.Warn("discord: gateway connection lost; reconnecting")
				continue
			}
		}
		a.log.Warn("discord: gateway connect failed; retrying", "err", a.redact(err.Error()), "wait", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, a.opts.ReconnectMax)
	}
}

// waitInfo asks who the bot is until Discord answers, the token is
// refused, or ctx ends.
func (a *Adapter) waitInfo(ctx context.Context) error {
	wait := a.opts.ReconnectWait
	for {
		_, err := a.Info(ctx)
		if err == nil || ctx.Err() != nil {
			return nil
		}
		var re *chat.RetryError
		if !errors.As(err, &re) {
			return fmt.Errorf("discord: run: %w", err)
		}
		if re.After > wait {
			wait = re.After
		}
		a.log.Warn("discord: /users/@me failed; retrying", "err", err, "wait", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, a.opts.ReconnectMax)
	}
}

func (a *Adapter) botUser() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.botID
}

// dispatch runs in discordgo's reading goroutine, one event at a time.
func (a *Adapter) dispatch(ctx context.Context, sink chat.Sink, e *discordgo.Event) {
	if e.Operation != 0 {
		return
	}
	bot := a.botUser()
	var (
		in  chat.Inbound
		ok  = true
		err error
	)
	switch e.Type {
	case "READY":
		var r ready
		if err := json.Unmarshal(e.RawData, &r); err == nil && r.User.ID != "" {
			a.mu.Lock()
			a.botID = r.User.ID
			a.mu.Unlock()
		}
		return
	case "MESSAGE_CREATE":
		in, err = decodeMessage(e.RawData, bot)
		if err == nil && in.Chat.Group != "" {
			a.rememberGuild(in.Chat.ID, in.Chat.Group)
		}
	case "MESSAGE_UPDATE":
		in, err = decodeUpdate(e.RawData, bot, e.Sequence)
	case "INTERACTION_CREATE":
		in, err = decodeInteraction(e.RawData, bot)
	case "GUILD_CREATE":
		in, ok, err = decodeGuild(e.RawData, bot)
	default:
		return
	}
	if err != nil {
		a.log.Warn("discord: event dropped: cannot decode it", "type", e.Type, "seq", e.Sequence, "err", err)
		return
	}
	if ok {
		a.deliver(ctx, sink, in)
	}
}

// deliver hands in to sink, retrying a failed Receive a few times.
func (a *Adapter) deliver(ctx context.Context, sink chat.Sink, in chat.Inbound) {
	wait := a.opts.RetryWait
	for try := 1; ; try++ {
		err := sink.Receive(ctx, in)
		if err == nil {
			return
		}
		if try >= a.opts.ReceiveTries || ctx.Err() != nil {
			a.log.Error("discord: delivery dropped: it was not saved and Discord does not redeliver gateway events",
				"kind", in.Kind, "delivery", in.DeliveryID, "chat", in.Chat.ID, "tries", try, "err", err)
			return
		}
		a.log.Warn("discord: saving a delivery failed; retrying", "delivery", in.DeliveryID, "try", try, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// rememberGuild records which guild a channel belongs to, for Leave.
func (a *Adapter) rememberGuild(channel, guild string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.guilds[channel]; !ok && len(a.guilds) >= maxChannelGuilds {
		a.guilds = map[string]string{}
	}
	a.guilds[channel] = guild
}
