package chats

import (
	"context"
	"strconv"
	"strings"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/store"
)

// chatHelp is what /help answers in an owner's direct chat (a catalog
// key).
var chatHelp = lang.N(`Commands (this chat only):
/new or /clear — start a new conversation (the old one stays in homard)
/split TASK — a planner without tools plans, workers do each step
/budget — this chat's tool-call cap; /budget N caps each next turn at N tool calls (never above agent.max_calls); /budget off lifts it
/tools off — the next turns offer the model no tool, and any call it makes anyway is refused (for text from somewhere you do not trust); /tools on turns them back on
Anything else goes to the model. Settings are kept until you change them, restarts included.`)

// command handles an owner's slash command in a direct chat, and reports
// whether text was one; anything else (including /split and an unknown
// command) is for the turn.
func (c *Runner) command(ctx context.Context, row store.InboxRow, in chat.Inbound) bool {
	name, arg, _ := strings.Cut(strings.TrimSpace(in.Text), " ")
	arg = strings.ToLower(strings.TrimSpace(arg))
	switch strings.ToLower(name) {
	case "/new", "/clear":
		if arg != "" {
			return false // "/new ideas for…" is a message
		}
		c.newSession(ctx, row, in)
	case "/help":
		c.respond(ctx, row, in, c.replyPrinter(ctx, row.Platform, in).T(chatHelp), nil)
	case "/budget":
		c.respond(ctx, row, in, "", func(p lang.Printer, s *store.ChatSettings) (string, bool) { return setBudget(p, s, arg) })
	case "/tools":
		c.respond(ctx, row, in, "", func(p lang.Printer, s *store.ChatSettings) (string, bool) { return setTools(p, s, arg) })
	default:
		return false
	}
	return true
}

// respond replies to a command with text, or with what change says after
// it changed the chat's settings (saved when it reports true), in the
// transaction that marks the delivery handled, in the chat's language.
func (c *Runner) respond(ctx context.Context, row store.InboxRow, in chat.Inbound, text string, change func(lang.Printer, *store.ChatSettings) (string, bool)) {
	p := c.replyPrinter(ctx, row.Platform, in)
	var s store.ChatSettings
	if change != nil {
		var err error
		if s, err = c.s.d.Store.ChatSettings(ctx, row.Platform, in.Chat.ID); err != nil {
			c.log.Warn("chat settings", "err", err)
			return // stays received; the next scan tries again
		}
	}
	save := false
	if change != nil {
		text, save = change(p, &s)
	}

	err := c.s.d.Store.Write(ctx, func(tx *store.Tx) error {
		if save {
			if err := tx.SetChatSettings(row.Platform, in.Chat.ID, s); err != nil {
				return err
			}
		}
		return c.answer(tx, row, in, text, inboxReceived, "command")
	})
	if err != nil && ctx.Err() == nil {
		c.log.Warn("chat command", "err", err)
	}
}

// setBudget is /budget: with no argument it reports; with N it caps each
// next turn's tool calls at N; with 0 or "off" it lifts the cap.
func setBudget(p lang.Printer, s *store.ChatSettings, arg string) (string, bool) {
	if arg == "" {
		if s.MaxCalls == 0 {
			return p.T("No cap set in this chat: turns use agent.max_calls. /budget N sets one."), false
		}
		return p.Sprintf("Each turn in this chat: at most %d tool calls (/budget off lifts it).", s.MaxCalls), false
	}
	n, err := strconv.Atoi(arg)
	switch {
	case arg == "off" || err == nil && n == 0:
		s.MaxCalls = 0
		return p.T("Tool-call cap lifted: turns use agent.max_calls."), true
	case err != nil || n < 0 || n > 1000:
		return p.T("Usage: /budget (report), /budget N (at most N tool calls a turn, 1 to 1000), /budget off"), false
	}
	s.MaxCalls = n
	return p.Sprintf("Next turns in this chat: at most %d tool calls each (never more than agent.max_calls).", n), true
}

// setTools is /tools: off, on, or a report.
func setTools(p lang.Printer, s *store.ChatSettings, arg string) (string, bool) {
	switch arg {
	case "off":
		s.ToolsOff = true
		return p.T("Tools off: the next turns in this chat offer the model no tool, and any call it makes anyway is refused (limit.tools-off). /tools on turns them back on."), true
	case "on":
		s.ToolsOff = false
		return p.T("Tools on."), true
	case "":
		if s.ToolsOff {
			return p.T("Tools are off in this chat (/tools on)."), false
		}
		return p.T("Tools are on (/tools off for text from somewhere you do not trust)."), false
	}
	return p.T("Usage: /tools off, /tools on"), false
}
