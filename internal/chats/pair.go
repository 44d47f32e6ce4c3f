package chats

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"fmt"
	"strings"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/store"
)

// Pairing limits: a code is 10 base32 characters (50 bits), lives 10
// minutes and is used once. A wrong code counts against the account that
// sent it, never against the code, so a stranger who can message the bot
// cannot spend the owner's code: an account that sent pairSenderTries
// wrong codes since a pairing started is not heard again while that
// pairing lasts. Across every sender of a platform, once pairWrongPerMinute
// wrong codes were sent in the last pairRateWindow, codes are refused
// without being checked and nothing is spent: the owner sends the code
// again when the rate drops. At most 200 guesses in a code's life against
// 50 bits: guessing is hopeless.
const (
	pairCodeLen        = 10
	pairTTL            = 10 * time.Minute
	pairSenderTries    = 5
	pairWrongPerMinute = 20
	pairRateWindow     = time.Minute
)

// Replies to /pair in a direct chat (catalog keys).
var (
	pairAccepted = lang.N("Code accepted. Confirm on the computer where `homard pair` runs.")
	pairWrong    = lang.N("That code is not valid.")
	pairLocked   = lang.N("That code is not valid. This account sent too many wrong codes, so it is not heard again for this pairing; if you are the owner, run `homard pair` again.")
	pairBusy     = lang.N("Too many wrong codes were sent to this bot in the last minute, so this one was not checked (and nothing was used up). Wait a minute and send it again.")
	pairDone     = lang.N("Paired: this account is now the owner of this homard.")
	pairDeclined = lang.N("The pairing was declined on the computer.")
)

// PairCode is a pairing in progress: the code to send to the bot as
// `/pair CODE` in a direct chat, shown once (only its hash is stored).
type PairCode struct {
	ID        int64
	Platform  string
	Code      string
	ExpiresAt time.Time
}

// PairUse is who used a pairing code: the platform's ids and display
// name (untrusted text; print it through termtext).
type PairUse struct {
	UserID, Name, ChatID string
}

func knownPlatform(p string) bool {
	_, ok := config.PlatformOf(p)
	return ok
}

// PairStart makes a one-time pairing code for platform.
func (s *Service) PairStart(ctx context.Context, platform string) (PairCode, error) {
	if !knownPlatform(platform) {
		return PairCode{}, fmt.Errorf("pair %q: %w", platform, ErrPairPlatform) // lang:en
	}
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	code := base32.StdEncoding.EncodeToString(b[:])[:pairCodeLen]
	now := s.d.Now()
	pc := PairCode{Platform: platform, Code: code, ExpiresAt: now.Add(pairTTL)}
	h := sha256.Sum256([]byte(code))
	err := s.d.Store.Write(ctx, func(tx *store.Tx) (err error) {
		pc.ID, err = tx.InsertPairing(store.Pairing{Platform: platform, CodeHash: h[:], CreatedAt: now, ExpiresAt: pc.ExpiresAt})
		return err
	})
	return pc, err
}

// PairWait waits until the code of pairing id is used in a direct chat
// (reading the database every poll: `homard serve` runs the channel), and
// returns who used it. It fails when the code expires (wrong codes never
// spend it), or when ctx ends.
func (s *Service) PairWait(ctx context.Context, id int64, poll time.Duration) (PairUse, error) {
	for {
		p, err := s.d.Store.Pairing(ctx, id)
		if err != nil {
			return PairUse{}, err
		}
		switch {
		case p.State == "used":
			return PairUse{UserID: p.UsedBy, Name: p.UsedName, ChatID: p.UsedChat}, nil
		case p.State != "open" || !s.d.Now().Before(p.ExpiresAt):
			return PairUse{}, ErrPairExpired
		}
		if !sleepCtx(ctx, poll) {
			return PairUse{}, ctx.Err()
		}
	}
}

// PairConfirm ends a used pairing: accepted, the account becomes an
// owner on the platform; either way the account is told in its chat (the
// running channel sends it).
func (s *Service) PairConfirm(ctx context.Context, id int64, accept bool) error {
	p, err := s.d.Store.Pairing(ctx, id)
	if err != nil {
		return err
	}
	if p.State != "used" {
		return fmt.Errorf("confirm pairing: the code was not used (%s)", p.State) // lang:en
	}
	now := s.d.Now()
	return s.d.Store.Write(ctx, func(tx *store.Tx) error {
		p.State = "refused"
		text := pairDeclined
		if accept {
			p.State, text = "confirmed", pairDone
			if err := tx.AddChatOwner(store.ChatOwner{Platform: p.Platform, UserID: p.UsedBy, Name: p.UsedName, ChatID: p.UsedChat, PairedAt: now}); err != nil {
				return err
			}
		}
		if err := tx.UpdatePairing(p); err != nil {
			return err
		}
		text = s.txPrinter(tx, p.Platform, p.UsedChat).T(text)
		_, err := tx.InsertOutbox(store.OutboxRow{Platform: p.Platform, ChatID: p.UsedChat, Text: text, CreatedAt: now})
		return err
	})
}

// pairAttempt handles `/pair CODE` from a sender who is the direct chat:
// never a model call. In order: a sender who sent pairSenderTries wrong
// codes since every open pairing started is not heard (ignored, audited);
// past pairWrongPerMinute wrong codes on the platform in the last minute
// the code is refused unchecked; a right code marks its pairing used (the
// CLI then asks to confirm); a wrong one is recorded against its sender.
func (c *Runner) pairAttempt(ctx context.Context, row store.InboxRow, in chat.Inbound, code string) {
	code = strings.ToUpper(strings.ReplaceAll(code, "-", ""))
	h := sha256.Sum256([]byte(code))
	now := c.s.d.Now()
	pr := c.replyPrinter(ctx, row.Platform, in)
	err := c.s.d.Store.Write(ctx, func(tx *store.Tx) error {
		open, err := tx.OpenPairings(row.Platform, now)
		if err != nil {
			return err
		}
		if len(open) == 0 {
			// No pairing in progress: like any stranger's message.
			return c.turnAway(tx, row, in, now, "chat.pair-none", "a pairing code was sent while no pairing was in progress", "pair: none open") // lang:en
		}
		// The pairings this sender may still try: the ones it has not sent
		// pairSenderTries wrong codes to since they started.
		var mine []store.Pairing
		var wrong []int // wrong codes sent to mine[i]
		for _, p := range open {
			n, err := tx.WrongPairCodes(row.Platform, in.Sender.ID, p.CreatedAt)
			if err != nil {
				return err
			}
			if n < pairSenderTries {
				mine, wrong = append(mine, p), append(wrong, n)
			}
		}
		if len(mine) == 0 {
			// Not checked, not answered: the sender was told at its last
			// wrong code, and an answer to each message would let it make
			// the bot write as fast as it writes.
			if err := c.auditChat(tx, in, "chat.pair-locked", "a pairing code from an account that sent too many wrong codes: not checked", ""); err != nil { // lang:en
				return err
			}
			return tx.SetInboxState(row.ID, inboxReceived, inboxIgnored, "pair: sender sent too many wrong codes") // lang:en
		}
		recent, err := tx.WrongPairCodes(row.Platform, "", now.Add(-pairRateWindow))
		if err != nil {
			return err
		}
		if recent >= pairWrongPerMinute {
			if err := c.auditChat(tx, in, "chat.pair-limited", "a pairing code while too many wrong codes were being sent: not checked, nothing spent", ""); err != nil { // lang:en
				return err
			}
			return c.answer(tx, row, in, pr.T(pairBusy), inboxReceived, "pair: too many wrong codes on the platform") // lang:en
		}
		reply := pairWrong
		matched := false
		for _, p := range mine {
			if !matched && subtle.ConstantTimeCompare(p.CodeHash, h[:]) == 1 {
				matched = true
				p.State, p.UsedBy, p.UsedName, p.UsedChat = "used", in.Sender.ID, in.Sender.Name, in.Chat.ID
				reply = pairAccepted
				if err := tx.UpdatePairing(p); err != nil {
					return err
				}
				if in.Lang != "" { // the language PairConfirm's word is sent in
					if err := tx.SetChatLang(row.Platform, in.Chat.ID, in.Lang); err != nil {
						return err
					}
				}
			}
		}
		if !matched {
			if err := tx.AddWrongPairCode(row.Platform, in.Sender.ID, now); err != nil {
				return err
			}
			locked := true
			for i, p := range mine {
				p.Tries++ // for the record: it spends nothing
				if err := tx.UpdatePairing(p); err != nil {
					return err
				}
				locked = locked && wrong[i]+1 >= pairSenderTries
			}
			if locked {
				reply = pairLocked
			}
			if err := c.auditChat(tx, in, "chat.pair-wrong", "a wrong pairing code", ""); err != nil { // lang:en
				return err
			}
		}
		return c.answer(tx, row, in, pr.T(reply), inboxReceived, "pair")
	})
	if err != nil && ctx.Err() == nil {
		c.log.Warn("chat pairing", "err", err)
	}
}
