package chats

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/store"
)

// Card states (chat_cards.state).
const (
	cardOpen     = "open"
	cardAnswered = "answered"
	cardClosed   = "closed"
)

// cardPreviewChars caps the preview shown on a chat card; the whole plan
// is `homard approval show ID --full`.
const cardPreviewChars = 1500

// choiceCodes are the one-letter answers in button data.
var choiceCodes = map[string]channel.Choice{"o": channel.Once, "s": channel.Session, "a": channel.Always, "d": channel.Deny}

// hashPrefix is the 12 hex digits of a "sha256:<hex>" plan hash shown on
// a card and bound into its buttons.
func hashPrefix(planHash string) string {
	h := strings.TrimPrefix(planHash, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}

// CardText is a card as plain chat text in English: the exact plan, the
// hash prefix, the risk and why homard asks.
func CardText(c channel.Card) string { return cardText(lang.Printer{}, c) }

// cardText is a card as plain chat text in p's language. The plan, the
// preview and what a rule covers are shown exactly as they are.
func cardText(p lang.Printer, c channel.Card) string {
	var b strings.Builder
	p.Fprintf(&b, "Approval needed: %s\n\n%s\n\nrisk: %s\nwhy: %s\nplan hash: %s\n", c.Tool, c.Plan, c.Risk, c.Reason, hashPrefix(c.PlanHash))
	if p := strings.TrimSpace(c.Preview); p != "" {
		if r := []rune(p); len(r) > cardPreviewChars {
			p = string(r[:cardPreviewChars]) + "\n…"
		}
		fmt.Fprintf(&b, "\n%s\n", p)
	}
	if c.PreviewOmitted > 0 || len([]rune(c.Preview)) > cardPreviewChars {
		p.Fprintf(&b, "(the whole preview: homard approval show %s --full)\n", c.ApprovalID)
	}
	if c.Allows(channel.Session) && c.Covers != "" && !c.CoversShown() {
		if c.Allows(channel.Always) {
			p.Fprintf(&b, "\n\"This session\" or \"Always\" also lets run without asking: %s\n", c.Covers)
		} else {
			p.Fprintf(&b, "\n\"This session\" also lets run without asking: %s\n", c.Covers)
		}
	}
	return b.String()
}

// CardButtons are the card's answers in English: what c.Allows (a
// critical or once-only card offers only once and deny). Data is
// "a:<approval id>:<hash12>:<o|s|a|d>".
func CardButtons(c channel.Card) []chat.Button { return cardButtons(lang.Printer{}, c) }

// cardLabels are the card's buttons and their one-letter codes.
var cardLabels = []struct{ label, code string }{{lang.N("Approve once"), "o"}, {lang.N("This session"), "s"}, {lang.N("Always"), "a"}, {lang.N("Deny"), "d"}}

// cardButtons are CardButtons labelled in p's language; their data is
// the same in every language.
func cardButtons(p lang.Printer, c channel.Card) []chat.Button {
	labels := cardLabels
	var out []chat.Button
	for _, l := range labels {
		if !c.Allows(choiceCodes[l.code]) {
			continue
		}
		out = append(out, chat.Button{Label: p.T(l.label), Data: "a:" + c.ApprovalID + ":" + hashPrefix(c.PlanHash) + ":" + l.code})
	}
	return out
}

// ask is an owner's turn's Ask: it queues the card to the owner's direct
// chat (the chat of the turn), records it, and waits until the approval
// is no longer pending (a press, the web UI, the CLI) or ApprovalWait
// passed. It records nothing itself: the press path records the answer.
func (c *Runner) ask(platform, chatID string) func(context.Context, channel.Card) (channel.Choice, error) {
	return func(ctx context.Context, card channel.Card) (channel.Choice, error) {
		p := c.s.printer(ctx, platform, chatID)
		buttons := cardButtons(p, card)
		for _, b := range buttons {
			if len(b.Data) > chat.MaxButtonData {
				return channel.Leave, fmt.Errorf("approval card: button data of %d bytes", len(b.Data)) // lang:en
			}
		}
		err := c.s.d.Store.Write(ctx, func(tx *store.Tx) error {
			id, err := c.queue(tx, platform, chatID, cardText(p, card), "", buttons)
			if err != nil {
				return err
			}
			return tx.InsertChatCard(store.ChatCard{ApprovalID: card.ApprovalID, Platform: platform, ChatID: chatID,
				OutboxID: id, HashPrefix: hashPrefix(card.PlanHash), CreatedAt: c.s.d.Now()})
		})
		if err != nil {
			return channel.Leave, err
		}
		return c.s.d.Approvals.Await(ctx, card.ApprovalID, c.o.ApprovalWait, c.o.Poll/4+1)
	}
}

// OwnerChats are the direct chats of the owners paired on platform.
func (s *Service) OwnerChats(ctx context.Context, platform string) ([]string, error) {
	owners, err := s.d.Store.ChatOwners(ctx, platform)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range owners {
		c, err := s.d.Store.OwnerChat(ctx, o)
		if err != nil {
			return nil, err
		}
		if c != "" {
			out = append(out, c)
		}
	}
	return out, nil
}

// QueueCard queues an approval card outside a chat turn (a task run's,
// a paired MCP client's) to the first owner chat on platform (a card is
// one message: chat_cards has one row per approval), and records it, so
// a press there is checked exactly as in an owner's own turn. Its
// buttons offer what the card allows. No paired owner chat: nothing is
// queued.
func (s *Service) QueueCard(ctx context.Context, platform string, card channel.Card) error {
	chats, err := s.OwnerChats(ctx, platform)
	if err != nil || len(chats) == 0 {
		return err
	}
	c := chats[0]
	p := s.printer(ctx, platform, c)
	buttons := cardButtons(p, card)
	for _, b := range buttons {
		if len(b.Data) > chat.MaxButtonData {
			return fmt.Errorf("approval card: button data of %d bytes", len(b.Data)) // lang:en
		}
	}
	return s.d.Store.Write(ctx, func(tx *store.Tx) error {
		_, id, err := queueChat(tx, platform, c, cardText(p, card), "", buttons, 0, s.d.Now())
		if err != nil {
			return err
		}
		return tx.InsertChatCard(store.ChatCard{ApprovalID: card.ApprovalID, Platform: platform, ChatID: c,
			OutboxID: id, HashPrefix: hashPrefix(card.PlanHash), CreatedAt: s.d.Now()})
	})
}

// Notices answered to button presses (catalog keys).
var (
	pressRefused  = lang.N("This button is not for you.")
	pressAnswered = lang.N("This card was already answered or has expired.")
	pressOnceOnly = lang.N("This card can only be approved once or denied; it is still waiting.")
	pressNoAlways = lang.N("This card can be approved once or for this session, not always; it is still waiting.")
	pressFailed   = lang.N("homard could not record that answer; try `homard approval` on the computer.")
	pressCode     = lang.N("Approving this needs a code from your authenticator app: approve it in the web UI or with `homard approval approve ID --code CODE`; it is still waiting.")
)

// press checks a button press and, only when everything holds, records
// the answer as the owner would on the web or the CLI: the presser is a
// paired owner who is the chat, in their own direct chat, on the exact
// message homard recorded for that approval, with its hash prefix, and
// the approval is still pending. Anything else is refused and audited.
func (c *Runner) press(ctx context.Context, a chat.Adapter, row store.InboxRow, in chat.Inbound) {
	if in.Press == nil {
		c.finish(ctx, row, inboxIgnored, "press without data") // lang:en
		return
	}
	p := *in.Press
	pr := c.replyPrinter(ctx, row.Platform, in)
	// ack shows notice, a catalog key or text already translated, to the
	// presser in their language.
	ack := func(notice string) {
		if err := a.AckPress(ctx, p, pr.T(notice)); err != nil && ctx.Err() == nil {
			c.log.Warn("ack press", "platform", row.Platform, "err", err)
		}
	}
	id, h12, choice, parsed := parseButton(p.Data)
	refuse := func(why string) {
		err := c.s.d.Store.Write(ctx, func(tx *store.Tx) error {
			if err := c.auditChat(tx, in, "chat.press-refused", why, id); err != nil {
				return err
			}
			return tx.SetInboxState(row.ID, inboxReceived, inboxIgnored, "press refused: "+why) // lang:en
		})
		if err != nil && ctx.Err() == nil {
			c.log.Warn("refuse press", "err", err)
		}
		c.log.Warn("button press refused", "platform", row.Platform, "why", why)
		ack(pressRefused)
	}
	if _, _, ok := parseReminderButton(p.Data); ok {
		c.reminderPress(ctx, a, row, in, refuse, ack)
		return
	}
	if isReviewButton(p.Data) {
		c.reviewPress(ctx, a, row, in, refuse, ack)
		return
	}
	if !parsed {
		refuse("the button data is not a homard card's") // lang:en
		return
	}
	if !c.ownerPressed(ctx, row, in, refuse) {
		return
	}
	c.rememberLang(ctx, row.Platform, in)
	card, err := c.s.d.Store.ChatCardOf(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		refuse("no card was sent for this approval") // lang:en
		return
	}
	if err != nil {
		return
	}
	// The platform shows a card as soon as it accepted it; the outbox
	// records the card's message id a moment later. A press in between
	// waits for that id (briefly: presses must be acknowledged within
	// seconds) rather than being refused for a message homard has not
	// recorded yet.
	for wait := 0; card.MessageID == "" && wait < 20; wait++ {
		if !sleepCtx(ctx, 100*time.Millisecond) {
			return
		}
		if card, err = c.s.d.Store.ChatCardOf(ctx, id); err != nil {
			return
		}
	}
	if card.Platform != row.Platform || card.ChatID != in.Chat.ID || card.MessageID == "" || card.MessageID != p.MessageID || card.HashPrefix != h12 {
		refuse("the press is not on the card message homard recorded for this approval") // lang:en
		return
	}
	if card.State != cardOpen {
		c.finish(ctx, row, inboxHandled, "card already answered") // lang:en
		ack(pressAnswered)
		return
	}
	_, err = c.s.d.Approvals.Answer(ctx, id, choice)
	switch {
	case errors.Is(err, approval.ErrScopeNotAllowed):
		c.finish(ctx, row, inboxHandled, "scope not allowed") // lang:en
		// The card stays open: the answers it offers still work.
		if a, gerr := c.s.d.Approvals.Get(ctx, id); gerr == nil && !a.OnceOnly() && a.NoAlways() {
			ack(pressNoAlways)
		} else {
			ack(pressOnceOnly)
		}
		return
	case errors.Is(err, channel.ErrCodeNeeded):
		// A button carries no code; the card stays open for Deny and the
		// approval waits for an answer where a code can be typed.
		c.finish(ctx, row, inboxHandled, "code needed") // lang:en
		ack(strings.Replace(pr.T(pressCode), "ID", id, 1))
		return
	case errors.Is(err, approval.ErrAlreadyDecided), errors.Is(err, approval.ErrExpired):
		c.finish(ctx, row, inboxHandled, "card already answered") // lang:en
		ack(pressAnswered)
		c.closeCard(ctx, a, card, "")
		return
	case err != nil:
		c.log.Warn("record chat answer", "approval", id, "err", err)
		c.finish(ctx, row, inboxHandled, "answer not recorded") // lang:en
		ack(pressFailed)
		return
	}
	c.finish(ctx, row, inboxHandled, "answered "+string(choice))
	ack(answeredText(choice))
	if ok, err := c.setCard(ctx, id, cardAnswered); err == nil && ok {
		cp := c.s.printer(ctx, card.Platform, card.ChatID)
		c.editCard(ctx, a, card, cp.Sprintf("Answered here: %s.", cp.T(answeredText(choice))))
	}
}

// ownerPressed reports whether the press in is a paired owner's, who is
// the chat, in their own direct chat (a card's and a reminder's buttons
// are theirs only); anyone else's press is refused. false and no refusal:
// the owners could not be read, and the delivery stays received.
func (c *Runner) ownerPressed(ctx context.Context, row store.InboxRow, in chat.Inbound, refuse func(string)) bool {
	owner, err := c.s.d.Store.IsChatOwner(ctx, row.Platform, in.Sender.ID)
	if err != nil {
		return false
	}
	if !owner || !in.Sender.IsChat || !in.Chat.Direct || in.Sender.Bot {
		refuse("the presser is not a paired owner in their own direct chat") // lang:en
		return false
	}
	return true
}

// parseButton reads "a:<approval id>:<hash12>:<o|s|a|d>".
func parseButton(data string) (id, h12 string, c channel.Choice, ok bool) {
	f := strings.Split(data, ":")
	if len(f) != 4 || f[0] != "a" || f[1] == "" || len(f[2]) != 12 {
		return "", "", "", false
	}
	c, ok = choiceCodes[f[3]]
	return f[1], f[2], c, ok
}

// answeredText is the catalog key of what an answer did.
func answeredText(c channel.Choice) string {
	switch c {
	case channel.Once:
		return lang.N("Approved once")
	case channel.Session:
		return lang.N("Approved for this session")
	case channel.Always:
		return lang.N("Approved always")
	}
	return lang.N("Denied")
}

func (c *Runner) setCard(ctx context.Context, id, state string) (ok bool, err error) {
	err = c.s.d.Store.Write(ctx, func(tx *store.Tx) error { ok, err = tx.SetChatCardState(id, state); return err })
	return ok, err
}

// editCard replaces the card's message with its text and a last line,
// without buttons.
func (c *Runner) editCard(ctx context.Context, a chat.Adapter, card store.ChatCard, line string) {
	row, err := c.s.d.Store.Outbox(ctx, card.OutboxID)
	if err != nil {
		return
	}
	text := row.Text + "\n" + line
	if max := a.MaxChars(); max > 0 {
		text = chat.Split(text, max)[0]
	}
	if err := a.Edit(ctx, card.ChatID, card.MessageID, chat.Outbound{ChatID: card.ChatID, Text: text}); err != nil && ctx.Err() == nil {
		c.log.Warn("edit card", "platform", card.Platform, "err", err)
	}
}

// closeCard marks an open card closed and edits it to say how its
// approval ended (line, translated for the card's chat, or one made
// from the approval's status).
func (c *Runner) closeCard(ctx context.Context, a chat.Adapter, card store.ChatCard, line string) {
	ok, err := c.setCard(ctx, card.ApprovalID, cardClosed)
	if err != nil || !ok {
		return
	}
	p := c.s.printer(ctx, card.Platform, card.ChatID)
	if line == "" {
		line = p.T("This card was answered elsewhere or has expired.")
	}
	c.editCard(ctx, a, card, line)
}

// checkCards edits the sent cards of a's platform whose approval was
// answered elsewhere (web UI, CLI) or expired.
func (c *Runner) checkCards(ctx context.Context, a chat.Adapter) {
	cards, err := c.s.d.Store.OpenChatCards(ctx, a.Platform())
	if err != nil {
		return
	}
	for _, card := range cards {
		if card.MessageID == "" {
			continue // not sent yet
		}
		ap, err := c.s.d.Approvals.Get(ctx, card.ApprovalID)
		if err != nil {
			continue
		}
		var line string
		p := c.s.printer(ctx, card.Platform, card.ChatID)
		switch {
		case ap.Status == approval.Pending && c.s.d.Now().Before(ap.ExpiresAt):
			continue
		case ap.Status == approval.Pending, ap.Status == approval.Expired:
			line = p.T("This card has expired.")
		case ap.Status == approval.Denied:
			line = p.T("Answered elsewhere: denied.")
		default:
			line = p.Sprintf("Answered elsewhere: approved (%s).", ap.Scope)
		}
		c.closeCard(ctx, a, card, line)
	}
}
