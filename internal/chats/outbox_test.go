package chats

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/chat"
	"github.com/homard/homard/internal/store"
)

// TestChatsPrune: the core's periodic prune deletes an old sent reply part
// and a pairing code that expired days ago, and keeps a queued part of the
// same age (a restart must still deliver it) and a live code.
func TestChatsPrune(t *testing.T) {
	rig := newChatRig(t)
	rig.stop() // prune is called directly below, on a fake clock
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0).UTC()
	rig.setNow(now)
	old := now.Add(-40 * 24 * time.Hour)
	var sent, queued, stale, live int64
	err := rig.st.Write(ctx, func(tx *store.Tx) error {
		var err error
		if sent, err = tx.InsertOutbox(store.OutboxRow{Platform: chat.Telegram, ChatID: "100", Text: "old", CreatedAt: old}); err != nil {
			return err
		}
		if err := tx.OutboxSent(sent, "m1", old); err != nil {
			return err
		}
		if queued, err = tx.InsertOutbox(store.OutboxRow{Platform: chat.Telegram, ChatID: "100", Text: "unsent", CreatedAt: old}); err != nil {
			return err
		}
		if stale, err = tx.InsertPairing(store.Pairing{Platform: chat.Telegram, CodeHash: make([]byte, 32), CreatedAt: old, ExpiresAt: old.Add(10 * time.Minute)}); err != nil {
			return err
		}
		live, err = tx.InsertPairing(store.Pairing{Platform: chat.Telegram, CodeHash: append(make([]byte, 31), 1), CreatedAt: now, ExpiresAt: now.Add(10 * time.Minute)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	rig.c.prune(ctx)
	for _, tc := range []struct {
		what string
		err  error
		gone bool
	}{
		{"old sent part", outboxErr(rig.st, sent), true},
		{"old queued part", outboxErr(rig.st, queued), false},
		{"expired pairing", pairingErr(rig.st, stale), true},
		{"live pairing", pairingErr(rig.st, live), false},
	} {
		if gone := errors.Is(tc.err, store.ErrNotFound); gone != tc.gone || (!gone && tc.err != nil) {
			t.Errorf("%s after prune: err %v; want deleted %v", tc.what, tc.err, tc.gone)
		}
	}
}

func outboxErr(st *store.Store, id int64) error {
	_, err := st.Outbox(context.Background(), id)
	return err
}

func pairingErr(st *store.Store, id int64) error {
	_, err := st.Pairing(context.Background(), id)
	return err
}
