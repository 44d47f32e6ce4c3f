package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Recipient is a chat the owner confirmed a message may go to.
type Recipient struct {
	Platform  string
	Chat      string
	Confirmed time.Time
}

// ConfirmRecipient records that owner confirmed chat on platform (again:
// the time is kept from the first).
func (tx *Tx) ConfirmRecipient(owner, platform, chat string, now time.Time) error {
	if _, err := tx.exec(`INSERT INTO recipients (owner, platform, chat, confirmed_at) VALUES (?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, owner, platform, chat, nanos(now)); err != nil {
		return fmt.Errorf("confirm recipient %s:%s: %w", platform, chat, err)
	}
	return nil
}

// RemoveRecipient forgets a confirmed recipient; ErrNotFound when there
// was none.
func (tx *Tx) RemoveRecipient(owner, platform, chat string) error {
	res, err := tx.exec(`DELETE FROM recipients WHERE owner = ? AND platform = ? AND chat = ?`, owner, platform, chat)
	if err != nil {
		return fmt.Errorf("remove recipient %s:%s: %w", platform, chat, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("remove recipient %s:%s: %w", platform, chat, ErrNotFound)
	}
	return nil
}

// RecipientConfirmed reports whether owner confirmed chat on platform.
func (s *Store) RecipientConfirmed(ctx context.Context, owner, platform, chat string) (bool, error) {
	var n int
	if err := s.readRow(ctx, `SELECT count(*) FROM recipients WHERE owner = ? AND platform = ? AND chat = ?`, owner, platform, chat).Scan(&n); err != nil {
		return false, fmt.Errorf("recipient %s:%s: %w", platform, chat, err)
	}
	return n > 0, nil
}

// Recipients lists owner's confirmed recipients, oldest first.
func (s *Store) Recipients(ctx context.Context, owner string) ([]Recipient, error) {
	op := "recipients of " + owner
	rows, err := s.reader.QueryContext(ctx, `SELECT platform, chat, confirmed_at FROM recipients WHERE owner = ? ORDER BY confirmed_at, platform, chat`, owner)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return collect(rows, func(r interface{ Scan(...any) error }) (Recipient, error) {
		var x Recipient
		var at sql.NullInt64
		err := r.Scan(&x.Platform, &x.Chat, &at)
		x.Confirmed = fromNanos(at)
		return x, err
	}, op)
}
