package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// InboxRow is one chat delivery (chat_inbox). Payload is the delivery as
// JSON, its text redacted; store does not read it.
type InboxRow struct {
	ID         int64
	Platform   string
	Bot        string
	DeliveryID string
	Kind       string
	ChatID     string
	SenderID   string
	Payload    string
	// State is received, running, handled, ignored or interrupted.
	State      string
	Note       string
	ReceivedAt time.Time
}

const inboxColumns = `id, platform, bot, delivery_id, kind, chat_id, sender_id, payload, state, note, received_at`

func scanInbox(sc interface{ Scan(...any) error }) (InboxRow, error) {
	var r InboxRow
	var at sql.NullInt64
	err := sc.Scan(&r.ID, &r.Platform, &r.Bot, &r.DeliveryID, &r.Kind, &r.ChatID, &r.SenderID, &r.Payload, &r.State, &r.Note, &at)
	r.ReceivedAt = fromNanos(at)
	return r, err
}

// InsertInbox saves a delivery in state received, unless one with the
// same (platform, bot, delivery id) is already there: inserted is false
// then, and nothing changes.
func (tx *Tx) InsertInbox(r InboxRow) (inserted bool, err error) {
	res, err := tx.exec(`INSERT INTO chat_inbox (platform, bot, delivery_id, kind, chat_id, sender_id, payload, state, received_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, 'received', ?) ON CONFLICT DO NOTHING`,
		r.Platform, r.Bot, r.DeliveryID, r.Kind, r.ChatID, r.SenderID, r.Payload, nanos(r.ReceivedAt))
	if err != nil {
		return false, fmt.Errorf("save chat delivery: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// InboxByState returns the rows in state, oldest first.
func (s *Store) InboxByState(ctx context.Context, state string) ([]InboxRow, error) {
	return readAll(ctx, s, "list chat inbox", scanInbox, `SELECT `+inboxColumns+` FROM chat_inbox WHERE state = ? ORDER BY id`, state)
}

// Inbox returns one inbox row or ErrNotFound.
func (s *Store) Inbox(ctx context.Context, id int64) (InboxRow, error) {
	r, err := scanInbox(s.readRow(ctx, `SELECT `+inboxColumns+` FROM chat_inbox WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return InboxRow{}, fmt.Errorf("chat delivery %d: %w", id, ErrNotFound)
	}
	return r, err
}

// SetInboxState moves row id from state from to state to, with a note
// (why it was ignored). ErrNotFound when the row is not in from.
func (tx *Tx) SetInboxState(id int64, from, to, note string) error {
	res, err := tx.exec(`UPDATE chat_inbox SET state = ?, note = ? WHERE id = ? AND state = ?`, to, note, id, from)
	if err != nil {
		return fmt.Errorf("chat delivery %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("chat delivery %d is not %s: %w", id, from, ErrNotFound)
	}
	return nil
}

// InterruptRunning marks every row left running (a turn a dead process
// was running) interrupted and returns them: they are never run again.
func (tx *Tx) InterruptRunning() ([]InboxRow, error) {
	var out []InboxRow
	for {
		r, err := scanInbox(tx.queryRow(`SELECT ` + inboxColumns + ` FROM chat_inbox WHERE state = 'running' ORDER BY id LIMIT 1`))
		if errors.Is(err, sql.ErrNoRows) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("interrupt chat turns: %w", err)
		}
		if _, err := tx.exec(`UPDATE chat_inbox SET state = 'interrupted' WHERE id = ?`, r.ID); err != nil {
			return nil, fmt.Errorf("interrupt chat turns: %w", err)
		}
		r.State = "interrupted"
		out = append(out, r)
	}
}

// PruneInbox deletes finished rows received before before (the memory of
// delivery ids must outlast the platforms' redeliveries).
func (tx *Tx) PruneInbox(before time.Time) (int64, error) {
	res, err := tx.exec(`DELETE FROM chat_inbox WHERE received_at < ? AND state IN ('handled', 'ignored', 'interrupted')`, nanos(before))
	if err != nil {
		return 0, fmt.Errorf("prune chat inbox: %w", err)
	}
	return res.RowsAffected()
}

// ChatOwner is a platform account paired as the owner.
type ChatOwner struct {
	Platform, UserID, Name string
	// ChatID is the direct chat the owner paired in ('' for an owner
	// paired before it was recorded).
	ChatID   string
	PairedAt time.Time
}

// AddChatOwner records a confirmed owner (pairing); pairing again updates
// the name.
func (tx *Tx) AddChatOwner(o ChatOwner) error {
	_, err := tx.exec(`INSERT INTO chat_owners (platform, user_id, name, paired_at, chat_id) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (platform, user_id) DO UPDATE SET name = excluded.name, paired_at = excluded.paired_at, chat_id = excluded.chat_id`,
		o.Platform, o.UserID, o.Name, nanos(o.PairedAt), o.ChatID)
	if err != nil {
		return fmt.Errorf("add chat owner: %w", err)
	}
	return nil
}

// IsChatOwner reports whether user is a paired owner on platform.
func (s *Store) IsChatOwner(ctx context.Context, platform, user string) (bool, error) {
	if user == "" {
		return false, nil
	}
	var n int
	if err := s.readRow(ctx, `SELECT count(*) FROM chat_owners WHERE platform = ? AND user_id = ? AND confirmed = 1`, platform, user).Scan(&n); err != nil {
		return false, fmt.Errorf("read chat owners: %w", err)
	}
	return n > 0, nil
}

// ChatOwners lists the owners paired on platform.
func (s *Store) ChatOwners(ctx context.Context, platform string) ([]ChatOwner, error) {
	rows, err := s.readRows(ctx, `SELECT platform, user_id, name, paired_at, chat_id FROM chat_owners WHERE platform = ? AND confirmed = 1 ORDER BY paired_at`, platform)
	if err != nil {
		return nil, fmt.Errorf("read chat owners: %w", err)
	}
	return collect(rows, func(sc interface{ Scan(...any) error }) (ChatOwner, error) {
		var o ChatOwner
		var at sql.NullInt64
		err := sc.Scan(&o.Platform, &o.UserID, &o.Name, &at, &o.ChatID)
		o.PairedAt = fromNanos(at)
		return o, err
	}, "read chat owners")
}

// ChatSession returns the session chat's turns run in; "" when none yet.
func (s *Store) ChatSession(ctx context.Context, platform, chat string) (string, error) {
	var id string
	err := s.readRow(ctx, `SELECT session FROM chat_sessions WHERE platform = ? AND chat_id = ?`, platform, chat).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read chat session: %w", err)
	}
	return id, nil
}

// SetChatSession makes session the one chat's turns run in.
func (tx *Tx) SetChatSession(platform, chat, session string) error {
	_, err := tx.exec(`INSERT INTO chat_sessions (platform, chat_id, session) VALUES (?, ?, ?)
		ON CONFLICT (platform, chat_id) DO UPDATE SET session = excluded.session`, platform, chat, session)
	if err != nil {
		return fmt.Errorf("set chat session: %w", err)
	}
	return nil
}

// ChatInfo is what homard knows about one chat (chat_chats).
type ChatInfo struct {
	Allowed  bool
	LeftAt   time.Time
	NoticeAt time.Time
}

// Chat returns what homard knows about chat; the zero ChatInfo when
// nothing.
func (s *Store) Chat(ctx context.Context, platform, chat string) (ChatInfo, error) {
	return scanChat(s.readRow(ctx, chatQuery, platform, chat))
}

// chatQuery reads a chat's row for scanChat.
const chatQuery = `SELECT allowed, left_at, notice_at FROM chat_chats WHERE platform = ? AND chat_id = ?`

func scanChat(sc interface{ Scan(...any) error }) (ChatInfo, error) {
	var c ChatInfo
	var left, notice sql.NullInt64
	err := sc.Scan(&c.Allowed, &left, &notice)
	if errors.Is(err, sql.ErrNoRows) {
		return ChatInfo{}, nil
	}
	if err != nil {
		return ChatInfo{}, fmt.Errorf("read chat: %w", err)
	}
	c.LeftAt, c.NoticeAt = fromNanos(left), fromNanos(notice)
	return c, nil
}

// SetChatAllowed allows (or stops allowing) a group chat.
func (tx *Tx) SetChatAllowed(platform, chat string, allowed bool) error {
	return tx.setChat("allowed", "allow chat", platform, chat, allowed)
}

// setChat writes v to column (one of chat_chats' own, named by this
// file) of chat's row, made if missing; what names the write in an error.
func (tx *Tx) setChat(column, what, platform, chat string, v any) error {
	_, err := tx.exec(`INSERT INTO chat_chats (platform, chat_id, `+column+`) VALUES (?, ?, ?)
		ON CONFLICT (platform, chat_id) DO UPDATE SET `+column+` = excluded.`+column, platform, chat, v)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// AllowedChats lists the chats allowed with SetChatAllowed on platform.
func (s *Store) AllowedChats(ctx context.Context, platform string) ([]string, error) {
	rows, err := s.readRows(ctx, `SELECT chat_id FROM chat_chats WHERE platform = ? AND allowed = 1 ORDER BY chat_id`, platform)
	if err != nil {
		return nil, fmt.Errorf("list allowed chats: %w", err)
	}
	return collect(rows, func(sc interface{ Scan(...any) error }) (string, error) {
		var id string
		err := sc.Scan(&id)
		return id, err
	}, "list allowed chats")
}

// MarkChatLeft records that the bot left chat at now; first is false when
// it had already left (the notice was posted then).
func (tx *Tx) MarkChatLeft(platform, chat string, now time.Time) (first bool, err error) {
	c, err := scanChat(tx.queryRow(chatQuery, platform, chat))
	if err != nil {
		return false, err
	}
	if !c.LeftAt.IsZero() {
		return false, nil
	}
	if err := tx.setChat("left_at", "mark chat left", platform, chat, nanos(now)); err != nil {
		return false, err
	}
	return true, nil
}

// NoticeDue reports whether a notice may be sent in chat at now (none in
// the last every) and, if so, records it as sent.
func (tx *Tx) NoticeDue(platform, chat string, now time.Time, every time.Duration) (bool, error) {
	c, err := scanChat(tx.queryRow(chatQuery, platform, chat))
	if err != nil {
		return false, err
	}
	if !c.NoticeAt.IsZero() && now.Sub(c.NoticeAt) < every {
		return false, nil
	}
	if err := tx.setChat("notice_at", "record chat notice", platform, chat, nanos(now)); err != nil {
		return false, err
	}
	return true, nil
}

// ChannelState is a channel as `homard serve` last saw it.
type ChannelState struct {
	Platform, BotID, BotName, State, LastError string
	UpdatedAt                                  time.Time
}

// SetChannelState records a channel's state.
func (tx *Tx) SetChannelState(c ChannelState) error {
	_, err := tx.exec(`INSERT INTO chat_channels (platform, bot_id, bot_name, state, last_error, updated_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (platform) DO UPDATE SET bot_id = CASE WHEN excluded.bot_id = '' THEN chat_channels.bot_id ELSE excluded.bot_id END,
		bot_name = CASE WHEN excluded.bot_name = '' THEN chat_channels.bot_name ELSE excluded.bot_name END,
		state = excluded.state, last_error = excluded.last_error, updated_at = excluded.updated_at`,
		c.Platform, c.BotID, c.BotName, c.State, c.LastError, nanos(c.UpdatedAt))
	if err != nil {
		return fmt.Errorf("record channel state: %w", err)
	}
	return nil
}

// ChannelStates returns every recorded channel state by platform.
func (s *Store) ChannelStates(ctx context.Context) (map[string]ChannelState, error) {
	rows, err := s.readRows(ctx, `SELECT platform, bot_id, bot_name, state, last_error, updated_at FROM chat_channels`)
	if err != nil {
		return nil, fmt.Errorf("read channel states: %w", err)
	}
	defer rows.Close()
	out := map[string]ChannelState{}
	for rows.Next() {
		var c ChannelState
		var at sql.NullInt64
		if err := rows.Scan(&c.Platform, &c.BotID, &c.BotName, &c.State, &c.LastError, &at); err != nil {
			return nil, fmt.Errorf("read channel states: %w", err)
		}
		c.UpdatedAt = fromNanos(at)
		out[c.Platform] = c
	}
	return out, rows.Err()
}

// OwnerChat is the direct chat to reach owner o on o.Platform in: the
// chat they paired in, else the chat of their latest message homard
// answered as the owner's, else "" (the caller says it has none).
func (s *Store) OwnerChat(ctx context.Context, o ChatOwner) (string, error) {
	if o.ChatID != "" {
		return o.ChatID, nil
	}
	var chat string
	err := s.readRow(ctx, `SELECT chat_id FROM chat_inbox WHERE platform = ? AND sender_id = ? AND note = 'owner'
		ORDER BY id DESC LIMIT 1`, o.Platform, o.UserID).Scan(&chat)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("owner chat: %w", err)
	}
	return chat, nil
}
