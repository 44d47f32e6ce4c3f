package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestPruneChatState: with a fake clock at now and the cutoffs the core
// uses (30 days for the outbox and cards, 1 day for pairing codes), the old
// finished rows go and every row someone may still need stays: an unsent
// part, a recent part, a part an old-but-live card holds, an open card of a
// pending approval, a recent card, a live or recently finished code.
func TestPruneChatState(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0).UTC()
	old := now.Add(-31 * 24 * time.Hour)
	recent := now.Add(-29 * 24 * time.Hour)
	day := 24 * time.Hour

	// Outbox rows by name, so the test can say which survived.
	type part struct {
		name, state string
		at          time.Time
	}
	parts := []part{
		{"old-sent", "sent", old},
		{"old-failed", "failed", old},
		{"old-queued", "queued", old},
		{"old-sending", "sending", old},
		{"recent-sent", "sent", recent},
		{"old-sent-live-card", "sent", old},
		{"old-sent-decided-card", "sent", old},
		{"recent-card", "sent", recent},
		{"old-sent-closed-card", "sent", old},
		{"old-sent-lost-approval", "sent", old},
		{"old-sent-stale-approval", "sent", old},
	}
	ids := map[string]int64{}
	write(t, s, func(tx *Tx) error {
		for _, p := range parts {
			id, err := tx.InsertOutbox(OutboxRow{Platform: "telegram", ChatID: "100", Text: p.name, CreatedAt: p.at})
			if err != nil {
				return err
			}
			ids[p.name] = id
			switch p.state {
			case "sent":
				err = tx.OutboxSent(id, "m", p.at)
			case "failed":
				err = tx.OutboxFailed(id, "gave up")
			case "sending":
				err = tx.OutboxSending(id)
			}
			if err != nil {
				return err
			}
		}
		if err := tx.EnsureSession("telegram-100", "alice", old); err != nil {
			return err
		}
		for _, a := range []Approval{
			// Pending, and a 40-day lifetime: its card must stay.
			{ID: "ap_live", Status: "pending", ExpiresAt: now.Add(10 * day)},
			{ID: "ap_decided", Status: "denied", ExpiresAt: old.Add(time.Hour)},
			{ID: "ap_recent", Status: "approved", ExpiresAt: recent.Add(time.Hour)},
			{ID: "ap_closed", Status: "pending", ExpiresAt: now.Add(10 * day)},
			// Never decided, long expired.
			{ID: "ap_stale", Status: "pending", ExpiresAt: old.Add(time.Hour)},
		} {
			a.SessionID, a.Tool, a.PlanHash, a.Owner, a.Display, a.Plan, a.CreatedAt = "telegram-100", "write_file", "sha256:00", "alice", "plan", []byte("{}"), old
			if err := tx.InsertApproval(a); err != nil {
				return err
			}
		}
		for _, c := range []struct {
			approval, part, state string
			at                    time.Time
		}{
			{"ap_live", "old-sent-live-card", "open", old},
			{"ap_decided", "old-sent-decided-card", "open", old},
			{"ap_recent", "recent-card", "answered", recent},
			{"ap_closed", "old-sent-closed-card", "closed", old},
			{"ap_gone", "old-sent-lost-approval", "open", old},
			{"ap_stale", "old-sent-stale-approval", "open", old},
		} {
			if err := tx.InsertChatCard(ChatCard{ApprovalID: c.approval, Platform: "telegram", ChatID: "100", OutboxID: ids[c.part], HashPrefix: "0123456789ab", CreatedAt: c.at}); err != nil {
				return err
			}
			if c.state != "open" {
				if _, err := tx.SetChatCardState(c.approval, c.state); err != nil {
					return err
				}
			}
		}
		for i, p := range []struct {
			state            string
			created, expires time.Time
		}{
			{"open", now.Add(-5 * time.Minute), now.Add(5 * time.Minute)},                    // live
			{"used", now.Add(-5 * time.Minute), now.Add(5 * time.Minute)},                    // waiting for the owner
			{"confirmed", now.Add(-2 * time.Hour), now.Add(-2 * time.Hour)},                  // finished today
			{"open", now.Add(-2 * day), now.Add(-2*day + 10*time.Minute)},                    // expired unused
			{"used", now.Add(-2 * day), now.Add(-2*day + 10*time.Minute)},                    // used, never confirmed
			{"confirmed", now.Add(-2 * day), now.Add(-2*day + 10*time.Minute)},               // finished long ago
			{"exhausted", now.Add(-25 * time.Hour), now.Add(-25*time.Hour + 10*time.Minute)}, // too many tries
		} {
			id, err := tx.InsertPairing(Pairing{Platform: "telegram", CodeHash: hash32(byte(i)), CreatedAt: p.created, ExpiresAt: p.expires})
			if err != nil {
				return err
			}
			if err := tx.UpdatePairing(Pairing{ID: id, State: p.state}); err != nil {
				return err
			}
		}
		// Wrong pairing codes: one sent during today's pairing, one two
		// days ago.
		for _, at := range []time.Time{now.Add(-5 * time.Minute), now.Add(-2 * day)} {
			if err := tx.AddWrongPairCode("telegram", "300", at); err != nil {
				return err
			}
		}
		return nil
	})

	var got ChatPruned
	write(t, s, func(tx *Tx) (err error) {
		got, err = tx.PruneChatState(now.Add(-30*day), now.Add(-30*day), now.Add(-day))
		return err
	})
	if want := (ChatPruned{Outbox: 6, Cards: 4, Pairings: 4, WrongPairCodes: 1}); got != want {
		t.Errorf("PruneChatState = %+v; want %+v", got, want)
	}
	var kept []string
	for _, p := range parts {
		_, err := s.Outbox(ctx, ids[p.name])
		switch {
		case err == nil:
			kept = append(kept, p.name)
		case !errors.Is(err, ErrNotFound):
			t.Fatalf("Outbox(%s): %v", p.name, err)
		}
	}
	if want := []string{"old-queued", "old-sending", "recent-sent", "old-sent-live-card", "recent-card"}; !slices.Equal(kept, want) {
		t.Errorf("outbox rows kept = %q; want %q", kept, want)
	}
	var cards []string
	for _, a := range []string{"ap_live", "ap_decided", "ap_recent", "ap_closed", "ap_gone", "ap_stale"} {
		if _, err := s.ChatCardOf(ctx, a); err == nil {
			cards = append(cards, a)
		}
	}
	if want := []string{"ap_live", "ap_recent"}; !slices.Equal(cards, want) {
		t.Errorf("cards kept = %q; want %q", cards, want)
	}
	var states []string
	rows, err := s.readRows(ctx, `SELECT state FROM chat_pairings ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var st string
		if err := rows.Scan(&st); err != nil {
			t.Fatal(err)
		}
		states = append(states, st)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if want := []string{"open", "used", "confirmed"}; !slices.Equal(states, want) {
		t.Errorf("pairings kept = %q; want %q (the live ones and today's)", states, want)
	}

	// Pruning again finds nothing more: the kept rows are not "old enough
	// later" by accident.
	write(t, s, func(tx *Tx) (err error) {
		got, err = tx.PruneChatState(now.Add(-30*day), now.Add(-30*day), now.Add(-day))
		return err
	})
	if got != (ChatPruned{}) {
		t.Errorf("second PruneChatState = %+v; want nothing", got)
	}
}

// hash32 is a distinct 32-byte code hash.
func hash32(b byte) []byte {
	h := make([]byte, 32)
	h[0] = b + 1
	return h
}
