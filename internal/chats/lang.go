package chats

import (
	"context"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/store"
)

// A chat's language (issue 26 point 3): the platform's language code of
// the delivery being answered when it carries one, else the one recorded
// for the chat (chat_settings.lang, from the owner's last message or
// press that carried one), else the config's lang when it names one.
// "auto" means English here: the server's environment is not the chat
// person's.

// tagOf turns a recorded or delivered language code into a language: a
// code homard does not speak ("fr") is English; empty is the config's.
func (s *Service) tagOf(code string) lang.Tag {
	if code != "" {
		t, _ := lang.Parse(code)
		return t
	}
	if t, ok := lang.Parse(s.d.Config.Lang); ok {
		return t
	}
	return lang.EN
}

// printer is the printer of a chat (its recorded language, else the
// config's). An unreadable record is the config's language.
func (s *Service) printer(ctx context.Context, platform, chatID string) lang.Printer {
	set, _ := s.d.Store.ChatSettings(ctx, platform, chatID)
	return lang.For(s.tagOf(set.Lang))
}

// txPrinter is printer inside tx.
func (s *Service) txPrinter(tx *store.Tx, platform, chatID string) lang.Printer {
	code, _ := tx.ChatLang(platform, chatID)
	return lang.For(s.tagOf(code))
}

// replyPrinter is the printer of a reply to in: its own language code
// when the platform gave one, else the chat's.
func (c *Runner) replyPrinter(ctx context.Context, platform string, in chat.Inbound) lang.Printer {
	if in.Lang != "" {
		return lang.For(c.s.tagOf(in.Lang))
	}
	return c.s.printer(ctx, platform, in.Chat.ID)
}

// rememberLang records the language code an owner's delivery carried as
// the chat's, when it has one and it changed. Only owners' deliveries
// are recorded: a stranger's message must not add a row per chat.
func (c *Runner) rememberLang(ctx context.Context, platform string, in chat.Inbound) {
	if in.Lang == "" {
		return
	}
	if set, err := c.s.d.Store.ChatSettings(ctx, platform, in.Chat.ID); err != nil || set.Lang == in.Lang {
		return
	}
	err := c.s.d.Store.Write(ctx, func(tx *store.Tx) error { return tx.SetChatLang(platform, in.Chat.ID, in.Lang) })
	if err != nil && ctx.Err() == nil {
		c.log.Warn("record chat language", "platform", platform, "err", err)
	}
}
