package chats

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
)

// Short replies homard itself writes into chats (catalog keys).
var (
	privateNotice = lang.N("This bot is private: it answers its owner only.")
	leaveNotice   = lang.N("This bot answers only in chats its owner allowed, so it is leaving.")
	newSession    = lang.N("Started a new conversation.")
)

// guestMaxChars caps what a guest's message puts before the model: a
// stranger's long paste must not cost the owner a large prompt.
const guestMaxChars = 4000

// pairRE reads a chat's "/pair CODE"; compiled on the first chat message,
// not at init (\S{1,64} compiles into a long program).
var pairRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/pair\s+(\S{1,64})\s*$`) })

// handle decides what a delivery that is not a press is, from the
// platform's authenticated fields and homard's own records, never from
// its text (but for the /pair and /new commands of a direct chat):
//
//	owner  a paired sender, who is the chat (IsChat), in a direct chat
//	guest  a mention of the bot in an allowed group
//	ignored  bots, edits and other events, group messages without a mention
//	unknown  anyone else in a direct chat: a rate-limited notice, no model
//	not allowed group  one notice, then the bot leaves
func (c *Runner) handle(ctx context.Context, a chat.Adapter, row store.InboxRow, in chat.Inbound) {
	switch {
	case in.Kind == chat.KindOther:
		c.finish(ctx, row, inboxIgnored, "not a new message") // lang:en
		return
	case in.Sender.Bot:
		c.finish(ctx, row, inboxIgnored, "from a bot") // lang:en
		return
	case in.Kind == chat.KindJoin:
		if in.Chat.Direct {
			c.finish(ctx, row, inboxIgnored, "direct chat") // lang:en
			return
		}
		c.group(ctx, a, row, in, false)
		return
	case in.Kind != chat.KindMessage:
		c.finish(ctx, row, inboxIgnored, "unknown kind") // lang:en
		return
	}
	if !in.Chat.Direct {
		c.group(ctx, a, row, in, true)
		return
	}
	if m := pairRE().FindStringSubmatch(strings.TrimSpace(in.Text)); m != nil && in.Sender.IsChat {
		c.pairAttempt(ctx, row, in, m[1])
		return
	}
	owner, err := c.s.d.Store.IsChatOwner(ctx, row.Platform, in.Sender.ID)
	if err != nil {
		c.log.Warn("read chat owners", "err", err)
		return // stays received; the next scan tries again
	}
	if !owner || !in.Sender.IsChat {
		c.stranger(ctx, row, in)
		return
	}
	c.rememberLang(ctx, row.Platform, in)
	if c.command(ctx, row, in) {
		return
	}
	if task, ok := strings.CutPrefix(strings.TrimSpace(in.Text), "/split"); ok && (task == "" || task[0] == ' ' || task[0] == '\n') {
		in.Text = strings.TrimSpace(task)
		c.startTurn(ctx, a, row, in, trustSplit)
		return
	}
	c.startTurn(ctx, a, row, in, trustOwner)
}

// group handles a message (or the bot's arrival) in a group chat.
func (c *Runner) group(ctx context.Context, a chat.Adapter, row store.InboxRow, in chat.Inbound, message bool) {
	ok, err := c.allowedGroup(ctx, row.Platform, groupOf(in.Chat))
	if err != nil {
		c.log.Warn("read chat", "err", err)
		return
	}
	switch {
	case ok && message && in.Mentioned:
		c.startTurn(ctx, a, row, in, trustGuest)
	case ok:
		c.finish(ctx, row, inboxIgnored, "group message without a mention") // lang:en
	default:
		c.leave(ctx, a, row, in)
	}
}

// groupOf is the id an allow-list names for a group chat: the group that
// holds it where a group holds many chats (a Discord guild), else the chat.
func groupOf(c chat.Chat) string {
	if c.Group != "" {
		return c.Group
	}
	return c.ID
}

// leave posts one notice in a group that is not allowed and leaves it,
// once per chat; later deliveries from it are ignored.
func (c *Runner) leave(ctx context.Context, a chat.Adapter, row store.InboxRow, in chat.Inbound) {
	var first bool
	err := c.s.d.Store.Write(ctx, func(tx *store.Tx) (err error) {
		first, err = tx.MarkChatLeft(row.Platform, groupOf(in.Chat), c.s.d.Now())
		if err != nil {
			return err
		}
		return tx.SetInboxState(row.ID, inboxReceived, inboxIgnored, "group not allowed") // lang:en
	})
	if err != nil || !first {
		return
	}
	c.log.Info("leaving a group that is not allowed", "platform", row.Platform, "chat", in.Chat.ID)
	if _, err := a.Send(ctx, chat.Outbound{ChatID: in.Chat.ID, Text: c.replyPrinter(ctx, row.Platform, in).T(leaveNotice), Key: "leave-" + in.Chat.ID}); err != nil {
		c.log.Warn("group notice", "platform", row.Platform, "err", err)
	}
	if err := a.Leave(ctx, groupOf(in.Chat)); err != nil {
		c.log.Warn("leave group", "platform", row.Platform, "err", err)
	}
}

// stranger answers an unknown sender of a direct message: no model call,
// one short notice per chat per NoticeEvery, an audit record.
func (c *Runner) stranger(ctx context.Context, row store.InboxRow, in chat.Inbound) {
	err := c.s.d.Store.Write(ctx, func(tx *store.Tx) error {
		return c.turnAway(tx, row, in, c.s.d.Now(), "chat.unknown-sender", "a direct message from a sender who is not a paired owner: no model call", "unknown sender") // lang:en
	})
	if err != nil && ctx.Err() == nil {
		c.log.Warn("chat stranger", "err", err)
	}
}

// turnAway answers, in tx, a message nothing will act on: the private
// notice, at most once per NoticeEvery in the chat (now is the time),
// an audit record of rule and reason, and the inbox row ignored with
// note.
func (c *Runner) turnAway(tx *store.Tx, row store.InboxRow, in chat.Inbound, now time.Time, rule, reason, note string) error {
	due, err := tx.NoticeDue(row.Platform, in.Chat.ID, now, c.o.NoticeEvery)
	if err != nil {
		return err
	}
	if due {
		p := c.s.txPrinter(tx, row.Platform, in.Chat.ID)
		if in.Lang != "" {
			p = lang.For(c.s.tagOf(in.Lang))
		}
		if _, err := c.queue(tx, row.Platform, in.Chat.ID, p.T(privateNotice), "", nil); err != nil {
			return err
		}
	}
	if err := c.auditChat(tx, in, rule, reason, ""); err != nil {
		return err
	}
	return tx.SetInboxState(row.ID, inboxReceived, inboxIgnored, note)
}

// auditChat appends a denied record about a chat delivery: who (platform
// ids, never text) and why.
func (c *Runner) auditChat(tx *store.Tx, in chat.Inbound, rule, reason, approvalID string) error {
	args := fmt.Sprintf(`{"platform":%s,"chat":%s,"sender":%s}`, strconv.Quote(in.Platform), strconv.Quote(in.Chat.ID), strconv.Quote(in.Sender.ID))
	_, err := audit.Append(tx, audit.Record{
		Time: c.s.d.Now(), Owner: in.Platform + ":" + in.Sender.ID, Trust: policy.TrustUnknown,
		Tool: "chat." + in.Platform, Decision: audit.Denied, Rule: rule, Reason: reason,
		Args: c.s.d.Redactor.Redact(args), ApprovalID: approvalID,
	})
	return err
}

// session is the session a chat's turns run in: the one /new last made,
// else "<platform>-<chat>" (guests: "<platform>-group-<chat>").
func (c *Runner) session(ctx context.Context, platform, chatID, trust string) (string, error) {
	s, err := c.s.d.Store.ChatSession(ctx, platform, chatID)
	if err != nil || s != "" {
		return s, err
	}
	if trust == trustGuest {
		return platform + "-group-" + chatID, nil
	}
	return platform + "-" + chatID, nil
}

func (c *Runner) newSession(ctx context.Context, row store.InboxRow, in chat.Inbound) {
	id := fmt.Sprintf("%s-%s-%d", row.Platform, in.Chat.ID, c.s.d.Now().UnixNano())
	err := c.s.d.Store.Write(ctx, func(tx *store.Tx) error {
		if err := tx.SetChatSession(row.Platform, in.Chat.ID, id); err != nil {
			return err
		}
		return c.answer(tx, row, in, c.s.txPrinter(tx, row.Platform, in.Chat.ID).T(newSession), inboxReceived, "/new")
	})
	if err != nil && ctx.Err() == nil {
		c.log.Warn("chat /new", "err", err)
	}
}

// turnText is what the model reads for a delivery: the sender's own text,
// and forwarded or quoted text only between untrusted markers (wrap puts
// them), never as the sender's words. It is the model's text: lang:en.
func turnText(in chat.Inbound, wrap func(string) string) string {
	var b strings.Builder
	if in.Forwarded {
		b.WriteString("(The sender forwarded a message written by someone else:)\n")
		b.WriteString(wrap(in.Text))
	} else {
		b.WriteString(in.Text)
	}
	if strings.TrimSpace(in.Quoted) != "" {
		b.WriteString("\n\n(Attached quoted or preview text, not written by the sender:)\n")
		b.WriteString(wrap(in.Quoted))
	}
	return b.String()
}

// startTurn claims the row (running) and runs its turn on its own
// goroutine; the chat's later deliveries wait until it ends.
func (c *Runner) startTurn(ctx context.Context, a chat.Adapter, row store.InboxRow, in chat.Inbound, trust string) {
	if strings.TrimSpace(in.Text) == "" && strings.TrimSpace(in.Quoted) == "" {
		c.finish(ctx, row, inboxIgnored, "no text") // lang:en
		return
	}
	err := c.s.d.Store.Write(ctx, func(tx *store.Tx) error { return tx.SetInboxState(row.ID, inboxReceived, inboxRunning, trust) })
	if err != nil {
		return
	}
	k := chatKey{row.Platform, in.Chat.ID}
	c.mu.Lock()
	c.busy[k] = true
	c.mu.Unlock()
	c.workers.Add(1)
	go func() {
		defer c.workers.Done()
		c.turn(ctx, a, row, in, trust)
		c.mu.Lock()
		delete(c.busy, k)
		c.mu.Unlock()
		wake(c.wakeInbox)
	}()
}

// turn runs one chat turn and queues its reply in the same transaction
// that marks the delivery handled. When ctx ends first the row stays
// running: the next start reports it interrupted.
func (c *Runner) turn(ctx context.Context, a chat.Adapter, row store.InboxRow, in chat.Inbound, trust string) {
	session, err := c.session(ctx, row.Platform, in.Chat.ID, trust)
	if err != nil {
		c.log.Warn("chat session", "err", err)
		return
	}
	typingCtx, stopTyping := context.WithCancel(ctx)
	typed := make(chan struct{})
	go func() { defer close(typed); c.typing(typingCtx, a, in.Chat.ID) }()
	text := turnText(in, c.s.d.Untrusted)
	if r := []rune(text); trust == trustGuest && len(r) > guestMaxChars {
		text = string(r[:guestMaxChars]) + "\n(cut: a guest's message is limited)" // lang:en: for the model
	}
	p := c.replyPrinter(ctx, row.Platform, in)
	req := channel.TurnRequest{Session: session, Text: text, As: trust, Lang: p.Tag().String()}
	var set store.ChatSettings
	if trust == trustOwner || trust == trustSplit {
		req.Ask = c.ask(row.Platform, in.Chat.ID)
		// What the owner set here with /budget and /tools. Unreadable,
		// the turn does not run: it would run with the tools the owner
		// may have turned off.
		if set, err = c.s.d.Store.ChatSettings(ctx, row.Platform, in.Chat.ID); err != nil {
			c.log.Warn("chat settings", "err", err)
			stopTyping()
			<-typed
			return // stays running: the next start reports it interrupted
		}
		req.MaxCalls, req.NoTools = set.MaxCalls, set.ToolsOff
	}
	var res channel.TurnResult
	if trust == trustSplit && set.ToolsOff {
		res.Text = p.T("Tools are off in this chat, and /split runs workers with tools: send /tools on first, or the task without /split.")
	} else if trust == trustSplit {
		res.Text, err = c.split(ctx, p, session, in.Text, req.Ask)
		trust = trustOwner // the inbox row's note
	} else {
		res, err = c.s.d.Turns.Turn(ctx, req)
	}
	stopTyping()
	<-typed
	if ctx.Err() != nil {
		return
	}
	reply := res.Text
	if res.Stopped != "" {
		// A turn cut by a budget says so: one cut by its token budget
		// (every guest turn has one) ends with no answer of its own.
		reply = strings.TrimSpace(reply + p.Sprintf("\n\n(homard stopped this turn early: %s)", res.Stopped))
	}
	if err != nil {
		c.log.Warn("chat turn failed", "platform", row.Platform, "inbox", row.ID, "err", err)
		reply = p.T("That did not work: homard could not finish this turn. The log of `homard serve` on the computer says why.")
	}
	if trust == trustGuest {
		// A guest's call that needs approval is refused: no card, and no
		// one else may approve it (approvals are bound to their owner).
		for _, id := range res.Pending {
			if _, err := c.s.d.Approvals.Deny(ctx, id, trustGuest); err != nil {
				c.log.Warn("deny guest approval", "approval", id, "err", err)
			}
		}
	}
	err = c.s.d.Store.Write(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		return c.answer(tx, row, in, reply, inboxRunning, trust)
	})
	if err != nil {
		c.log.Warn("save chat reply", "inbox", row.ID, "err", err)
	}
}

// typing shows the typing indicator until ctx ends.
func (c *Runner) typing(ctx context.Context, a chat.Adapter, chatID string) {
	for {
		if err := a.Typing(ctx, chatID); err != nil && ctx.Err() == nil {
			c.log.Debug("typing", "err", err)
		}
		if !sleepCtx(ctx, c.o.TypingEvery) {
			return
		}
	}
}

// defaultBackoff is 2^attempt seconds, at most 5 minutes, ±50% jitter.
func defaultBackoff(attempt int) time.Duration {
	d := time.Second << min(attempt, 9)
	d = min(d, 5*time.Minute)
	return d/2 + time.Duration(rand.Int64N(int64(d)))
}

// trustSplit marks an owner's "/split TASK" on its way to a turn.
const trustSplit = "split"

// split runs an owner's /split: the task as a planner and workers, the
// plan approved as a card in this chat.
func (c *Runner) split(ctx context.Context, p lang.Printer, session, task string, ask func(context.Context, channel.Card) (channel.Choice, error)) (string, error) {
	switch {
	case c.s.d.Splitter == nil:
		return p.T("/split is not available in this homard."), nil
	case task == "":
		return p.T("Usage: /split TASK — a planner writes a plan of workers that never share what they read (public ones read the web, sensitive ones your files); you approve the plan here before anything runs."), nil
	}
	return c.s.d.Splitter.Split(ctx, session, task, ask)
}
