package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ChatSettings is what an owner set for one chat's next turns (/budget,
// /tools); the zero value is no setting.
type ChatSettings struct {
	MaxCalls int  // at most this many tool calls a turn; 0: agent.max_calls alone
	ToolsOff bool // no tool offered
	// Lang is the platform's language code of the chat's last delivery
	// that carried one ("zh-hans"); empty when none did. SetChatLang
	// sets it; SetChatSettings leaves it as it is.
	Lang string
}

// ChatSettings returns chat's settings; the zero value when none were set.
func (s *Store) ChatSettings(ctx context.Context, platform, chat string) (ChatSettings, error) {
	var c ChatSettings
	err := s.readRow(ctx, `SELECT max_calls, tools_off, lang FROM chat_settings WHERE platform = ? AND chat_id = ?`, platform, chat).
		Scan(&c.MaxCalls, &c.ToolsOff, &c.Lang)
	if errors.Is(err, sql.ErrNoRows) {
		return ChatSettings{}, nil
	}
	if err != nil {
		return ChatSettings{}, fmt.Errorf("read chat settings: %w", err)
	}
	return c, nil
}

// SetChatSettings replaces chat's settings.
func (tx *Tx) SetChatSettings(platform, chat string, c ChatSettings) error {
	_, err := tx.exec(`INSERT INTO chat_settings (platform, chat_id, max_calls, tools_off) VALUES (?, ?, ?, ?)
		ON CONFLICT (platform, chat_id) DO UPDATE SET max_calls = excluded.max_calls, tools_off = excluded.tools_off`,
		platform, chat, c.MaxCalls, c.ToolsOff)
	if err != nil {
		return fmt.Errorf("set chat settings: %w", err)
	}
	return nil
}

// SetChatLang records the language code a chat's delivery carried; the
// chat's other settings stay as they are. A code longer than 35 bytes
// (no IETF tag is) is cut.
func (tx *Tx) SetChatLang(platform, chat, lang string) error {
	if len(lang) > 35 {
		lang = lang[:35]
	}
	_, err := tx.exec(`INSERT INTO chat_settings (platform, chat_id, lang) VALUES (?, ?, ?)
		ON CONFLICT (platform, chat_id) DO UPDATE SET lang = excluded.lang`, platform, chat, lang)
	if err != nil {
		return fmt.Errorf("set chat language: %w", err)
	}
	return nil
}

// ChatLang is the language code recorded for chat inside tx; empty when
// none was.
func (tx *Tx) ChatLang(platform, chat string) (string, error) {
	var l string
	err := tx.queryRow(`SELECT lang FROM chat_settings WHERE platform = ? AND chat_id = ?`, platform, chat).Scan(&l)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read chat language: %w", err)
	}
	return l, nil
}
