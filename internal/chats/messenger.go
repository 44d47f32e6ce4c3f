package chats

import (
	"context"
	"slices"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/store"
)

// Messenger is the channels as send_message sees them (tools.Messenger):
// the enabled platforms, whom owner trusts — their paired chats and the
// recipients they confirmed — and the outbox, which the running serve
// sends from.
type Messenger struct {
	s     *Service
	owner string
}

// Messenger returns owner's Messenger.
func (s *Service) Messenger(owner string) Messenger { return Messenger{s: s, owner: owner} }

// Platforms are the enabled chat platforms whose section says send =
// true, in the table's order.
func (m Messenger) Platforms() []string {
	var out []string
	for _, p := range config.PlatformNames() {
		if c := m.s.d.Config.Channels.ByName()[p]; c != nil && c.Enabled && c.Send {
			out = append(out, p)
		}
	}
	return out
}

// Trusted reports whether chat on platform is one of the owner's paired
// chats or a recipient they confirmed.
func (m Messenger) Trusted(ctx context.Context, platform, chat string) (bool, error) {
	owners, err := m.s.OwnerChats(ctx, platform)
	if err != nil || slices.Contains(owners, chat) {
		return err == nil, err
	}
	return m.s.d.Store.RecipientConfirmed(ctx, m.owner, platform, chat)
}

// Send queues text (redacted) for chat on platform and, with confirm,
// records chat as a recipient the owner confirmed, in one transaction.
func (m Messenger) Send(ctx context.Context, platform, chat, text string, confirm bool) error {
	return m.s.d.Store.Write(ctx, func(tx *store.Tx) error {
		if _, err := m.s.Queue(tx, platform, chat, m.s.d.Redactor.Redact(text)); err != nil {
			return err
		}
		if confirm {
			return tx.ConfirmRecipient(m.owner, platform, chat, m.s.d.Now())
		}
		return nil
	})
}
