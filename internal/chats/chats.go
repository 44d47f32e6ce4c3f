// Package chats is homard's chat core: the inbox every chat adapter saves
// deliveries into, the dispatcher that decides from the platform's
// authenticated fields who sent each one (a paired owner, a guest in an
// allowed group, a stranger) and runs turns one chat at a time, the outbox
// that sends replies with retries, the approval cards and the checks of
// their button presses, pairing, and the channels' status
// (docs/CHANNELS.md, "Core").
//
// The chat core decides nothing about tools: it runs a turn through a
// Turner and reads, records and waits for approvals through Approvals,
// both small interfaces app implements; it never imports app.
package chats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/store"
)

// Options configure a Runner. The zero value is right for real use but
// for Adapters.
type Options struct {
	// Adapters are the bots to run, at most one per platform.
	Adapters []chat.Adapter
	// Log receives what happens (never message text or tokens). Nil
	// discards it.
	Log *slog.Logger
	// Poll is how often the inbox, the outbox and open cards are read
	// when nothing woke the workers (another process wrote: a CLI
	// approval, `homard pair`). Zero means 1s.
	Poll time.Duration
	// ApprovalWait is how long an owner's turn waits for a card to be
	// answered. Zero means gateway.approval_wait.
	ApprovalWait time.Duration
	// NoticeEvery limits the "this bot is private" reply to one per chat
	// per NoticeEvery. Zero means 1h.
	NoticeEvery time.Duration
	// Backoff is the wait before retry attempt n (from 1) of a send the
	// platform refused without saying how long. Nil means 2^n seconds,
	// at most 5 minutes, with jitter.
	Backoff func(attempt int) time.Duration
	// MaxAttempts is how many times a part is tried before it is given
	// up (state failed). Zero means 8.
	MaxAttempts int
	// TypingEvery is how often the typing indicator is renewed during a
	// turn. Zero means 4s.
	TypingEvery time.Duration
	// Lease takes the lock that makes this process the one that polls a
	// platform and sends its replies (see runPlatform). Nil means the
	// store's TryLock: on a shared database one replica per platform, on
	// SQLite always this process.
	Lease func(name string) (unlock func(), ok bool, err error)
	// LeaseEvery is how often a replica on standby asks for the lease
	// again. Zero means 5s.
	LeaseEvery time.Duration
	// Deliveries, when set, sends the parts as jobs any replica may run
	// (a shared store; deliver.go); the lease holder's outbox loop then
	// queues them. Nil: the lease holder sends them itself.
	Deliveries Deliveries
}

// Runner runs homard's chat channels: it is the chat.Sink every adapter
// saves deliveries into (the inbox), the dispatcher that decides who sent
// each one and runs turns (one chat at a time, in order), the outbox
// worker that sends replies, and the approval cards' checker
// (docs/CHANNELS.md, "Core").
type Runner struct {
	s        *Service
	o        Options
	log      *slog.Logger
	adapters map[string]chat.Adapter

	wakeInbox chan struct{}            // a delivery was saved or a chat's turn ended
	wakeOut   map[string]chan struct{} // by platform: a part was queued

	mu   sync.Mutex       // guards busy and bots
	busy map[chatKey]bool // chats whose turn is running
	bots map[string]chat.BotInfo

	workers sync.WaitGroup // running turns
}

// chatKey names one chat of one platform.
type chatKey struct{ platform, chat string }

// Entry trusts of chat deliveries (channel.TurnRequest.As).
const (
	trustOwner = "owner"
	trustGuest = "guest"
)

// Inbox states (chat_inbox.state).
const (
	inboxReceived    = "received"
	inboxRunning     = "running"
	inboxHandled     = "handled"
	inboxIgnored     = "ignored"
	inboxInterrupted = "interrupted"
)

// inboxKeep is how long a delivery id is remembered after it was handled:
// Feishu redelivers for hours, Telegram's ids restart after a quiet week.
const inboxKeep = 8 * 24 * time.Hour

// NewRunner prepares the chat channels o names; Run runs them.
func (s *Service) NewRunner(o Options) *Runner {
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.ApprovalWait <= 0 {
		o.ApprovalWait = s.d.Config.Gateway.ApprovalWait.Std()
	}
	if o.NoticeEvery <= 0 {
		o.NoticeEvery = time.Hour
	}
	if o.Backoff == nil {
		o.Backoff = defaultBackoff
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 8
	}
	if o.TypingEvery <= 0 {
		o.TypingEvery = 4 * time.Second
	}
	if o.Lease == nil {
		o.Lease = s.d.Store.TryLock
	}
	if o.LeaseEvery <= 0 {
		o.LeaseEvery = 5 * time.Second
	}
	c := &Runner{
		s: s, o: o, log: o.Log, adapters: map[string]chat.Adapter{},
		wakeInbox: make(chan struct{}, 1), wakeOut: map[string]chan struct{}{},
		busy: map[chatKey]bool{}, bots: map[string]chat.BotInfo{},
	}
	for _, a := range o.Adapters {
		c.adapters[a.Platform()] = a
		c.wakeOut[a.Platform()] = make(chan struct{}, 1)
	}
	return c
}

var _ chat.Sink = (*Runner)(nil)

// Receive saves a delivery in the inbox (its text redacted) and returns:
// a delivery already there is not an error. Nothing else happens here;
// the dispatcher decides.
func (c *Runner) Receive(ctx context.Context, in chat.Inbound) error {
	if in.Platform == "" || in.DeliveryID == "" {
		return fmt.Errorf("save chat delivery: no platform or delivery id") // lang:en
	}
	in.Text = c.s.d.Redactor.Redact(in.Text)
	in.Quoted = c.s.d.Redactor.Redact(in.Quoted)
	payload, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("save chat delivery: %w", err) // lang:en
	}
	row := store.InboxRow{
		Platform: in.Platform, Bot: in.Bot, DeliveryID: in.DeliveryID, Kind: string(in.Kind),
		ChatID: in.Chat.ID, SenderID: in.Sender.ID, Payload: string(payload), ReceivedAt: c.s.d.Now(),
	}
	if err := c.s.d.Store.Write(ctx, func(tx *store.Tx) error { _, err := tx.InsertInbox(row); return err }); err != nil {
		return err
	}
	wake(c.wakeInbox)
	return nil
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Run runs every adapter, the dispatcher and the outbox until ctx ends,
// then waits for running turns (cancelled with ctx; their rows stay
// running and are reported interrupted at the next start). First it marks
// the turns a previous process left running interrupted and tells their
// owners.
func (c *Runner) Run(ctx context.Context) error {
	if err := c.recover(ctx); err != nil {
		return err
	}
	if c.o.Deliveries != nil {
		c.o.Deliveries.Work(c.drain)
	}
	var wg sync.WaitGroup
	for _, a := range c.adapters {
		wg.Add(1)
		go func() { defer wg.Done(); c.runPlatform(ctx, a) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); c.dispatchLoop(ctx) }()
	<-ctx.Done()
	wg.Wait()
	c.workers.Wait()
	return nil
}

// runPlatform polls a platform and sends its replies while this process
// holds the platform's lease. On a shared database (replicas, issue 27)
// only one process may: two would each take updates meant for the other
// (Telegram answers a second getUpdates with 409 Conflict), and both would
// send the same reply. The others wait on standby and one takes over when
// the holder stops or dies (the database drops its lock). Every replica
// still dispatches the inbox and runs turns. A platform that pushes its
// deliveries (chat.Pushed: Feishu's callbacks, which a load balancer
// sends to any replica) is received on every replica at once, since the
// inbox keeps one of each; only its sending waits for the lease.
func (c *Runner) runPlatform(ctx context.Context, a chat.Adapter) {
	var wg sync.WaitGroup
	defer wg.Wait()
	pushed := false
	if p, ok := a.(chat.Pushed); ok && p.Pushed() {
		pushed = true
		wg.Add(1)
		go func() { defer wg.Done(); c.runAdapter(ctx, a) }()
	}
	unlock, ok := c.lease(ctx, a.Platform())
	if !ok {
		return
	}
	defer unlock()
	if !pushed {
		wg.Add(1)
		go func() { defer wg.Done(); c.runAdapter(ctx, a) }()
	}
	c.outboxLoop(ctx, a)
}

// lease waits until this process holds platform p's lease, or ctx ends
// (false).
func (c *Runner) lease(ctx context.Context, p string) (func(), bool) {
	for standby := false; ; standby = true {
		u, ok, err := c.o.Lease("channel:" + p)
		if err != nil {
			c.log.Warn("chat channel lease", "platform", p, "err", err)
		}
		if ok {
			return u, true
		}
		if !standby && err == nil {
			// Not recorded as the channel's state: the row is the
			// platform's, and the replica that polls keeps it.
			c.log.Info("chat channel on standby: another replica polls it", "platform", p)
		}
		if !sleepCtx(ctx, c.o.LeaseEvery) {
			return nil, false
		}
	}
}

// runAdapter learns the bot's identity and runs its receive loop,
// recording its state for `homard channel list`; it retries a failed
// start with backoff until ctx ends. A second poller stops it for good.
func (c *Runner) runAdapter(ctx context.Context, a chat.Adapter) {
	p := a.Platform()
	for attempt := 1; ctx.Err() == nil; attempt++ {
		info, err := a.Info(ctx)
		if err == nil {
			c.mu.Lock()
			c.bots[p] = info
			c.mu.Unlock()
			c.setState(ctx, store.ChannelState{Platform: p, BotID: info.ID, BotName: info.Username, State: "running"})
			attempt = 0
			err = a.Run(ctx, c)
		}
		if ctx.Err() != nil {
			break
		}
		state := "retrying"
		if errors.Is(err, chat.ErrConflict) || errors.Is(err, chat.ErrUnauthorized) {
			state = "stopped"
		}
		c.log.Warn("chat channel", "platform", p, "state", state, "err", err)
		c.setState(ctx, store.ChannelState{Platform: p, State: state, LastError: errText(err)})
		if state == "stopped" || !sleepCtx(ctx, c.o.Backoff(max(attempt, 1))) {
			return
		}
	}
	c.setState(context.WithoutCancel(ctx), store.ChannelState{Platform: p, State: "stopped"})
}

func (c *Runner) setState(ctx context.Context, s store.ChannelState) {
	s.UpdatedAt = c.s.d.Now()
	if err := c.s.d.Store.Write(ctx, func(tx *store.Tx) error { return tx.SetChannelState(s) }); err != nil && ctx.Err() == nil {
		c.log.Warn("record channel state", "platform", s.Platform, "err", err)
	}
}

// errText is an error for a person, one line, without any secret.
func errText(err error) string {
	if err == nil {
		return ""
	}
	s := strings.ReplaceAll(err.Error(), "\n", " ")
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "…"
	}
	return s
}

// sleepCtx waits d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// recover marks the turns a dead process left running interrupted (never
// run again: their tools may have acted) and queues a word to each owner.
func (c *Runner) recover(ctx context.Context) error {
	return c.s.d.Store.Write(ctx, func(tx *store.Tx) error {
		rows, err := tx.InterruptRunning()
		if err != nil {
			return err
		}
		for _, row := range rows {
			c.log.Warn("chat turn interrupted by a restart", "platform", row.Platform, "inbox", row.ID)
			if row.Note != trustOwner && row.Note != trustSplit {
				continue
			}
			if _, err := c.queue(tx, row.Platform, row.ChatID, c.s.txPrinter(tx, row.Platform, row.ChatID).T(interruptedNotice), "", nil); err != nil {
				return err
			}
		}
		return nil
	})
}

var interruptedNotice = lang.N("A message of yours was interrupted by a restart of homard and was not run again; its tools may have acted. `homard audit` on the computer shows what ran.")

// dispatchLoop reads received deliveries in order until ctx ends.
func (c *Runner) dispatchLoop(ctx context.Context) {
	for {
		c.scan(ctx)
		t := time.NewTimer(c.o.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-c.wakeInbox:
		case <-t.C:
		}
		t.Stop()
	}
}

// scan handles every received delivery it may now: a press at once (the
// turn it answers is waiting), anything else only when no turn of its chat
// is running and no earlier delivery of its chat waits (order per chat).
func (c *Runner) scan(ctx context.Context) {
	rows, err := c.s.d.Store.InboxByState(ctx, inboxReceived)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("read chat inbox", "err", err)
		}
		return
	}
	blocked := map[chatKey]bool{}
	for _, row := range rows {
		if ctx.Err() != nil {
			return
		}
		var in chat.Inbound
		if err := json.Unmarshal([]byte(row.Payload), &in); err != nil {
			c.finish(ctx, row, inboxIgnored, "unreadable payload") // lang:en
			continue
		}
		a := c.adapters[row.Platform]
		if a == nil {
			continue // the channel is not running here; it stays received
		}
		if in.Kind == chat.KindPress {
			c.press(ctx, a, row, in)
			continue
		}
		k := chatKey{row.Platform, row.ChatID}
		if blocked[k] || c.isBusy(k) {
			blocked[k] = true
			continue
		}
		c.handle(ctx, a, row, in)
		if c.isBusy(k) {
			blocked[k] = true
		}
	}
}

func (c *Runner) isBusy(k chatKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.busy[k]
}

// finish moves a received row to state (handled or ignored).
func (c *Runner) finish(ctx context.Context, row store.InboxRow, state, note string) {
	err := c.s.d.Store.Write(ctx, func(tx *store.Tx) error { return tx.SetInboxState(row.ID, inboxReceived, state, note) })
	if err != nil && ctx.Err() == nil {
		c.log.Warn("chat inbox", "inbox", row.ID, "err", err)
	}
}

// answer queues text in reply to the message of row, inside tx, and
// moves row from state from to handled, with note.
func (c *Runner) answer(tx *store.Tx, row store.InboxRow, in chat.Inbound, text, from, note string) error {
	if _, err := c.queue(tx, row.Platform, in.Chat.ID, text, in.MessageID, nil); err != nil {
		return err
	}
	return tx.SetInboxState(row.ID, from, inboxHandled, note)
}

// queue adds text as outbox parts (split at the adapter's limit) to chat
// inside tx; buttons go under the last part. It returns the last part's id.
func (c *Runner) queue(tx *store.Tx, platform, chatID, text, replyTo string, buttons []chat.Button) (int64, error) {
	limit := 0
	if a := c.adapters[platform]; a != nil {
		limit = a.MaxChars()
	}
	_, id, err := queueChat(tx, platform, chatID, text, replyTo, buttons, limit, c.s.d.Now())
	if err != nil {
		return 0, err
	}
	if ch := c.wakeOut[platform]; ch != nil {
		wake(ch) // the loop may read before this commits; Poll catches it then
	}
	return id, nil
}

// queueChat adds text as outbox parts of at most limit characters (0: the
// platform's smallest, taskChatLimit) to chat inside tx; buttons go under
// the last part. It returns the first and the last part's ids. The
// channel's outbox loop, in this process or serve's, sends them.
func queueChat(tx *store.Tx, platform, chatID, text, replyTo string, buttons []chat.Button, limit int, now time.Time) (first, last int64, err error) {
	if limit <= 0 {
		limit = taskChatLimit
	}
	if strings.TrimSpace(text) == "" {
		text = "(no answer)" // lang:en: a model's empty reply, marked
	}
	parts := chat.Split(text, limit)
	for i, p := range parts {
		row := store.OutboxRow{Platform: platform, ChatID: chatID, Text: p, Part: i + 1, Parts: len(parts), CreatedAt: now}
		if i == 0 {
			row.ReplyTo = replyTo
		}
		if i == len(parts)-1 && len(buttons) > 0 {
			b, err := json.Marshal(buttons)
			if err != nil {
				return 0, 0, err
			}
			row.Buttons = string(b)
		}
		if last, err = tx.InsertOutbox(row); err != nil {
			return 0, 0, err
		}
		if i == 0 {
			first = last
		}
	}
	return first, last, nil
}

// Queue adds text as outbox parts to chatID on platform inside tx, split
// for the platform with the smallest limit (a task's result, `task
// run-now` in the CLI: no adapter at hand). It returns the first part's
// id, whose state (retried, sent, failed) a caller may follow. The
// channel's outbox loop, in this process or serve's, sends them.
func (s *Service) Queue(tx *store.Tx, platform, chatID, text string) (int64, error) {
	first, _, err := queueChat(tx, platform, chatID, text, "", nil, 0, s.d.Now())
	return first, err
}

// taskChatLimit is the part size of a message queued without its adapter
// at hand (a task's result, `task run-now` in the CLI): Discord's 2000
// characters, the smallest of the platforms, less a margin.
const taskChatLimit = 1900

// allowedGroup reports whether the group chat is allowed on platform:
// listed in the config or allowed with `homard channel allow`.
func (c *Runner) allowedGroup(ctx context.Context, platform, chatID string) (bool, error) {
	if cfg := c.s.d.Config.Channels.ByName()[platform]; cfg != nil && slices.Contains(cfg.Groups, chatID) {
		return true, nil
	}
	info, err := c.s.d.Store.Chat(ctx, platform, chatID)
	return info.Allowed, err
}
