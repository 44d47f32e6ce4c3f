package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestInboxOncePerDelivery(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0).UTC()
	row := InboxRow{Platform: "telegram", Bot: "1", DeliveryID: "42", Kind: "message", ChatID: "7", SenderID: "7", Payload: "{}", ReceivedAt: now}
	for i, want := range []bool{true, false, false} {
		var got bool
		if err := s.Write(ctx, func(tx *Tx) (err error) { got, err = tx.InsertInbox(row); return err }); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("InsertInbox #%d = %v; want %v (same delivery id)", i+1, got, want)
		}
	}
	// The twin: another bot's delivery with the same id is its own row.
	other := row
	other.Bot = "2"
	var got bool
	if err := s.Write(ctx, func(tx *Tx) (err error) { got, err = tx.InsertInbox(other); return err }); err != nil || !got {
		t.Errorf("InsertInbox(other bot) = %v, %v; want inserted", got, err)
	}
	rows, err := s.InboxByState(ctx, "received")
	if err != nil || len(rows) != 2 {
		t.Fatalf("InboxByState(received) = %d rows, %v; want 2", len(rows), err)
	}
	// A running row becomes interrupted, never received again.
	err = s.Write(ctx, func(tx *Tx) error {
		if err := tx.SetInboxState(rows[0].ID, "received", "running", ""); err != nil {
			return err
		}
		if err := tx.SetInboxState(rows[0].ID, "received", "running", ""); !errors.Is(err, ErrNotFound) {
			t.Errorf("SetInboxState twice = %v; want ErrNotFound", err)
		}
		got, err := tx.InterruptRunning()
		if len(got) != 1 || got[0].ID != rows[0].ID {
			t.Errorf("InterruptRunning = %+v; want row %d", got, rows[0].ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Pruning keeps recent rows and never an unfinished one.
	var n int64
	if err := s.Write(ctx, func(tx *Tx) (err error) { n, err = tx.PruneInbox(now.Add(time.Hour)); return err }); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("PruneInbox = %d; want 1 (the interrupted row; the received one stays)", n)
	}
}

func TestOutboxAndCards(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0).UTC()
	var ids []int64
	err := s.Write(ctx, func(tx *Tx) error {
		for i := 1; i <= 2; i++ {
			id, err := tx.InsertOutbox(OutboxRow{Platform: "telegram", ChatID: "7", Text: "part", Part: i, Parts: 2, CreatedAt: now})
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return tx.InsertChatCard(ChatCard{ApprovalID: "ap1", Platform: "telegram", ChatID: "7", OutboxID: ids[1], HashPrefix: "0123456789ab", CreatedAt: now})
	})
	if err != nil {
		t.Fatal(err)
	}
	unsent, err := s.OutboxUnsent(ctx, "telegram")
	if err != nil || len(unsent) != 2 || unsent[0].ID != ids[0] {
		t.Fatalf("OutboxUnsent = %+v, %v; want rows %v in order", unsent, err, ids)
	}
	err = s.Write(ctx, func(tx *Tx) error {
		if err := tx.OutboxSending(ids[1]); err != nil {
			return err
		}
		return tx.OutboxSent(ids[1], "m-99", now)
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.ChatCardOf(ctx, "ap1")
	if err != nil || c.MessageID != "m-99" || c.State != "open" {
		t.Fatalf("ChatCardOf = %+v, %v; want message m-99, open", c, err)
	}
	for i, want := range []bool{true, false} {
		var ok bool
		if err := s.Write(ctx, func(tx *Tx) (err error) { ok, err = tx.SetChatCardState("ap1", "answered"); return err }); err != nil {
			t.Fatal(err)
		}
		if ok != want {
			t.Errorf("SetChatCardState #%d = %v; want %v", i+1, ok, want)
		}
	}
}
