package store

import (
	"context"
	"testing"
)

// TestChatLang: a chat's language code is recorded on its own (a new
// chat gets no cap and tools on), kept when /budget and /tools change
// the other settings, and read inside a transaction; a chat never given
// one has none.
func TestChatLang(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	if err := s.Write(ctx, func(tx *Tx) error { return tx.SetChatLang("telegram", "42", "zh-hans") }); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ChatSettings(ctx, "telegram", "42"); err != nil || got != (ChatSettings{Lang: "zh-hans"}) {
		t.Errorf("after SetChatLang: %+v, %v; want only the language set", got, err)
	}
	err := s.Write(ctx, func(tx *Tx) error {
		return tx.SetChatSettings("telegram", "42", ChatSettings{MaxCalls: 3, ToolsOff: true})
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ChatSettings(ctx, "telegram", "42"); got != (ChatSettings{MaxCalls: 3, ToolsOff: true, Lang: "zh-hans"}) {
		t.Errorf("after SetChatSettings: %+v; want the language kept", got)
	}
	var inTx, none string
	err = s.Write(ctx, func(tx *Tx) (err error) {
		if inTx, err = tx.ChatLang("telegram", "42"); err != nil {
			return err
		}
		none, err = tx.ChatLang("telegram", "43")
		return err
	})
	if err != nil || inTx != "zh-hans" || none != "" {
		t.Errorf("ChatLang = %q and %q, %v; want zh-hans and nothing", inTx, none, err)
	}
}
