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
}

// ChatSettings returns chat's settings; the zero value when none were set.
func (s *Store) ChatSettings(ctx context.Context, platform, chat string) (ChatSettings, error) {
	var c ChatSettings
	err := s.readRow(ctx, `SELECT max_calls, tools_off FROM chat_settings WHERE platform = ? AND chat_id = ?`, platform, chat).
		Scan(&c.MaxCalls, &c.ToolsOff)
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
