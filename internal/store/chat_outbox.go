package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// OutboxRow is one message part to send (chat_outbox). Buttons is JSON.
type OutboxRow struct {
	ID          int64
	Platform    string
	ChatID      string
	Text        string
	Buttons     string
	ReplyTo     string
	Part, Parts int
	// State is queued, sending, sent or failed.
	State     string
	Attempts  int
	NextAt    time.Time
	MessageID string
	Error     string
	CreatedAt time.Time
	SentAt    time.Time
}

const outboxColumns = `id, platform, chat_id, text, buttons, reply_to, part, parts, state, attempts, next_at, message_id, error, created_at, sent_at`

func scanOutbox(sc interface{ Scan(...any) error }) (OutboxRow, error) {
	var r OutboxRow
	var next, created, sent sql.NullInt64
	err := sc.Scan(&r.ID, &r.Platform, &r.ChatID, &r.Text, &r.Buttons, &r.ReplyTo, &r.Part, &r.Parts, &r.State, &r.Attempts, &next, &r.MessageID, &r.Error, &created, &sent)
	r.NextAt, r.CreatedAt, r.SentAt = fromNanos(next), fromNanos(created), fromNanos(sent)
	return r, err
}

// InsertOutbox queues r (state queued, due at r.NextAt or CreatedAt) and
// returns its id.
func (tx *Tx) InsertOutbox(r OutboxRow) (int64, error) {
	if r.Buttons == "" {
		r.Buttons = "[]"
	}
	if r.Part == 0 {
		r.Part, r.Parts = 1, 1
	}
	if r.NextAt.IsZero() {
		r.NextAt = r.CreatedAt
	}
	var id int64
	err := tx.queryRow(`INSERT INTO chat_outbox (platform, chat_id, text, buttons, reply_to, part, parts, state, next_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?) RETURNING id`,
		r.Platform, r.ChatID, r.Text, r.Buttons, r.ReplyTo, r.Part, r.Parts, nanos(r.NextAt), nanos(r.CreatedAt)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("queue chat message: %w", err)
	}
	return id, nil
}

// OutboxUnsent returns the rows of platform not yet sent or failed, in
// send order.
func (s *Store) OutboxUnsent(ctx context.Context, platform string) ([]OutboxRow, error) {
	return readAll(ctx, s, "list chat outbox", scanOutbox, `SELECT `+outboxColumns+` FROM chat_outbox WHERE platform = ? AND state IN ('queued', 'sending') ORDER BY id`, platform)
}

// Outbox returns one outbox row or ErrNotFound.
func (s *Store) Outbox(ctx context.Context, id int64) (OutboxRow, error) {
	r, err := scanOutbox(s.readRow(ctx, `SELECT `+outboxColumns+` FROM chat_outbox WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return OutboxRow{}, fmt.Errorf("chat message %d: %w", id, ErrNotFound)
	}
	return r, err
}

// OutboxSending marks row id as being sent (attempts counted): a row
// left sending by a crash is sent again with the same key.
func (tx *Tx) OutboxSending(id int64) error {
	_, err := tx.exec(`UPDATE chat_outbox SET state = 'sending', attempts = attempts + 1 WHERE id = ? AND state IN ('queued', 'sending')`, id)
	if err != nil {
		return fmt.Errorf("chat message %d: %w", id, err)
	}
	return nil
}

// OutboxSent records that the platform took row id as messageID.
func (tx *Tx) OutboxSent(id int64, messageID string, now time.Time) error {
	_, err := tx.exec(`UPDATE chat_outbox SET state = 'sent', message_id = ?, error = '', sent_at = ? WHERE id = ?`, messageID, nanos(now), id)
	if err != nil {
		return fmt.Errorf("chat message %d: %w", id, err)
	}
	return nil
}

// OutboxRetry puts row id back in the queue, due at next, with the error
// (never the text).
func (tx *Tx) OutboxRetry(id int64, next time.Time, errText string) error {
	_, err := tx.exec(`UPDATE chat_outbox SET state = 'queued', next_at = ?, error = ? WHERE id = ?`, nanos(next), errText, id)
	if err != nil {
		return fmt.Errorf("chat message %d: %w", id, err)
	}
	return nil
}

// OutboxFailed gives row id up.
func (tx *Tx) OutboxFailed(id int64, errText string) error {
	_, err := tx.exec(`UPDATE chat_outbox SET state = 'failed', error = ? WHERE id = ?`, errText, id)
	if err != nil {
		return fmt.Errorf("chat message %d: %w", id, err)
	}
	return nil
}

// Pairing is a one-time pairing code (chat_pairings), held as its hash.
type Pairing struct {
	ID       int64
	Platform string
	CodeHash []byte
	// State is open, used (a sender gave the code; waiting for the
	// owner's confirmation), confirmed or refused; exhausted (spent by
	// wrong codes) only in rows written before migration 0023.
	State string
	// Tries counts the wrong codes checked while it was open, every
	// sender's; it no longer spends the code (see AddWrongPairCode).
	Tries                      int
	UsedBy, UsedName, UsedChat string
	CreatedAt, ExpiresAt       time.Time
}

const pairingColumns = `id, platform, code_hash, state, tries, used_by, used_name, used_chat, created_at, expires_at`

func scanPairing(sc interface{ Scan(...any) error }) (Pairing, error) {
	var p Pairing
	var created, expires sql.NullInt64
	err := sc.Scan(&p.ID, &p.Platform, &p.CodeHash, &p.State, &p.Tries, &p.UsedBy, &p.UsedName, &p.UsedChat, &created, &expires)
	p.CreatedAt, p.ExpiresAt = fromNanos(created), fromNanos(expires)
	return p, err
}

// InsertPairing stores a new open pairing and returns its id.
func (tx *Tx) InsertPairing(p Pairing) (int64, error) {
	var id int64
	err := tx.queryRow(`INSERT INTO chat_pairings (platform, code_hash, state, created_at, expires_at) VALUES (?, ?, 'open', ?, ?) RETURNING id`,
		p.Platform, p.CodeHash, nanos(p.CreatedAt), nanos(p.ExpiresAt)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("create pairing: %w", err)
	}
	return id, nil
}

// Pairing returns pairing id or ErrNotFound.
func (s *Store) Pairing(ctx context.Context, id int64) (Pairing, error) {
	p, err := scanPairing(s.readRow(ctx, `SELECT `+pairingColumns+` FROM chat_pairings WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Pairing{}, fmt.Errorf("pairing %d: %w", id, ErrNotFound)
	}
	return p, err
}

// OpenPairings returns platform's open pairings not expired at now.
func (tx *Tx) OpenPairings(platform string, now time.Time) ([]Pairing, error) {
	var out []Pairing
	last := int64(0)
	for {
		p, err := scanPairing(tx.queryRow(`SELECT `+pairingColumns+` FROM chat_pairings WHERE platform = ? AND state = 'open' AND expires_at > ? AND id > ? ORDER BY id LIMIT 1`,
			platform, nanos(now), last))
		if errors.Is(err, sql.ErrNoRows) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read pairings: %w", err)
		}
		out = append(out, p)
		last = p.ID
	}
}

// UpdatePairing writes p's state, tries and user fields.
func (tx *Tx) UpdatePairing(p Pairing) error {
	_, err := tx.exec(`UPDATE chat_pairings SET state = ?, tries = ?, used_by = ?, used_name = ?, used_chat = ? WHERE id = ?`,
		p.State, p.Tries, p.UsedBy, p.UsedName, p.UsedChat, p.ID)
	if err != nil {
		return fmt.Errorf("update pairing %d: %w", p.ID, err)
	}
	return nil
}

// AddWrongPairCode records a wrong pairing code sender sent on platform
// at at (chat_pair_wrong).
func (tx *Tx) AddWrongPairCode(platform, sender string, at time.Time) error {
	if _, err := tx.exec(`INSERT INTO chat_pair_wrong (platform, sender, at) VALUES (?, ?, ?)`, platform, sender, nanos(at)); err != nil {
		return fmt.Errorf("record a wrong pairing code: %w", err)
	}
	return nil
}

// WrongPairCodes counts the wrong pairing codes sender sent on platform at
// or after since; an empty sender counts every sender's.
func (tx *Tx) WrongPairCodes(platform, sender string, since time.Time) (int, error) {
	var n int
	err := tx.queryRow(`SELECT count(*) FROM chat_pair_wrong WHERE platform = ? AND (? = '' OR sender = ?) AND at >= ?`,
		platform, sender, sender, nanos(since)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count wrong pairing codes: %w", err)
	}
	return n, nil
}

// ChatCard is an approval card sent to an owner's direct chat. MessageID
// is its outbox row's, empty until sent.
type ChatCard struct {
	ApprovalID, Platform, ChatID string
	OutboxID                     int64
	HashPrefix                   string
	// State is open, answered (a press answered it) or closed (answered
	// elsewhere or expired; the card was edited to say so).
	State     string
	MessageID string
	CreatedAt time.Time
}

const cardColumns = `c.approval_id, c.platform, c.chat_id, c.outbox_id, c.hash_prefix, c.state, o.message_id, c.created_at`

func scanCard(sc interface{ Scan(...any) error }) (ChatCard, error) {
	var c ChatCard
	var at sql.NullInt64
	err := sc.Scan(&c.ApprovalID, &c.Platform, &c.ChatID, &c.OutboxID, &c.HashPrefix, &c.State, &c.MessageID, &at)
	c.CreatedAt = fromNanos(at)
	return c, err
}

// InsertChatCard records a card; its approval must have no card yet.
func (tx *Tx) InsertChatCard(c ChatCard) error {
	_, err := tx.exec(`INSERT INTO chat_cards (approval_id, platform, chat_id, outbox_id, hash_prefix, state, created_at) VALUES (?, ?, ?, ?, ?, 'open', ?)`,
		c.ApprovalID, c.Platform, c.ChatID, c.OutboxID, c.HashPrefix, nanos(c.CreatedAt))
	if err != nil {
		return fmt.Errorf("record approval card: %w", err)
	}
	return nil
}

// ChatCardOf returns the card of approval id or ErrNotFound.
func (s *Store) ChatCardOf(ctx context.Context, approvalID string) (ChatCard, error) {
	c, err := scanCard(s.readRow(ctx, `SELECT `+cardColumns+` FROM chat_cards c JOIN chat_outbox o ON o.id = c.outbox_id WHERE c.approval_id = ?`, approvalID))
	if errors.Is(err, sql.ErrNoRows) {
		return ChatCard{}, fmt.Errorf("approval card %s: %w", approvalID, ErrNotFound)
	}
	return c, err
}

// OpenChatCards returns platform's open cards, oldest first.
func (s *Store) OpenChatCards(ctx context.Context, platform string) ([]ChatCard, error) {
	return readAll(ctx, s, "list approval cards", scanCard, `SELECT `+cardColumns+` FROM chat_cards c JOIN chat_outbox o ON o.id = c.outbox_id WHERE c.platform = ? AND c.state = 'open' ORDER BY c.created_at`, platform)
}

// SetChatCardState moves the open card of approval id to state; false
// when it was no longer open (another press got there first).
func (tx *Tx) SetChatCardState(approvalID, state string) (bool, error) {
	res, err := tx.exec(`UPDATE chat_cards SET state = ? WHERE approval_id = ? AND state = 'open'`, state, approvalID)
	if err != nil {
		return false, fmt.Errorf("approval card %s: %w", approvalID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
